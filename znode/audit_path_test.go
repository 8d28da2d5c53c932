package znode

import (
	"bytes"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestAuditDeleteAlias: delete("//x") must answer NoNode and change
// nothing, as ZooKeeper (whose DataTree looks "//x" up as that exact
// string) does (issue 29, finding 1). Before the fix it deleted "/x",
// fired its event for "//x" and left the owner's ephemeral index naming
// "/x", so closing the session later deleted whatever then sat at "/x".
func TestAuditDeleteAlias(t *testing.T) {
	for _, alias := range []string{"//x", "/x/", "//x/"} {
		t.Run(alias, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.mustCreate("/x", nil, jute.FlagEphemeral)
			r := h.write(jute.OpDelete, &jute.PathVersionRequest{Path: alias, Version: -1})
			if r.Err != jute.ErrNoNode || len(r.Events) != 0 {
				t.Fatalf("delete %q: %v, events %v; want NoNode and none", alias, r.Err, r.Events)
			}
			if _, err := h.tree.Exists("/x", nil); err != nil {
				t.Fatalf("/x after delete %q: %v", alias, err)
			}
			if err := h.tree.Verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAuditCloseSessionStaleEphemeral: the aliased delete followed by a
// persistent node at the same path and a closeSession must leave the new
// node alone, and every snapshot taken on the way must load.
func TestAuditCloseSessionStaleEphemeral(t *testing.T) {
	h := newHarness(t, Options{})
	h.mustCreate("/x", nil, jute.FlagEphemeral)
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "//x", Version: -1})
	// Another session's node at /x (if the alias had deleted the ephemeral).
	other := int64(0x200)
	h.apply(&Txn{Type: jute.OpCreateSession, Session: other, Timeout: 30000, Passwd: make([]byte, 16)})
	h.sess = other
	h.create("/x", nil, jute.FlagPersistent)
	h.create("/x/child", nil, jute.FlagPersistent)
	h.sess = testSession
	h.apply(&Txn{Type: jute.OpCloseSession, Session: testSession})
	if _, err := h.tree.Exists("/x", nil); err != nil {
		// The ephemeral itself is gone with its session: that is right.
		// What must not happen is a persistent /x with children vanishing.
		if _, cerr := h.tree.Exists("/x/child", nil); cerr == nil {
			t.Fatalf("/x gone but /x/child still there")
		}
	}
	var buf bytes.Buffer
	if err := h.tree.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSnapshot(&buf, Options{}); err != nil {
		t.Fatalf("snapshot after closeSession does not load: %v", err)
	}
	if st := h.tree.Stats(); st.Nodes != len(allNodes(h.tree)) {
		t.Fatalf("node count %d, %d nodes in the tree", st.Nodes, len(allNodes(h.tree)))
	}
}

// TestAuditDeleteContainerAlias: the reaper's delete through an alias of
// an eligible container's path answers NoNode and deletes nothing.
func TestAuditDeleteContainerAlias(t *testing.T) {
	h := newHarness(t, Options{})
	if r := h.write(jute.OpCreateContainer, &jute.CreateRequest{Path: "/c", ACL: openACL, Flags: jute.FlagContainer}); r.Err != jute.OK {
		t.Fatalf("createContainer /c: %v", r.Err)
	}
	h.mustCreate("/c/k", nil, jute.FlagPersistent)
	h.write(jute.OpDelete, &jute.PathVersionRequest{Path: "/c/k", Version: -1})
	r := h.apply(NewDeleteContainerTxn("//c", h.now))
	if r.Err != jute.ErrNoNode {
		t.Fatalf("deleteContainer //c: %v, want NoNode", r.Err)
	}
	if _, err := h.tree.Exists("/c", nil); err != nil {
		t.Fatalf("/c after deleteContainer //c: %v", err)
	}
	if r := h.apply(NewDeleteContainerTxn("/c", h.now)); r.Err != jute.OK {
		t.Fatalf("deleteContainer /c: %v", r.Err)
	}
}
