package znode

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// snapshotRoundTrip writes tr's snapshot and reads it back.
func snapshotRoundTrip(t *testing.T, tr *Tree) *Tree {
	t.Helper()
	var buf bytes.Buffer
	if err := tr.WriteSnapshot(&buf); err != nil {
		t.Fatalf("WriteSnapshot: %v", err)
	}
	back, err := ReadSnapshot(&buf, tr.opts)
	if err != nil {
		t.Fatalf("ReadSnapshot: %v", err)
	}
	return back
}

// TestAuditQuotaPrefixRestart: nodes whose paths merely start like a
// quota path ("/zookeeper/quotaX", "/ab" beside a quota on "/a") are not
// under the quota, and a tree holding them snapshots and restores (issue
// 29, finding 2). Before the fix /zookeeper/quotaX/zookeeper_limits made
// a quota "X" that no snapshot could load: the member never restarted.
func TestAuditQuotaPrefixRestart(t *testing.T) {
	h := newHarness(t, Options{})
	setupQuota(h, "count=5,bytes=-1")
	stats := "/zookeeper/quota/q/" + QuotaStatNode
	before := h.data(stats)
	h.mustCreate("/qa", []byte("12345"), 0)
	h.mustCreate("/zookeeper/quotaX", nil, 0)
	h.mustCreate("/zookeeper/quotaX/"+QuotaLimitNode, []byte("count=1"), 0)
	h.mustCreate("/zookeeper/quotaX/"+QuotaStatNode, nil, 0)
	h.mustCreate("/X", nil, 0)
	if got := h.data(stats); got != before {
		t.Errorf("stats of /q after /qa: %q, want %q", got, before)
	}
	if got := h.data("/zookeeper/quotaX/" + QuotaStatNode); got != "" {
		t.Errorf("/zookeeper/quotaX/%s = %q: treated as a quota node", QuotaStatNode, got)
	}
	back := snapshotRoundTrip(t, h.tree)
	if d, _, err := back.GetData(stats, nil); err != nil || string(d) != before {
		t.Errorf("restored stats %q, %v", d, err)
	}
}

// TestAuditQuotaDeleteKeepsInner: deleting the limits of an outer quota
// keeps the quotas below it, as PathTrie.deletePath does in 3.9 (clears
// the property, keeps the children).
func TestAuditQuotaDeleteKeepsInner(t *testing.T) {
	h := newHarness(t, Options{})
	setupQuota(h, "count=5")
	h.mustCreate("/q/b", nil, 0)
	h.mustCreate("/zookeeper/quota/q/b", nil, 0)
	h.mustCreate("/zookeeper/quota/q/b/"+QuotaLimitNode, []byte("count=5"), 0)
	h.mustCreate("/zookeeper/quota/q/b/"+QuotaStatNode, nil, 0)
	if r := h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/zookeeper/quota/q/" + QuotaLimitNode, Version: -1}); r.Err != jute.OK {
		t.Fatalf("delete limits: %v", r.Err)
	}
	h.mustCreate("/q/b/c", []byte("xy"), 0)
	if got, want := h.data("/zookeeper/quota/q/b/"+QuotaStatNode), "count=2,bytes=2"; got != want {
		t.Errorf("inner stats %q, want %q", got, want)
	}
	snapshotRoundTrip(t, h.tree)
}

// TestAuditQuotaLookupLinear: finding the deepest quota of a path costs
// O(len(path)). Before the fix it hashed every ancestor's full path:
// quadratic, seconds for one long path, on every write replayed.
func TestAuditQuotaLookupLinear(t *testing.T) {
	h := newHarness(t, Options{})
	setupQuota(h, "count=5")
	for i := range 16 { // enough quotas that the old map hashed its keys
		p := "/zookeeper/quota/z" + strings.Repeat("z", i)
		h.mustCreate(p, nil, 0)
		h.mustCreate(p+"/"+QuotaLimitNode, []byte("count=5"), 0)
	}
	path := "/q" + strings.Repeat("/a", 200_000)
	start := time.Now()
	for range 3 {
		if lp := h.tree.quotaPrefix(path); lp != "/q" {
			t.Fatalf("quotaPrefix = %q", lp)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("3 lookups of a %d-byte path took %v", len(path), d)
	}
}
