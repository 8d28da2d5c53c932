package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/zkraft/zkraft/server"
)

// TestIDFlagRange: --id takes every id ZooKeeper's myid does (a Java
// long: 0, 300, negative), whole (257 is not member 1), and refuses -1
// (ZooKeeper's unset id) and what is not a long.
func TestIDFlagRange(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want string // error text, "" for none
	}{
		{"1", ""}, {"255", ""}, {"0", ""}, {"256", ""}, {"257", ""}, {"300", ""}, {"-5", ""},
		{"9223372036854775807", ""},
		{"-1", "unset id"}, {"x", "want a whole number"}, {"1.5", "want a whole number"},
		{"9223372036854775808", "want a whole number"}, {"99999999999999999999", "want a whole number"},
	} {
		var st server.Config
		var err error
		app := &cli.App{Flags: serverFlags(), Action: func(c *cli.Context) error {
			st = server.DefaultConfig()
			err = st.ApplyFlags(c)
			return nil
		}}
		if rerr := app.Run([]string{"zkraft", "--id", tc.arg}); rerr != nil {
			t.Fatal(rerr)
		}
		switch {
		case tc.want == "" && (err != nil || fmt.Sprint(st.ServerID) != tc.arg):
			t.Errorf("--id %s: %v, id %d", tc.arg, err, st.ServerID)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("--id %s: %v (id %d), want %q", tc.arg, err, st.ServerID, tc.want)
		}
	}
}
