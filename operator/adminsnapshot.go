package operator

import (
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// The AdminServer's snapshot command (ZooKeeper 3.9's SnapshotCommand,
// also "snap"): it needs an Authorization header ("digest user:password",
// or "ip") whose identities together hold every permission on "/" (the
// super user does; unlike ZooKeeper, one permission is not enough), and
// answers with this member's whole tree as an Apache ZooKeeper snapshot
// file (the format ZooKeeper 3.4-3.9 load from version-2/snapshot.<zxid>)
// and the headers last_zxid and snapshot_size. It is the way back: that
// file in a stopped ZooKeeper's dataDir/version-2 makes ZooKeeper serve
// the same znodes with the same Stat. Sessions are carried by id and
// timeout; their passwords are zkraft's own, so clients cannot resume
// them on ZooKeeper and they expire there. With ?streaming=false the
// member takes a snapshot of its own instead and answers in JSON. One
// snapshot per Config.AdminSnapshotInterval; others get 429.
const (
	snapshotHeaderZxid = "last_zxid"
	snapshotHeaderSize = "snapshot_size"
)

// serveSnapshot answers the snapshot command.
func (a *Admin) serveSnapshot(w http.ResponseWriter, r *http.Request, name string) {
	s := newView(a.srv)
	reply := func(status int, msg any) {
		var b strings.Builder
		writeJackson(&b, jsonObj{}.add("command", name).add("error", msg))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, b.String())
	}
	fail := func(status int, msg string) { reply(status, msg) }
	if status, msg := a.Authorize(r); status != 0 {
		fail(status, msg)
		return
	}
	if !a.snapshotAllowed(s.cfg.AdminSnapshotInterval, time.Now()) {
		s.srv.Logger().Warn("admin snapshot request was rate limited")
		reply(http.StatusTooManyRequests, nil)
		return
	}
	// Set as ZooKeeper spells them, in lower case (Set would make them
	// Last_zxid and Snapshot_size; HTTP does not mind, scripts may).
	setZxid := func(z int64) { w.Header()[snapshotHeaderZxid] = []string{"0x" + strconv.FormatInt(z, 16)} }
	if v := r.URL.Query().Get("streaming"); v != "" && !strings.EqualFold(v, "true") {
		setZxid(s.node.LastZxid())
		if err := s.node.Snapshot(); err != nil {
			fail(http.StatusInternalServerError, err.Error())
			return
		}
		reply(http.StatusOK, nil)
		return
	}
	clone, err := s.node.CopyTree() // writes go on meanwhile
	if err != nil {
		fail(http.StatusInternalServerError, err.Error())
		return
	}
	setZxid(clone.LastZxid())
	// The size goes in a header, so the file is written before it is sent.
	f, err := os.CreateTemp("", "zkraft-snapshot-*")
	if err != nil {
		fail(http.StatusInternalServerError, err.Error())
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := writeZooKeeperSnapshot(f, clone); err != nil {
		s.srv.Logger().Warn("admin snapshot", zap.Error(err))
		fail(http.StatusInternalServerError, err.Error())
		return
	}
	size, _ := f.Seek(0, io.SeekCurrent)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		fail(http.StatusInternalServerError, err.Error())
		return
	}
	w.Header()[snapshotHeaderSize] = []string{strconv.FormatInt(size, 10)}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, f)
}

// snapshotAllowed takes the snapshot command's turn: at most one per
// interval (session.Config.AdminSnapshotInterval; ZooKeeper's rate
// limiter, 429 otherwise).
func (a *Admin) snapshotAllowed(interval time.Duration, now time.Time) bool {
	if interval < 0 {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.lastSnapshot.IsZero() && now.Sub(a.lastSnapshot) < interval {
		return false
	}
	a.lastSnapshot = now
	return true
}

// adminIdentities authenticates an Authorization header as ZooKeeper's
// AdminServer does: "<scheme> <auth>", digest (user:password, the super
// user too) or ip (the caller's address).
func (s view) adminIdentities(r *http.Request, authInfo string) ([]jute.Id, bool) {
	scheme, auth, _ := strings.Cut(authInfo, " ")
	switch scheme {
	case "digest":
		if auth == "" {
			return nil, false
		}
		return s.srv.DigestIdentities(auth), true
	case "ip":
		return []jute.Id{{Scheme: "ip", ID: remoteIPString(r.RemoteAddr)}}, true
	}
	return nil, false
}

// remoteIPString is the host of an HTTP request's RemoteAddr.
func remoteIPString(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// writeZooKeeperSnapshot writes tree as an Apache ZooKeeper snapshot: its
// sessions, its ACL lists numbered as ZooKeeper's cache numbers them
// (world:anyone:cdrwa is -1, the others from 1), then every znode.
func writeZooKeeperSnapshot(w io.Writer, tree *znode.Tree) error {
	var sessions []datadir.Session
	for _, si := range tree.Sessions() {
		sessions = append(sessions, datadir.Session{ID: si.ID, Timeout: si.Timeout})
	}
	ids := map[string]int64{}
	lists := map[int64][]jute.ACL{}
	var nodes int
	tree.Export(func(n znode.StoredNode) {
		nodes++
		if k := znode.ACLKey(n.ACL); !isOpenACL(n.ACL) && ids[k] == 0 {
			ids[k] = int64(len(ids) + 1)
			lists[ids[k]] = n.ACL
		}
	})
	sw := datadir.NewSnapshotWriter(w, sessions, lists)
	tree.Export(func(n znode.StoredNode) {
		ref := int64(datadir.OpenACL)
		if !isOpenACL(n.ACL) {
			ref = ids[znode.ACLKey(n.ACL)]
		}
		sw.Node(datadir.Node{Path: n.Path, Data: n.Data, ACL: ref, Stat: n.Stat})
	})
	return sw.Close()
}

// isOpenACL reports whether list is exactly world:anyone:cdrwa, which
// ZooKeeper's ACL cache stores as -1.
func isOpenACL(list []jute.ACL) bool {
	return len(list) == 1 && list[0].Perms == jute.PermAll && list[0].ID.Scheme == "world" && list[0].ID.ID == "anyone"
}
