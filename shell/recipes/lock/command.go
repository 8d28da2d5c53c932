package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Exit statuses of zkraft lock besides CMD's own.
const (
	ExitFailed  = 1  // a usage, connection or server error
	ExitLost    = 70 // the session was lost while waiting or holding
	ExitTimeout = 75 // EX_TEMPFAIL: not acquired within the timeout
)

// TokenEnv names the environment variable that hands CMD the token.
const TokenEnv = "ZKRAFT_FENCING_TOKEN"

// Options are zkraft lock's settings.
type Options struct {
	// Dial opens the session, passing its events to onEvent.
	Dial func(sessionTimeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error)
	Path string
	Cmd  []string // empty: hold until stdin ends or a signal arrives
	// Timeout bounds the wait for the lock (0: none); SessionTimeout is
	// the session's; Grace is CMD's time between SIGTERM and SIGKILL.
	Timeout, SessionTimeout, Grace time.Duration
	JSON                           bool // print the token as JSON
	// Prefix names the contender's node before its sequence number
	// (default: CuratorPrefix("lock-")); Data is the node's data.
	Prefix string
	Data   []byte
	// Terms are the words of the messages (default: LockTerms).
	Terms Terms
	// Announce prints that the lock is held (default: the token).
	Announce       func(w io.Writer, l *Lock, asJSON bool) error
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run acquires the lock, prints the token (on Stderr when CMD runs, else
// on Stdout), runs CMD or holds, and releases. It returns the exit
// status, with an error to print when the status is not CMD's.
func Run(o Options) (int, error) {
	guard := NewGuard(o.SessionTimeout)
	conn, err := o.Dial(o.SessionTimeout, guard.Event)
	if err != nil {
		return ExitFailed, err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var timedOut atomic.Bool
	if o.Timeout > 0 {
		t := time.AfterFunc(o.Timeout, func() { timedOut.Store(true); cancel() })
		defer t.Stop()
	}
	go func() {
		select {
		case <-guard.Lost():
			cancel()
		case <-ctx.Done():
		}
	}()
	prefix := o.Prefix
	if prefix == "" {
		prefix = CuratorPrefix("lock-")
	}
	terms := o.Terms.orDefault()
	l, err := acquire(ctx, conn, o.Path, prefix, o.Data, zk.WorldACL(zk.PermAll), terms)
	switch {
	case err == nil:
	case errors.Is(err, ErrLost) || isClosed(guard.Lost()):
		return ExitLost, fmt.Errorf("session lost while waiting: %s", guard.Why())
	case errors.Is(err, context.Canceled) && timedOut.Load():
		return ExitTimeout, fmt.Errorf(terms.NotWon, o.Path, o.Timeout)
	default:
		return ExitFailed, err
	}
	defer func() { _ = l.Release() }()
	out := o.Stdout
	if len(o.Cmd) > 0 {
		out = o.Stderr
	}
	announce := o.Announce
	if announce == nil {
		announce = printToken
	}
	sigs, stopSigs := notifyStop() // before the token is out (notifyStop)
	defer stopSigs()
	if err := announce(out, l, o.JSON); err != nil {
		return ExitFailed, err
	}
	status := 0
	if len(o.Cmd) == 0 {
		err = Hold(o.Stdin, sigs, guard.Lost())
	} else {
		child := Child{Args: o.Cmd, Env: []string{TokenEnv + "=" + strconv.FormatInt(l.Token, 10)},
			Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Grace: o.Grace, Signals: sigs}
		status, err = child.Run(guard.Lost())
	}
	if errors.Is(err, ErrLost) {
		return ExitLost, fmt.Errorf("%s: %s", guard.Why(), terms.LostNow)
	}
	if err != nil {
		return ExitFailed, err
	}
	if err := l.Release(); err != nil {
		return ExitFailed, err
	}
	return status, nil
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// printToken prints the lock's fencing token.
func printToken(w io.Writer, l *Lock, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(struct {
			Path  string `json:"path"`
			Node  string `json:"node"`
			Token int64  `json:"token"`
		}{l.Path, l.Node, l.Token})
	}
	_, err := fmt.Fprintf(w, "fencing token %d (node %s)\n", l.Token, l.Node)
	return err
}
