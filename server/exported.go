package server

import (
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
)

// The pieces of a configuration the command line's other commands read
// (import-zookeeper, rejoin, snapshot, migrate follow): they take a
// server's zoo.cfg and flags as the server does, and some settle less of
// it than Load.

// ApplyZooFile overlays the zoo.cfg at path on s, as Load does, logging
// unknown keys to log (nil: not at all), and returns its raw values.
func (s *Config) ApplyZooFile(path string, log *zap.Logger) (map[string]string, error) {
	if log == nil {
		log = zap.NewNop()
	}
	cfg, err := loadZooConfig(path)
	if err != nil {
		return nil, err
	}
	if err := s.applyZooConfig(cfg, log); err != nil {
		return nil, err
	}
	return cfg.values, nil
}

// ZooValues are the raw key=value pairs of the zoo.cfg at path.
func ZooValues(path string) (map[string]string, error) {
	cfg, err := loadZooConfig(path)
	if err != nil {
		return nil, err
	}
	return cfg.values, nil
}

// ApplyFlags overlays the flags the user gave on s, as Load does.
func (s *Config) ApplyFlags(f Flags) error { return s.applyFlags(f) }

// ResolveMembers settles the membership and this server's id, as Load
// does.
func (s *Config) ResolveMembers(f Flags) error { return s.resolveMembers(f) }

// SetID sets this server's id as --id does (the data directory's myid
// is then not read).
func (s *Config) SetID(id int64) { s.ServerID, s.idSet = id, true }

// Peers are the members, ordered by id, as the member takes them.
func (s *Config) Peers() []backend.Peer { return sortPeers(s.Members) }

// LockDirs takes the locks a server holds on its data directory (and its
// log directory when apart), so that no two processes write one; unlock
// releases them. A server, an import or a rejoin holds them while it
// writes.
func LockDirs(s Config) (unlock func(), err error) {
	var unlocks []func()
	unlock = func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, dir := range lockDirs(s) {
		u, err := lockDataDir(dir)
		if err != nil {
			unlock()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return unlock, nil
}

// ParseMemberLine reads a server.N line as zoo.cfg and reconfig take it.
func ParseMemberLine(key, value string) (backend.Peer, error) { return parseMemberLine(key, value) }

// LockDir takes the lock a server holds on one data directory (LockDirs).
func LockDir(dir string) (unlock func(), err error) { return lockDataDir(dir) }
