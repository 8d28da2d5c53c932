package cluster

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestCuratorSurvivesMemberKill connects Apache Curator to a three-process
// ensemble with an ephemeral PersistentNode, a LeaderLatch and a counter,
// kills -9 the member its session is connected to, and expects what a
// service on Curator needs: a reconnect to another member within the
// session (RECONNECTED, never LOST), its ephemeral and its leadership
// kept, and writes working (procs.RunCuratorFailover).
func TestCuratorSurvivesMemberKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes and a JVM")
	}
	procs.JavaTools(t) // skips without Java, before anything starts
	members := procs.StartEnsemble(t, 3)
	procs.LeaderOf(t, members, nil)
	procs.RunCuratorFailover(t, strings.Join(procs.ClientAddrs(members), ","), func(session string) {
		// The member holding the session's connection lists it in cons.
		var held *procs.Member
		for _, m := range members {
			if strings.Contains(fourletter.Ask(m.ClientAddr, "cons"), "sid=0x"+session) {
				held = m
			}
		}
		if held == nil {
			t.Fatalf("no member lists session 0x%s", session)
		}
		role := held.Mode()
		held.Kill()
		t.Logf("killed member %d (%s), which held session 0x%s", held.ID, role, session)
	})
}
