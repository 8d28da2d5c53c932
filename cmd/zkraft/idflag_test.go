package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/zkraft/zkraft/server"
)

// TestIDFlagRange: --id outside 1..255 is refused, not wrapped to
// another member's id (257 was member 1).
func TestIDFlagRange(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want string // error text, "" for none
	}{{"1", ""}, {"255", ""}, {"0", "a server id is 1 to 255"}, {"256", "a server id is 1 to 255"}, {"257", "a server id is 1 to 255"}} {
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
