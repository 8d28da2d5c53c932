package watch

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/zookeeper/watchconn"
)

// Options are zkraft watch's settings.
type Options struct {
	// Dial opens the session the watcher reads on (go-zookeeper's, with
	// the credentials added).
	Dial func(sessionTimeout time.Duration) (*zk.Conn, error)
	// Servers are the members the watch session is opened on, in turn.
	Servers []string
	// Auth are the credentials the watch session sends.
	Auth []watchconn.Credential
	Path string
	// Recursive follows every descendant of Path; otherwise Path itself
	// and the changes of its children list.
	Recursive bool
	// SessionTimeout is the sessions' timeout and the bound on connecting.
	SessionTimeout time.Duration
	JSON           bool // one JSON document a line, with the data
	Stdout, Stderr io.Writer
	// Stop ends the watch when closed (nil: SIGINT or SIGTERM do).
	Stop <-chan struct{}
}

// retryEvery is how often a failed reconnect is tried again.
const retryEvery = 500 * time.Millisecond

// eventBuffer is how many notifications may wait while the watcher reads
// or prints; past it the watch session ends and the watcher catches up
// as after a reconnect.
const eventBuffer = 1 << 14

// Run prints the changes under o.Path until o.Stop closes (or a SIGINT or
// SIGTERM arrives). It returns an error when the first connection or
// read fails, or stdout is gone.
func Run(o Options) error {
	root := o.Path
	if root != "/" {
		root = strings.TrimSuffix(root, "/")
	}
	if !strings.HasPrefix(root, "/") {
		return fmt.Errorf("path %q: want an absolute path", o.Path)
	}
	conn, err := o.Dial(o.SessionTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	w := newWatcher(conn, root, o.Recursive)
	w.withData = o.JSON
	servers := newRotation(o.Servers)
	open := func() (*watchconn.Session, error) {
		return watchconn.Open(watchconn.Config{Dial: servers.dial, Path: root, Recursive: o.Recursive,
			Auth: o.Auth, Timeout: o.SessionTimeout, Buffer: eventBuffer})
	}
	var s *watchconn.Session
	for range max(1, len(o.Servers)) { // each member once
		if s, err = open(); err == nil {
			break
		}
	}
	if err != nil {
		return err
	}
	tree, err := w.read(s.Armed())
	if err != nil {
		if tree == nil {
			s.Close()
			return err
		}
		fmt.Fprintf(o.Stderr, "zkraft watch: %v\n", err) // a node below that refuses READ
	}
	w.catchUp(tree, s.Armed()) // what is there already is not a change
	mode := "persistent watch: the node and its children list"
	if o.Recursive {
		mode = "persistent recursive watch"
	}
	fmt.Fprintf(o.Stderr, "watching %s (%s, %d nodes) from %s\n", root, mode, len(w.snap), s.RemoteAddr())
	stop := o.Stop
	if stop == nil {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sigs)
		done := make(chan struct{})
		go func() { <-sigs; close(done) }()
		stop = done
	}
	for {
		select {
		case <-stop:
			s.Close()
			return nil
		case ev, ok := <-s.Events():
			if !ok {
				fmt.Fprintf(o.Stderr, "zkraft watch: %v; reconnecting\n", s.Err())
				if s, err = w.reconnect(open, stop, o); s == nil || err != nil {
					return err
				}
				continue
			}
			out, ok := w.apply(ev)
			if !ok {
				continue
			}
			if err := Print(o.Stdout, out, o.JSON); err != nil {
				s.Close()
				return fmt.Errorf("write: %w", err)
			}
		}
	}
}

// reconnect opens a new watch session (each member in turn), re-reads the
// tree and prints what changed meanwhile, marked away. It returns a nil
// session when stop closed first.
func (w *watcher) reconnect(open func() (*watchconn.Session, error), stop <-chan struct{}, o Options) (*watchconn.Session, error) {
	last := ""
	report := func(err error) {
		if msg := err.Error(); msg != last {
			fmt.Fprintf(o.Stderr, "zkraft watch: %v\n", err)
			last = msg
		}
	}
	for {
		s, err := open()
		if err == nil {
			var tree map[string]stat
			tree, err = w.read(s.Armed())
			if tree != nil {
				if err != nil {
					report(err) // a node below that refuses READ
				}
				evs := w.catchUp(tree, s.Armed())
				for _, ev := range evs {
					ev.Away = true
					if err := Print(o.Stdout, ev, o.JSON); err != nil {
						s.Close()
						return nil, fmt.Errorf("write: %w", err)
					}
				}
				fmt.Fprintf(o.Stderr, "zkraft watch: watching again from %s (%d changes while away)\n", s.RemoteAddr(), len(evs))
				return s, nil
			}
			s.Close()
		}
		report(err)
		select {
		case <-stop:
			return nil, nil
		case <-time.After(retryEvery):
		}
	}
}

// rotation dials the members in turn, each dial starting after the
// member the last one reached.
type rotation struct {
	addrs []string
	next  int
}

func newRotation(addrs []string) *rotation { return &rotation{addrs: addrs} }

// dial connects to the next member that answers within timeout.
func (r *rotation) dial(timeout time.Duration) (net.Conn, error) {
	if len(r.addrs) == 0 {
		return nil, errors.New("no --server")
	}
	var errs []error
	for range r.addrs {
		addr := r.addrs[r.next%len(r.addrs)]
		r.next++
		nc, err := net.DialTimeout("tcp", addr, timeout)
		if err == nil {
			return nc, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}
