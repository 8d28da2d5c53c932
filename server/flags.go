package server

// Flags are the command line's values, as the server command's flags
// (made from the settings table: FlagSpecs) hold them. urfave/cli's
// *cli.Context is one; the server reads nothing else of the command line.
type Flags interface {
	// IsSet reports whether the flag was given.
	IsSet(name string) bool
	String(name string) string
	Bool(name string) bool
	Int(name string) int
	Uint(name string) uint
}

// FlagKind is how a setting's flag value is read.
type FlagKind int

// The flag kinds.
const (
	FlagText     FlagKind = iota // a string
	FlagBool                     // a switch
	FlagInt                      // a decimal integer
	FlagUint                     // a non-negative integer
	FlagDuration                 // milliseconds, as zoo.cfg, or a Go duration ("2s")
)

// FlagSpec is one flag of the server command, as the settings table
// defines it: the command line binds it (cmd/zkraft).
type FlagSpec struct {
	Name  string
	Kind  FlagKind
	Value string // the default value, as the flag parses it
	Usage string // one line of help, naming the zoo.cfg key
	Topic string // the --help group
}

// FlagSpecs are the server command's flags from the settings table, in
// its order; Topics orders their groups.
func FlagSpecs() []FlagSpec {
	var out []FlagSpec
	for i := range serverSettings {
		st := &serverSettings[i]
		if st.Flag == "" {
			continue
		}
		usage := st.Help
		if keys := st.Keys; len(keys) > 0 && !containsZooCfg(usage) {
			usage += " (zoo.cfg " + keys[0] + ")"
		}
		out = append(out, FlagSpec{Name: st.Flag, Kind: st.Kind, Value: st.Value, Usage: usage, Topic: st.Topic})
	}
	return out
}

// Topics are the settings' topics, in the order --help lists them.
func Topics() []string { return append([]string(nil), settingTopics...) }
