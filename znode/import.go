package znode

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// StoredNode is a znode as Apache ZooKeeper stores it in a snapshot: its
// path, data, ACL and the stored fields of its Stat. Cversion is the
// stored count of child creations (clients see cversion*2 - numChildren).
// EphemeralOwner is in ZooKeeper's encoding: 0 for a persistent node,
// math.MinInt64 for a container, 0xFF in the top byte and the TTL in ms
// below for a TTL node, else the owning session. DataLength and
// NumChildren are not stored.
type StoredNode struct {
	Path string
	Data []byte
	ACL  []jute.ACL
	Stat jute.Stat // DataLength and NumChildren are derived, not read
}

// ttlMask marks a TTL node's EphemeralOwner in ZooKeeper's EphemeralType.
const ttlMask = int64(-1) << 56

// IsTTLOwner reports whether an EphemeralOwner as ZooKeeper stores it
// (snapshots, transaction logs, a Stat) marks a TTL node rather than a
// session: EphemeralType's top byte 0xFF.
func IsTTLOwner(owner int64) bool { return owner&ttlMask == ttlMask }

// Import builds a tree from nodes (the root first, every parent before
// its children), sessions and the zxid of the last transaction they
// reflect. The result is checked as a snapshot is: a node without its
// parent, a duplicate, or a child of an ephemeral fails with
// ErrBadSnapshot. Quotas are those whose zookeeper_limits node exists,
// and each zookeeper_stats node is recounted, as ZooKeeper does when it
// loads a snapshot.
func Import(nodes []StoredNode, sessions []SessionInfo, lastZxid int64, opts Options) (*Tree, error) {
	if len(nodes) == 0 || nodes[0].Path != RootPath {
		return nil, badSnap("the root must come first")
	}
	var quotas []string
	for _, n := range nodes {
		if p, ok := strings.CutSuffix(n.Path, "/"+QuotaLimitNode); ok && strings.HasPrefix(p, QuotaPath+"/") {
			quotas = append(quotas, p[len(QuotaPath):])
		}
	}
	// The snapshot stream is written into a pipe as ReadSnapshot reads
	// it, so a large tree is not held twice.
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeImported(pw, nodes, sessions, quotas, lastZxid, opts)) }()
	t, err := ReadSnapshot(pr, opts)
	pr.Close() // a writer still running (after a bad node) stops
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	a := &applier{t: t}
	for _, p := range quotas {
		a.recountQuota(p)
	}
	return t, nil
}

// writeImported writes nodes, sessions and quotas to w in WriteSnapshot's
// format.
func writeImported(w io.Writer, nodes []StoredNode, sessions []SessionInfo, quotas []string, lastZxid int64, opts Options) error {
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10)
	var jw jute.Writer
	frame := func(fill func(*jute.Writer)) {
		jw.Reset()
		fill(&jw)
		bw.Write(binary.BigEndian.AppendUint32(nil, uint32(len(jw.Buf))))
		bw.Write(jw.Buf)
	}
	bw.WriteString(snapMagic)
	bw.Write(binary.BigEndian.AppendUint32(nil, snapVersion))

	number := map[string]int32{}
	var lists [][]jute.ACL
	for _, n := range nodes {
		k := ACLKey(n.ACL)
		if _, ok := number[k]; !ok {
			number[k] = int32(len(lists))
			lists = append(lists, n.ACL)
		}
	}
	frame(func(jw *jute.Writer) {
		jw.Long(lastZxid)
		jw.Int(int32(len(lists)))
		jw.Long(int64(len(nodes)))
		jw.Int(int32(len(sessions)))
		jw.Int(int32(len(quotas)))
	})
	for _, l := range lists {
		frame(func(jw *jute.Writer) { jute.WriteACLs(jw, l) })
	}
	known := make(map[int64]bool, len(sessions))
	for _, s := range sessions {
		known[s.ID] = true
	}
	for _, n := range nodes {
		kind, owner, ttl := importedKind(n.Stat.EphemeralOwner, known[n.Stat.EphemeralOwner])
		st := n.Stat
		frame(func(jw *jute.Writer) {
			jw.String(n.Path)
			jw.Buffer(n.Data)
			jw.Int(number[ACLKey(n.ACL)])
			jw.Long(st.Czxid)
			jw.Long(st.Mzxid)
			jw.Long(st.Pzxid)
			jw.Long(st.Ctime)
			jw.Long(st.Mtime)
			jw.Int(st.Version)
			jw.Int(st.Cversion)
			jw.Int(st.Aversion)
			jw.Int(int32(kind))
			jw.Long(owner)
			jw.Long(ttl)
		})
	}
	for _, s := range sessions {
		frame(func(jw *jute.Writer) { encodeSession(jw, s) })
	}
	for _, p := range quotas {
		frame(func(jw *jute.Writer) { jw.String(p) })
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(append([]byte(snapEnd), binary.BigEndian.AppendUint32(nil, crc.Sum32())...))
	return err
}

// OwnerSession decodes a stored EphemeralOwner (StoredNode's) as Import
// does when it names none of the snapshot's sessions: the owning session
// and true for an ephemeral node, false for a persistent, container or
// TTL node.
func OwnerSession(owner int64) (int64, bool) {
	kind, id, _ := importedKind(owner, false)
	return id, kind == kindEphemeral
}

// importedKind decodes ZooKeeper's EphemeralOwner into a node kind and the
// owner and TTL fields of a snapshot frame; session says the owner is a
// session the snapshot holds. The encoding is the ensemble's, not this
// server's to choose: an owner of TTL form (IsTTLOwner) is a TTL node
// whatever this server's extendedTypesEnabled, unless it is one of the
// snapshot's sessions. ZooKeeper refuses server id 255 with extended
// types, so a TTL node's owner never names a session; only an ensemble
// without extended types can have a server 255, whose sessions' ids have
// that form, and they are the snapshot's sessions (a fuzzy snapshot that
// lacks such an ephemeral's session would read it as a TTL node).
func importedKind(owner int64, session bool) (kind nodeKind, sessionID, ttl int64) {
	switch {
	case owner == 0:
		return kindPersistent, 0, 0
	case owner == math.MinInt64:
		return kindContainer, 0, 0
	case !session && IsTTLOwner(owner):
		return kindTTL, 0, owner &^ ttlMask
	default:
		return kindEphemeral, owner, 0
	}
}

// AdvanceZxid raises the tree's last zxid to zxid (never lowers it): an
// importer's last transaction may be one that changed nothing here.
func (t *Tree) AdvanceZxid(zxid int64) {
	t.lastZxid = max(t.lastZxid, zxid)
}

// ChildMeta returns a znode's child counters as ZooKeeper stores them:
// cversion counts the children ever created (clients see cversion*2 -
// numChildren) and pzxid is the zxid of the last change to the children.
// ok is false when there is no such znode.
func (t *Tree) ChildMeta(path string) (cversion int32, pzxid int64, ok bool) {
	n := t.lookup(path)
	if n == nil {
		return 0, 0, false
	}
	return n.cversion(), n.pzxid(), true
}

// SetChildMeta sets a znode's stored child counters (see ChildMeta), if it
// exists. It is for importers replaying ZooKeeper's logs over a snapshot
// taken while ZooKeeper served: its replay treats these counters by rules
// of its own (DataTree.createNode, deleteNode, setCversionPzxid), never
// lowering them. It is not for a tree being served.
func (t *Tree) SetChildMeta(path string, cversion int32, pzxid int64) {
	if n := t.lookup(path); n != nil {
		a := &applier{t: t}
		a.setChildMeta(n, cversion, pzxid)
	}
}

// ReplaceACL sets a znode's ACL, and its aversion unless that is -1,
// whatever the versions, and nothing else of its Stat: ZooKeeper's replay
// does this where a live request would fail (a create that finds its
// node, a setACL the snapshot already holds). It is for importers, not a
// tree being served. It reports whether the node exists.
func (t *Tree) ReplaceACL(path string, list []jute.ACL, aversion int32) (bool, error) {
	n := t.lookup(path)
	if n == nil {
		return false, nil
	}
	if aversion == -1 {
		aversion = n.aversion()
	}
	a := &applier{t: t}
	if err := a.setNodeACL(n, list, aversion); err != nil {
		return true, fmt.Errorf("znode: ACL of %s: %w", path, err)
	}
	return true, nil
}

// SettleEphemerals ends an import as ZooKeeper ends loading a data
// directory (ZooKeeperServer.loadData). A fuzzy snapshot can hold an
// ephemeral whose session it does not; the importer passes the paths of
// such nodes (no replayed change makes one: a change whose session is
// unknown runs in a session opened and closed for it). Each that is still
// an ephemeral is linked to its session if that is open now, and deleted
// if it is not (ZooKeeper kills every session that owns ephemerals and is
// not open, deleting them at zxid, which raises their parents' pzxid to
// it). It returns the paths deleted.
func (t *Tree) SettleEphemerals(zxid int64, paths []string) []string {
	a := &applier{t: t, zxid: zxid}
	var deleted []string
	for _, p := range paths {
		parentPath, name, ok := splitPath(p)
		if !ok {
			continue
		}
		parent := t.lookup(parentPath)
		if parent == nil {
			continue
		}
		n := lookupChild(parent, p, name)
		if n == nil || n.kind() != kindEphemeral {
			continue
		}
		if s := t.sessions[n.owner]; s != nil {
			s.addEphemeral(p)
			continue
		}
		if a.deleteNode(p, parentPath, name, parent, n) != nil {
			continue // not canonical: lookupChild found nothing
		}
		deleted = append(deleted, p)
	}
	return deleted
}

// Export calls fn for every znode in ZooKeeper's stored form, parents
// before children (children in name order), as a ZooKeeper snapshot
// holds them. Call it on a clone (Clone) of a tree that is changing.
func (t *Tree) Export(fn func(StoredNode)) {
	var scratch []childEntry
	walkSorted(RootPath, t.root, &scratch, func(p string, n *node) {
		st := n.stat()
		st.Cversion = n.cversion()
		st.DataLength, st.NumChildren = 0, 0
		switch n.kind() {
		case kindContainer:
			st.EphemeralOwner = math.MinInt64
		case kindTTL:
			st.EphemeralOwner = ttlMask | n.owner
		}
		fn(StoredNode{Path: p, Data: n.data, ACL: t.aclOf(n), Stat: st})
	})
}

// ResetConfig empties /zookeeper/config as a new tree has it (data empty,
// version 0, mzxid and mtime its czxid and ctime): a tree carried over
// from another ensemble (a live migration's cutover) holds that
// ensemble's membership there, which is not the new one's; the new
// ensemble's first leader writes its own. It is for importers, not a
// tree being served.
func (t *Tree) ResetConfig() {
	n := t.lookup(ConfigPath)
	if n == nil {
		return
	}
	a := &applier{t: t}
	_ = a.setNodeData(ConfigPath, n, []byte{}, 0, n.czxid, n.ctime)
}
