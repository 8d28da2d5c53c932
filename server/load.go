package server

import (
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"
)

// Load is a server's configuration as the server command reads it:
// DefaultConfig, then the zoo.cfg at configPath (none when ""), then the
// flags the user gave (f: the settings table's flags; nil for none), then
// the membership settled (--peers over server.N lines, the id from --id
// or dataDir/myid) and every setting checked. Unknown zoo.cfg keys are
// logged, never fatal, so an operator's existing file works unchanged.
func Load(configPath string, f Flags, log *zap.Logger) (Config, error) {
	if f == nil {
		f = noFlags{}
	}
	st := DefaultConfig()
	if configPath != "" {
		cfg, err := loadZooConfig(configPath)
		if err != nil {
			return Config{}, err
		}
		text, err := os.ReadFile(configPath)
		if err != nil {
			return Config{}, fmt.Errorf("read config: %w", err)
		}
		st.ConfigPath, st.InitialConfig = configPath, string(text)
		if cfg.values["dataDir"] == "" && !f.IsSet("data-dir") {
			// ZooKeeper refuses it too, rather than start on a directory
			// the operator did not choose (here --data-dir may choose it).
			return Config{}, fmt.Errorf("%s: dataDir is not set", configPath)
		}
		if err := st.applyZooConfig(cfg, log); err != nil {
			return Config{}, err
		}
	}
	if err := st.applyFlags(f); err != nil {
		return Config{}, err
	}
	if err := st.resolveMembers(f); err != nil {
		return Config{}, err
	}
	if err := st.checkConsole(); err != nil {
		return Config{}, err
	}
	if err := st.checkSessionTimeouts(); err != nil {
		return Config{}, err
	}
	return st, nil
}

// checkSessionTimeouts refuses a minSessionTimeout above maxSessionTimeout,
// as ZooKeeper's QuorumPeerConfig does, each bound taken as it applies
// (unset or not positive: 2 and 20 ticks). Left through, every client's
// timeout would be the maximum, below the minimum the operator asked for.
func (s *Config) checkSessionTimeouts() error {
	tick := s.TickTime
	if tick <= 0 {
		tick = 2 * time.Second
	}
	lo, hi := s.MinSessionTimeout, s.MaxSessionTimeout
	if lo <= 0 {
		lo = 2 * tick
	}
	if hi <= 0 {
		hi = 20 * tick
	}
	if lo > hi {
		return fmt.Errorf("minSessionTimeout (%v) must not be larger than maxSessionTimeout (%v)", lo, hi)
	}
	return nil
}

// noFlags is a command line without flags.
type noFlags struct{}

func (noFlags) IsSet(string) bool    { return false }
func (noFlags) String(string) string { return "" }
func (noFlags) Bool(string) bool     { return false }
func (noFlags) Int(string) int       { return 0 }
func (noFlags) Uint(string) uint     { return 0 }
