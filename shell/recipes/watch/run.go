package watch

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

// Options are zkraft watch's settings.
type Options struct {
	// Dial opens the session, passing its events to onEvent.
	Dial func(sessionTimeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error)
	Path string
	// Recursive follows every descendant of Path; otherwise Path itself
	// and the creation and deletion of its children.
	Recursive bool
	// SessionTimeout is the session's timeout and the bound on connecting.
	SessionTimeout time.Duration
	JSON           bool // one JSON document a line
	Stdout, Stderr io.Writer
	// Stop ends the watch when closed (nil: SIGINT or SIGTERM do).
	Stop <-chan struct{}
}

// retryEvery is how often a re-read that failed is tried again.
const retryEvery = 500 * time.Millisecond

// Run prints the changes under o.Path until o.Stop closes (or a SIGINT or
// SIGTERM arrives). It returns an error when the first read fails or
// stdout is gone.
func Run(o Options) error {
	root := o.Path
	if root != "/" {
		root = strings.TrimSuffix(root, "/")
	}
	if !strings.HasPrefix(root, "/") {
		return fmt.Errorf("path %q: want an absolute path", o.Path)
	}
	var away, expired atomic.Bool
	back := make(chan struct{}, 1)
	conn, err := o.Dial(o.SessionTimeout, func(ev zk.Event) {
		if ev.Type != zk.EventSession {
			return
		}
		switch ev.State {
		case zk.StateDisconnected:
			away.Store(true)
		case zk.StateExpired:
			away.Store(true)
			expired.Store(true)
		case zk.StateHasSession:
			select {
			case back <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return err
	}
	defer conn.Close()
	w := newWatcher(conn, root, o.Recursive)
	if _, err := w.sync(root, true); err != nil {
		if connLost(err) || w.snap[root] == nil {
			return err
		}
		fmt.Fprintf(o.Stderr, "zkraft watch: %v\n", err) // a node below that refuses READ
	}
	mode := "the node and its children"
	if o.Recursive {
		mode = "recursive"
	}
	fmt.Fprintf(o.Stderr, "watching %s (%s, %d nodes)\n", root, mode, len(w.snap))
	stop := o.Stop
	if stop == nil {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sigs)
		done := make(chan struct{})
		go func() { <-sigs; close(done) }()
		stop = done
	}
	retry := time.NewTicker(retryEvery)
	defer retry.Stop()
	pending := false // a re-read of the whole tree is owed
	emit := func(evs []Event, err error, wasAway bool) error {
		if err != nil {
			fmt.Fprintf(o.Stderr, "zkraft watch: %v\n", err)
			if connLost(err) {
				pending = true
				away.Store(true)
			}
		}
		sortEvents(evs)
		for _, ev := range evs {
			ev.Away = ev.Away || wasAway
			if err := Print(o.Stdout, ev, o.JSON); err != nil {
				return err
			}
		}
		return nil
	}
	resync := func() error {
		if expired.Swap(false) {
			w.forgetArms()
		}
		pending = false
		wasAway := away.Swap(false)
		evs, err := w.sync(root, true)
		return emit(evs, err, wasAway)
	}
	for {
		var err error
		select {
		case <-stop:
			return nil
		case ev := <-w.fired:
			w.disarm(ev)
			if ev.Type == zk.EventNotWatching || !w.follows(ev.Path) {
				continue
			}
			evs, serr := w.sync(ev.Path, false)
			err = emit(evs, serr, away.Load())
		case <-back:
			err = resync()
		case <-retry.C:
			if pending && conn.State() == zk.StateHasSession {
				err = resync()
			}
		}
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
}
