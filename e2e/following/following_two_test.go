package following

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestTwoObserversOfOneEnsemble: two zkraft servers follow the same
// ZooKeeper ensemble as its observers 4 and 5. A write through A is read
// through B after a sync, a watch set on B fires for it, and a session
// opened on A moves to B keeping its ephemeral and writing there.
func TestTwoObserversOfOneEnsemble(t *testing.T) {
	t.Parallel()
	e := zktest.StartWithObservers(t, 2, nil)
	a := procs.StartFollower(t, e, e.ObserverIDs[0])
	b := procs.StartFollower(t, e, e.ObserverIDs[1])
	ca := procs.ConnectTo(t, a.ClientAddr)
	cb := procs.ConnectTo(t, b.ClientAddr)
	if _, err := ca.Create("/two", []byte("a"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Sync("/two"); err != nil {
		t.Fatal(err)
	}
	_, ast, err := ca.Get("/two")
	if err != nil {
		t.Fatal(err)
	}
	data, bst, err := cb.Get("/two")
	if err != nil || string(data) != "a" || *bst != *ast {
		t.Fatalf("B reads %q %+v %v after sync; A wrote %+v", data, bst, err, ast)
	}
	_, _, w, err := cb.GetW("/two")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Set("/two", []byte("b"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w:
		if ev.Type != zk.EventNodeDataChanged {
			t.Errorf("watch on B: %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a watch on B did not fire for a write through A")
	}

	d, c, waitState := movingClient(t, a.ClientAddr)
	waitState(zk.StateHasSession)
	id := c.SessionID()
	if _, err := c.Create("/two/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	d.moveTo(b.ClientAddr)
	waitState(zk.StateHasSession)
	if c.SessionID() != id {
		t.Fatalf("session %#x became %#x", id, c.SessionID())
	}
	if _, err := c.Set("/two/eph", []byte("on b"), -1); err != nil {
		t.Fatalf("write of the session moved to B: %v", err)
	}
	_, st, err := c.Get("/two/eph")
	if err != nil || st.EphemeralOwner != id {
		t.Fatalf("the ephemeral on B: %+v %v", st, err)
	}
	sid := fmt.Sprintf("sid=0x%x", id)
	if !strings.Contains(fourletter.Ask(b.ClientAddr, "cons"), sid) {
		t.Error("B's cons does not list the moved session")
	}
	if _, _, _, err := cb.GetW("/two"); err != nil {
		t.Fatal(err)
	}
	checkObserverWords(t, e, b, sid)
}

// checkObserverWords asks obs every four-letter word: each answers, srvr
// and mntr say observer with ZooKeeper's last zxid and znode count, cons
// lists the session sid and wchp the watch on /two.
func checkObserverWords(t *testing.T, e *zktest.Ensemble, obs *procs.Member, sid string) {
	t.Helper()
	lead := e.Leader()
	want := fmt.Sprintf("0x%x", e.LastZxid(lead))
	deadline := time.Now().Add(10 * time.Second)
	for fourletter.Field(fourletter.Ask(obs.ClientAddr, "srvr"), "Zxid: ") != want {
		if time.Now().After(deadline) {
			t.Fatalf("srvr on the observer:\n%s\nZooKeeper's leader is at %s", fourletter.Ask(obs.ClientAddr, "srvr"), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, w := range []string{"ruok", "srvr", "stat", "mntr", "conf", "cons", "envi", "dirs", "dump", "wchs", "wchc",
		"wchp", "isro", "hash", "crst", "srst"} {
		out, err := procs.FourLetter(obs.ClientAddr, w)
		if err != nil || strings.TrimSpace(out) == "" {
			t.Errorf("%s on the observer: %q, %v", w, out, err)
		}
	}
	if out := fourletter.Ask(obs.ClientAddr, "srvr"); !strings.Contains(out, "Mode: observer") {
		t.Errorf("srvr after the others:\n%s", out)
	}
	if out := fourletter.Ask(obs.ClientAddr, "cons"); !strings.Contains(out, sid) {
		t.Errorf("cons lacks %s:\n%s", sid, out)
	}
	if out := fourletter.Ask(obs.ClientAddr, "wchp"); !strings.Contains(out, "/two") {
		t.Errorf("wchp lacks /two:\n%s", out)
	}
	stat := fourletter.Ask(obs.ClientAddr, "stat")
	for _, s := range []string{"Mode: observer", "Zxid: " + want} {
		if !strings.Contains(stat, s) {
			t.Errorf("stat on the observer lacks %q:\n%s", s, stat)
		}
	}
	mntr := func(addr, key string) string {
		for _, line := range strings.Split(fourletter.Ask(addr, "mntr"), "\n") {
			if v, ok := strings.CutPrefix(line, key+"\t"); ok {
				return v
			}
		}
		return ""
	}
	// conf names the ensemble (the observer's own line, peerType 1), and
	// the AdminServer's leader command ZooKeeper's leader.
	conf := fourletter.Ask(obs.ClientAddr, "conf")
	for _, s := range []string{"peerType=1", "membership: ", strings.Replace(e.ServerLines[0], ";", ":participant;", 1)} {
		if !strings.Contains(conf, s) {
			t.Errorf("conf on the observer lacks %q:\n%s", s, conf)
		}
	}
	var leader struct {
		IsLeader bool `json:"is_leader"`
		LeaderID int  `json:"leader_id"`
	}
	resp, err := http.Get("http://" + obs.AdminAddr + "/commands/leader")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&leader)
	resp.Body.Close()
	if err != nil || leader.IsLeader || leader.LeaderID != lead.ID {
		t.Errorf("the AdminServer's leader on the observer: %+v, %v; ZooKeeper's leader is server %d", leader, err, lead.ID)
	}
	if st := mntr(obs.ClientAddr, "zk_server_state"); st != "observer" {
		t.Errorf("mntr zk_server_state %q", st)
	}
	for _, key := range []string{"zk_znode_count", "zk_quorum_size"} {
		if o, z := mntr(obs.ClientAddr, key), mntr(lead.ClientAddr, key); o != z || o == "" {
			t.Errorf("mntr %s: the observer %q, ZooKeeper's leader %q", key, o, z)
		}
	}
}
