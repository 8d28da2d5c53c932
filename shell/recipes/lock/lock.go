package lock

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
)

// ErrLost reports that the lock's node went away while this contender
// waited or held it: its session expired.
var ErrLost = errors.New("lock lost: the session's lock node is gone")

// Lock is one contender's node under a lock path; Acquire returns it held.
type Lock struct {
	conn *zk.Conn
	// Path is the lock path, Node the full path of this contender's node.
	Path, Node string
	// Token is the fencing token: Node's czxid.
	Token int64

	once sync.Once
	err  error
}

// Acquire creates this contender's node under path (creating path's
// missing parents as persistent nodes with acl) and waits, watching only
// its predecessor, until it holds the lock or ctx ends. When ctx ends
// first its node is deleted and ctx's error returned. The node is named
// as Curator's InterProcessMutex names its own.
func Acquire(ctx context.Context, conn *zk.Conn, path string, data []byte, acl []zk.ACL) (*Lock, error) {
	return AcquireAs(ctx, conn, path, CuratorPrefix("lock-"), data, acl)
}

// CuratorPrefix is the name Curator gives a node of the recipe whose
// lock name is name ("lock-", "latch-") in its protected form, before
// the server appends the sequence: "_c_<uuid>-<name>".
func CuratorPrefix(name string) string { return "_c_" + newUUID() + "-" + name }

// KazooPrefix is the name kazoo's Lock (and Election) gives its node
// before the sequence: "<uuid hex>__lock__".
func KazooPrefix() string { return strings.ReplaceAll(newUUID(), "-", "") + "__lock__" }

// AcquireAs is Acquire with the node's name prefix given (CuratorPrefix,
// KazooPrefix): the server appends the sequence number to it.
func AcquireAs(ctx context.Context, conn *zk.Conn, path, prefix string, data []byte, acl []zk.ACL) (*Lock, error) {
	return acquire(ctx, conn, path, prefix, data, acl, LockTerms)
}

// acquire is AcquireAs with its messages in terms.
func acquire(ctx context.Context, conn *zk.Conn, path, prefix string, data []byte, acl []zk.ACL, terms Terms) (*Lock, error) {
	path = strings.TrimSuffix(path, "/")
	if path == "" || !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("%s %q: want an absolute path", terms.Path, path)
	}
	if err := ensurePath(conn, path, acl); err != nil {
		return nil, err
	}
	node, err := createNode(conn, path, prefix, data, acl, terms.Node)
	if err != nil {
		return nil, err
	}
	l := &Lock{conn: conn, Path: path, Node: node}
	_, st, err := conn.Get(node)
	if err != nil {
		_ = l.Release()
		return nil, fmt.Errorf("stat %s: %w", node, err)
	}
	l.Token = st.Czxid
	if err := l.wait(ctx); err != nil {
		_ = l.Release()
		return nil, err
	}
	return l, nil
}

// wait returns once this contender's node is the lowest.
func (l *Lock) wait(ctx context.Context) error {
	self := l.Node[len(l.Path)+1:]
	for {
		children, _, err := l.conn.Children(l.Path)
		if err != nil {
			return fmt.Errorf("children of %s: %w", l.Path, err)
		}
		pred, found := predecessor(children, self)
		if !found {
			return ErrLost
		}
		if pred == "" {
			return nil
		}
		_, _, ch, err := l.conn.GetW(l.Path + "/" + pred)
		if errors.Is(err, zk.ErrNoNode) {
			continue // gone between the two reads
		}
		if err != nil {
			return fmt.Errorf("watch %s: %w", pred, err)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Release deletes the lock's node. It is idempotent: later calls return
// the first one's result, and a node already gone (its session expired)
// is no error.
func (l *Lock) Release() error {
	l.once.Do(func() {
		err := l.conn.Delete(l.Node, -1)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			l.err = fmt.Errorf("release %s: %w", l.Node, err)
		}
	})
	return l.err
}

// ensurePath creates path and its missing parents.
func ensurePath(conn *zk.Conn, path string, acl []zk.ACL) error {
	if ok, _, err := conn.Exists(path); err == nil && ok {
		return nil
	}
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		_, err := conn.Create(path[:i], nil, 0, acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", path[:i], err)
		}
	}
	return nil
}

// createNode creates the contender's node, prefix followed by the
// sequence, and finds it by its prefix (which holds a uuid) when the
// connection dropped before the reply.
func createNode(conn *zk.Conn, path, prefix string, data []byte, acl []zk.ACL, noun string) (string, error) {
	node, err := conn.Create(path+"/"+prefix, data, zk.FlagEphemeral|zk.FlagSequence, acl)
	if errors.Is(err, zk.ErrConnectionClosed) {
		children, _, cerr := conn.Children(path)
		if cerr != nil {
			return "", fmt.Errorf("create %s under %s: %w", noun, path, err)
		}
		for _, c := range children {
			if strings.HasPrefix(c, prefix) {
				return path + "/" + c, nil
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("create %s under %s: %w", noun, path, err)
	}
	return node, nil
}

// newUUID is a random (version 4) UUID, as Curator's protected names use.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
