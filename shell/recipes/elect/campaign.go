package elect

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/shell/recipes/lock"
)

// Options are zkraft elect's settings when it campaigns.
type Options struct {
	// Dial opens the session, passing its events to onEvent.
	Dial     func(sessionTimeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error)
	Path     string
	Proposal string   // the node's data: the participant id
	Cmd      []string // empty: lead until stdin ends or a signal arrives
	// Kazoo names the node as kazoo's Election does, not as Curator's
	// LeaderLatch does.
	Kazoo bool
	// Timeout bounds the wait for leadership (0: none); SessionTimeout is
	// the session's; Grace is CMD's time between SIGTERM and SIGKILL.
	Timeout, SessionTimeout, Grace time.Duration
	JSON                           bool
	Stdin                          io.Reader
	Stdout, Stderr                 io.Writer
}

// Campaign waits to lead, prints that it leads (on Stderr when CMD runs,
// else on Stdout), runs CMD or holds, and gives up leadership. It
// returns the exit status as lock.Run does: CMD's, lock.ExitFailed,
// lock.ExitLost or lock.ExitTimeout.
func Campaign(o Options) (int, error) {
	prefix := lock.CuratorPrefix("latch-")
	if o.Kazoo {
		prefix = lock.KazooPrefix()
	}
	return lock.Run(lock.Options{
		Dial: o.Dial, Path: o.Path, Cmd: o.Cmd,
		Timeout: o.Timeout, SessionTimeout: o.SessionTimeout, Grace: o.Grace,
		JSON: o.JSON, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr,
		Prefix: prefix, Data: []byte(o.Proposal), Terms: electionTerms,
		Announce: func(w io.Writer, l *lock.Lock, asJSON bool) error {
			return announce(w, l, o.Proposal, asJSON)
		},
	})
}

// electionTerms are the words of lock.Run's messages in an election.
var electionTerms = lock.Terms{Path: "election path", Node: "candidate node", NotWon: "not elected on %s within %s", LostNow: "leadership lost"}

// announce prints that this candidate leads.
func announce(w io.Writer, l *lock.Lock, proposal string, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(struct {
			Path     string `json:"path"`
			Node     string `json:"node"`
			Proposal string `json:"proposal"`
			Token    int64  `json:"token"`
		}{l.Path, l.Node, proposal, l.Token})
	}
	_, err := fmt.Fprintf(w, "elected %q: fencing token %d (node %s)\n", proposal, l.Token, l.Node)
	return err
}
