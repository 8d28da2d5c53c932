package server

import (
	"fmt"
	"strings"
	"time"
)

// setting is one server setting: the flag that sets it, the zoo.cfg keys
// (and ZooKeeper's -D system properties, which zoo.cfg also takes) that
// set it, its default, its topic and its help. serverSettings is the one
// table the server command's flags, applyZooConfig, applyFlags, --help's
// groups, the unknown-key suggestions and the configuration reference in
// docs/operations.md are made from (TestSettingsReference keeps the
// reference equal to it).
type setting struct {
	Flag string   // the server command's --flag; "" for zoo.cfg only
	Kind FlagKind // how the flag's value is read
	// Keys are the zoo.cfg keys. Props are the ones also taken as
	// ZooKeeper's system property spelling, "zookeeper.<key>".
	Keys, Props []string
	Value       string // the flag's default value, as urfave parses it
	Default     string // the default as the reference states it; "" = Value
	Topic       string // the --help group and the reference's section
	Help        string // one line for --help and the reference

	// ptr is the Config field a flag of Kind sets (nil: the flag is
	// read where it is used, or by apply).
	ptr func(s *Config) any
	// apply sets a flag whose value is not just its field.
	apply func(s *Config, c Flags) error
	// check validates the field after the flag set it.
	check func(s *Config) error
	// zoo applies one of Keys (in its plain spelling) from zoo.cfg; nil:
	// the keys are accepted and have no effect here.
	zoo func(s *Config, z *zooParts, key, v string) error
}

// zooParts collects zoo.cfg keys that only make a setting together
// (clientPort with clientPortAddress, the AdminServer's three keys...);
// applyZooConfig settles them once every key is read.
type zooParts struct {
	clientPort, clientAddr   string
	securePort, secureAddr   string
	metricsHost, metricsPort string
	adminOn                  bool
	adminHost, adminPort     string
}

// The server's setting topics, in the order --help and the reference
// list them.
const (
	catNetwork       = "Network"
	catStorage       = "Storage"
	catEnsemble      = "Ensemble"
	catSessions      = "Sessions"
	catSecurity      = "Security"
	catLimits        = "Limits"
	catZnodes        = "Znodes"
	catObservability = "Observability"
	catIgnored       = "Accepted and ignored"
)

var settingTopics = []string{catNetwork, catStorage, catEnsemble, catSessions, catSecurity, catLimits,
	catZnodes, catObservability, catIgnored}

// containsZooCfg reports whether a setting's help names its zoo.cfg key
// already.
func containsZooCfg(help string) bool { return strings.Contains(help, "zoo.cfg ") }

// applyFlags overlays the flags the user set explicitly. Duration flags
// take milliseconds, as zoo.cfg does, or a Go duration ("2s").
func (s *Config) applyFlags(c Flags) error {
	for i := range serverSettings {
		st := &serverSettings[i]
		if st.Flag == "" || !c.IsSet(st.Flag) {
			continue
		}
		if err := st.applyFlag(s, c); err != nil {
			return fmt.Errorf("--%s: %w", st.Flag, err)
		}
	}
	return nil
}

func (st *setting) applyFlag(s *Config, c Flags) error {
	if st.apply != nil {
		return st.apply(s, c)
	}
	if st.ptr == nil {
		return nil
	}
	switch p := st.ptr(s).(type) {
	case *string:
		*p = c.String(st.Flag)
	case *bool:
		*p = c.Bool(st.Flag)
	case *int:
		*p = c.Int(st.Flag)
	case *time.Duration:
		d, err := millisOrDuration(c.String(st.Flag))
		if err != nil {
			return err
		}
		*p = d
	default:
		return fmt.Errorf("setting --%s: field of type %T", st.Flag, p)
	}
	if st.check != nil {
		return st.check(s)
	}
	return nil
}

// zooKeyIndex maps each zoo.cfg key (and "zookeeper."-prefixed property)
// of serverSettings to its setting and the key's plain spelling.
var zooKeyIndex = func() map[string]zooKey {
	idx := map[string]zooKey{}
	for i := range serverSettings {
		st := &serverSettings[i]
		for _, k := range st.Keys {
			idx[k] = zooKey{st, k}
		}
		for _, k := range st.Props {
			idx["zookeeper."+k] = zooKey{st, k}
		}
	}
	return idx
}()

// zooKey is a zoo.cfg key's setting and the spelling its zoo function takes.
type zooKey struct {
	setting *setting
	key     string
}

// settingKeys lists every zoo.cfg key the table knows, for suggesting one
// in place of an unknown key.
func settingKeys() []string {
	var keys []string
	for i := range serverSettings {
		keys = append(keys, serverSettings[i].Keys...)
	}
	return keys
}
