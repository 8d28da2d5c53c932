package znode

import (
	"slices"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// Quota node names under /zookeeper/quota/<path>/.
const (
	QuotaLimitNode = "zookeeper_limits"
	QuotaStatNode  = "zookeeper_stats"
)

// Quotas follow ZooKeeper's DataTree: a quota on <path> exists from the
// creation of /zookeeper/quota/<path>/zookeeper_limits until its deletion
// (t.quotas is ZooKeeper's PathTrie, keyed by path components). Creating
// .../zookeeper_stats recounts the subtree into its data; every later create,
// delete and setData under the deepest quota'd prefix updates that stats
// node's "count=,bytes=" text in place (no version or mzxid change). Hard
// limits in zookeeper_limits are enforced only with Options.EnforceQuota.
//
// Only nodes below /zookeeper/quota/ are quota nodes. ZooKeeper tests
// parentName.startsWith("/zookeeper/quota") on create (and
// startsWith("/zookeeper") on delete), so its zookeeper_limits under
// /zookeeper/quotaX names a quota on /X, and one under other /zookeeper
// nodes makes its delete cut the path at a fixed offset or throw; zkraft
// treats those as plain nodes.

// quotaTarget returns the path a node under /zookeeper/quota/ governs:
// parentPath with the /zookeeper/quota prefix cut. ok is false for any
// other parent (/zookeeper/quota itself, /zookeeper/quotaX, ...).
func quotaTarget(parentPath string) (string, bool) {
	rest, ok := strings.CutPrefix(parentPath, QuotaPath)
	if !ok || len(rest) < 2 || rest[0] != '/' {
		return "", false
	}
	return rest, true
}

// quotaPrefix returns the deepest quota'd path that is path or one of its
// ancestors, "" when none (the root never carries a quota).
func (t *Tree) quotaPrefix(path string) string { return t.quotas.maxPrefix(path) }

// quotaCreated does the quota bookkeeping of a node creation.
func (a *applier) quotaCreated(path, parentPath, name string, n *node) {
	if target, ok := quotaTarget(parentPath); ok {
		switch name {
		case QuotaLimitNode:
			a.setQuota(target, true)
		case QuotaStatNode:
			a.recountQuota(target)
		}
	}
	if lp := a.t.quotaPrefix(path); lp != "" {
		a.updateQuotaStat(lp, 1, int64(len(n.data)))
	}
}

// quotaDeleted does the quota bookkeeping of a node deletion.
func (a *applier) quotaDeleted(path, parentPath, name string, n *node) {
	if target, ok := quotaTarget(parentPath); ok && name == QuotaLimitNode {
		a.setQuota(target, false)
	}
	if lp := a.t.quotaPrefix(path); lp != "" {
		a.updateQuotaStat(lp, -1, -int64(len(n.data)))
	}
}

// quotaDataChanged accounts a setData's size change.
func (a *applier) quotaDataChanged(path string, delta int64) {
	if lp := a.t.quotaPrefix(path); lp != "" {
		a.updateQuotaStat(lp, 0, delta)
	}
}

// setQuota gives p a quota or takes it away. Taking it away keeps the
// quotas below p, as PathTrie.deletePath does in ZooKeeper 3.9.
func (a *applier) setQuota(p string, on bool) {
	t := a.t
	if on {
		if key, changed := t.quotas.add(p); changed {
			a.onUndo(func() { t.quotas.remove(key) })
		}
		return
	}
	if key, changed := t.quotas.remove(p); changed {
		a.onUndo(func() { t.quotas.add(key) })
	}
}

// recountQuota rewrites p's stats node with the node count and data bytes
// of the subtree at p (p itself included).
func (a *applier) recountQuota(p string) {
	statPath := QuotaPath + p + "/" + QuotaStatNode
	sn := a.t.lookup(statPath)
	if sn == nil {
		return
	}
	var count, bytes int64
	if n := a.t.lookup(p); n != nil {
		walkNodes(n, func(n *node) {
			count++
			bytes += int64(len(n.data))
		})
	}
	st := statsTrack{}
	st.set("count", count)
	st.set("bytes", bytes)
	a.replaceData(statPath, sn, []byte(st.String()))
}

// updateQuotaStat adds to the count and bytes of lp's stats node.
func (a *applier) updateQuotaStat(lp string, count, bytes int64) {
	statPath := QuotaPath + lp + "/" + QuotaStatNode
	sn := a.t.lookup(statPath)
	if sn == nil {
		return
	}
	st := parseStatsTrack(sn.data)
	st.set("count", st.get("count")+count)
	st.set("bytes", st.get("bytes")+bytes)
	a.replaceData(statPath, sn, []byte(st.String()))
}

// replaceData swaps a node's data without touching its Stat metadata.
func (a *applier) replaceData(path string, n *node, data []byte) {
	a.t.preserve(n)
	old := n.data
	n.data = data
	a.t.dataSize += int64(len(data) - len(old))
	a.onUndo(func() {
		n.data = old
		a.t.dataSize -= int64(len(data) - len(old))
	})
}

// checkQuota is ZooKeeperServer.checkQuota: with Options.EnforceQuota, a
// change of count nodes and bytes bytes at path that would take the deepest
// quota above a hard limit fails with jute.ErrQuotaExceeded. Soft limits
// never fail.
func (t *Tree) checkQuota(path string, count int, bytes int64) error {
	if !t.opts.EnforceQuota {
		return nil
	}
	lp := t.quotaPrefix(path)
	if lp == "" {
		return nil
	}
	ln := t.lookup(QuotaPath + lp + "/" + QuotaLimitNode)
	if ln == nil {
		return nil
	}
	limits := parseStatsTrack(ln.data)
	checkCount := count != 0 && (limits.get("count") > -1 || limits.get("countHardLimit") > -1)
	checkBytes := bytes != 0 && (limits.get("bytes") > -1 || limits.get("byteHardLimit") > -1)
	if !checkCount && !checkBytes {
		return nil
	}
	sn := t.lookup(QuotaPath + lp + "/" + QuotaStatNode)
	if sn == nil {
		return nil
	}
	cur := parseStatsTrack(sn.data)
	if checkCount && hardExceeded(cur.get("count")+int64(count), limits.get("countHardLimit")) {
		return jute.ErrQuotaExceeded
	}
	if checkBytes && hardExceeded(cur.get("bytes")+bytes, limits.get("byteHardLimit")) {
		return jute.ErrQuotaExceeded
	}
	return nil
}

// hardExceeded reports a value over a hard limit (-1 = no hard limit).
func hardExceeded(v, hard int64) bool { return hard > -1 && v > hard }

// walkNodes visits n and every node below it, in no particular order.
func walkNodes(n *node, f func(*node)) {
	f(n)
	if kids := n.children(); kids != nil {
		kids.each(func(_ string, c *node) { walkNodes(c, f) })
	}
}

// statsTrack is ZooKeeper's StatsTrack: "key=value" pairs separated by ','
// or ';'. A missing key reads as -1.
type statsTrack map[string]int64

// parseStatsTrack parses stats text; malformed pairs are skipped (ZooKeeper
// would throw).
func parseStatsTrack(b []byte) statsTrack {
	st := statsTrack{}
	for _, pair := range strings.FieldsFunc(string(b), func(r rune) bool { return r == ',' || r == ';' }) {
		kv := strings.Split(pair, "=")
		for len(kv) > 0 && kv[len(kv)-1] == "" {
			kv = kv[:len(kv)-1] // Java's split drops trailing empty strings
		}
		if len(kv) < 2 {
			continue
		}
		v, err := strconv.ParseInt(kv[1], 10, 64)
		if err != nil {
			continue
		}
		st[kv[0]] = v
	}
	return st
}

func (s statsTrack) get(k string) int64 {
	if v, ok := s[k]; ok {
		return v
	}
	return -1
}

func (s statsTrack) set(k string, v int64) { s[k] = v }

// String formats like StatsTrack.toString: "count=N,bytes=M", then, if
// other keys exist, "=" and ";key=value" for each in sorted order.
func (s statsTrack) String() string {
	var b strings.Builder
	b.WriteString("count=" + strconv.FormatInt(s.get("count"), 10))
	b.WriteString(",bytes=" + strconv.FormatInt(s.get("bytes"), 10))
	var keys []string
	for k := range s {
		if k != "count" && k != "bytes" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b.String()
	}
	slices.Sort(keys)
	b.WriteByte('=')
	for _, k := range keys {
		b.WriteString(";" + k + "=" + strconv.FormatInt(s[k], 10))
	}
	return b.String()
}
