package elect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/shell/recipes/lock"
)

// ListenOptions are zkraft elect --listen's settings.
type ListenOptions struct {
	Dial           func(sessionTimeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error)
	Path           string
	SessionTimeout time.Duration
	JSON           bool
	Stdout         io.Writer
}

// Leader is who leads an election: the lowest contender's node, its data
// (the proposal) and czxid (the leader's fencing token). Node is "" when
// there is no candidate.
type Leader struct {
	Path     string `json:"path"`
	Node     string `json:"node"`
	Proposal string `json:"proposal"`
	Token    int64  `json:"token"`
}

// Listen prints the current leader, then each change of leader, until
// SIGINT, SIGTERM or SIGHUP (status 0) or the session is lost
// (lock.ExitLost). It does not campaign.
func Listen(o ListenOptions) (int, error) {
	path := strings.TrimSuffix(o.Path, "/")
	if path == "" || !strings.HasPrefix(path, "/") {
		return lock.ExitFailed, fmt.Errorf("election path %q: want an absolute path", o.Path)
	}
	guard := lock.NewGuard(o.SessionTimeout)
	conn, err := o.Dial(o.SessionTimeout, guard.Event)
	if err != nil {
		return lock.ExitFailed, err
	}
	defer conn.Close()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	last := (*Leader)(nil)
	for {
		cur, ch, err := current(conn, path)
		if err != nil {
			if isClosed(guard.Lost()) {
				return lock.ExitLost, fmt.Errorf("session lost: %s", guard.Why())
			}
			return lock.ExitFailed, err
		}
		if last == nil || cur.Node != last.Node {
			if err := printLeader(o.Stdout, cur, o.JSON); err != nil {
				return lock.ExitFailed, err
			}
			last = &cur
		}
		select {
		case <-ch:
		case <-sigs:
			return 0, nil
		case <-guard.Lost():
			return lock.ExitLost, fmt.Errorf("session lost: %s", guard.Why())
		}
	}
}

// current reads the leader and returns a channel that fires when the
// contenders change (or the path is created, when it does not exist).
func current(conn *zk.Conn, path string) (Leader, <-chan zk.Event, error) {
	for {
		children, _, ch, err := conn.ChildrenW(path)
		if errors.Is(err, zk.ErrNoNode) {
			ok, _, ech, err := conn.ExistsW(path)
			if err != nil {
				return Leader{}, nil, fmt.Errorf("watch %s: %w", path, err)
			}
			if ok {
				continue // created between the two reads
			}
			return Leader{Path: path}, ech, nil
		}
		if err != nil {
			return Leader{}, nil, fmt.Errorf("children of %s: %w", path, err)
		}
		cs := lock.Contenders(children)
		if len(cs) == 0 {
			return Leader{Path: path}, ch, nil
		}
		data, st, err := conn.Get(path + "/" + cs[0])
		if errors.Is(err, zk.ErrNoNode) {
			<-ch // it went: the children watch fires, or has fired
			continue
		}
		if err != nil {
			return Leader{}, nil, fmt.Errorf("read %s: %w", cs[0], err)
		}
		return Leader{Path: path, Node: cs[0], Proposal: string(data), Token: st.Czxid}, ch, nil
	}
}

// printLeader prints one line: the proposal, or "(no leader)"; or JSON.
func printLeader(w io.Writer, l Leader, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(l)
	}
	if l.Node == "" {
		_, err := fmt.Fprintln(w, "(no leader)")
		return err
	}
	_, err := fmt.Fprintln(w, l.Proposal)
	return err
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
