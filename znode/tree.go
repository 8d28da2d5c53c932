package znode

import "github.com/zkraft/zkraft/jute"

// Options selects optional ZooKeeper behaviour. Every member of an ensemble
// must use the same Options.
type Options struct {
	// ExtendedTypes enables TTL nodes (zookeeper.extendedTypesEnabled);
	// without it createTTL fails with jute.ErrUnimplemented.
	ExtendedTypes bool
	// EnforceQuota makes hard quota limits fail writes with
	// jute.ErrQuotaExceeded (zookeeper.enforceQuota).
	EnforceQuota bool
}

// Tree is the data tree plus the session table. It is not safe for
// concurrent use.
type Tree struct {
	opts     Options
	nodes    map[string]*node // by full path; the root is "/"
	sessions map[int64]*session
	acls     *aclCache
	lastZxid int64
	dataSize int64 // sum of len(path)+len(data) over all nodes
	nEphem   int
	// reapable holds the paths of every container and TTL node.
	reapable map[string]struct{}
	// quotas holds the paths carrying a quota (ZooKeeper's PathTrie).
	quotas map[string]struct{}
}

// NewTree returns a tree holding "/", "/zookeeper", "/zookeeper/quota" and
// "/zookeeper/config", all with zxid 0 and empty data, as a fresh ZooKeeper
// server has. Their ACLs are open, except /zookeeper/config: world:anyone:r
// with aclVersion -1, so only the super user may reconfig (ZooKeeper's
// READ_ACL_UNSAFE on the config node).
func NewTree(opts Options) *Tree {
	t := newEmptyTree(opts)
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	root := &node{acl: t.acls.acquire(open), data: []byte{}}
	t.nodes[RootPath] = root
	t.dataSize += int64(len(RootPath))
	for _, p := range []string{ProcPath, QuotaPath, ConfigPath} {
		parent, name, _ := splitPath(p)
		list, aversion := open, int32(0)
		if p == ConfigPath {
			list, aversion = []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}, -1
		}
		t.nodes[p] = &node{acl: t.acls.acquire(list), aversion: aversion, data: []byte{}}
		t.lookup(parent).addChild(name)
		t.dataSize += int64(len(p))
	}
	return t
}

func newEmptyTree(opts Options) *Tree {
	return &Tree{
		opts:     opts,
		nodes:    make(map[string]*node),
		sessions: make(map[int64]*session),
		acls:     newACLCache(),
		reapable: make(map[string]struct{}),
		quotas:   make(map[string]struct{}),
	}
}

// lookup finds a node by path; "" is an alias of the root, as in ZooKeeper.
func (t *Tree) lookup(path string) *node {
	if path == "" {
		path = RootPath
	}
	return t.nodes[path]
}

// LastZxid is the zxid of the last applied transaction.
func (t *Tree) LastZxid() int64 { return t.lastZxid }

// Stats are tree-wide counters for monitoring (mntr).
type Stats struct {
	// Nodes is the number of znodes, the root included.
	Nodes int
	// ZnodeCount is ZooKeeper's zk_znode_count: Nodes+1, because ZooKeeper
	// indexes the root under both "" and "/".
	ZnodeCount int
	// Ephemerals is the number of ephemeral nodes (zk_ephemerals_count).
	Ephemerals int
	// DataSize is the sum of path and data lengths (zk_approximate_data_size).
	DataSize int64
	// Sessions is the number of live sessions.
	Sessions int
}

// Stats returns the tree's counters.
func (t *Tree) Stats() Stats {
	return Stats{
		Nodes:      len(t.nodes),
		ZnodeCount: len(t.nodes) + 1,
		Ephemerals: t.nEphem,
		DataSize:   t.dataSize,
		Sessions:   len(t.sessions),
	}
}
