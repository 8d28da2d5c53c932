package migration

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
	"github.com/zkraft/zkraft/server"
)

// TestCutoverKeepsSessions: a zkraft observer of a ZooKeeper 3.8
// ensemble, its clients connected, cuts over to a zkraft ensemble of its
// own: no session expires, a client's ephemeral and watch survive, every
// acknowledged write of a writer running throughout is there, zxids go
// on above ZooKeeper's, ZooKeeper can be stopped, and a restart starts
// the server as the member. ZooKeeper has extended types
// (-Dzookeeper.extendedTypesEnabled=true) and the observer does not
// (issue #38): a TTL create from the observer's client gets ZooKeeper's
// leader's answer, one made on ZooKeeper is applied, and after the
// cutover both are there and "/" has ZooKeeper's child counters.
func TestCutoverKeepsSessions(t *testing.T) {
	e := zktest.Start(t, "-Dzookeeper.extendedTypesEnabled=true")
	metricsAddr := procs.FreeAddr(t)
	mhost, mport, _ := net.SplitHostPort(metricsAddr)
	obs := procs.StartFollower(t, e, e.ObserverID, "metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider",
		"metricsProvider.httpHost="+mhost, "metricsProvider.httpPort="+mport)
	scrape := func() string {
		t.Helper()
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if m := scrape(); !strings.Contains(m, "\nznode_count ") || strings.Contains(m, "zkraft_raft_term") {
		t.Errorf("an observer's metrics: want ZooKeeper's figures and no Raft's:\n%.2000s", m)
	}

	holder, holderEv, err := zk.Connect([]string{obs.ClientAddr}, 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	expired := make(chan struct{})
	go func() {
		for ev := range holderEv {
			if ev.State == zk.StateExpired {
				close(expired)
				return
			}
		}
	}()
	procs.WaitSession(t, holder)
	sid := holder.SessionID()
	if _, err := holder.Create("/lock", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Create("/w", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, _, watch, err := holder.GetW("/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.CreateTTL("/ttl-obs", []byte("o"), zk.FlagTTL, zk.WorldACL(zk.PermAll), time.Hour); err != nil {
		t.Fatalf("a TTL create through the observer, ZooKeeper's leader having extended types: %v", err)
	}

	// Only the super user may (the tree's "/" is open to anyone).
	if _, err := procs.Run(t, "migrate", "cutover", "--admin-addr", obs.AdminAddr, "--auth", "digest:someone:else"); err == nil || !strings.Contains(err.Error(), "only the super user") {
		t.Fatalf("cutover by a user who is not the super user: %v", err)
	}

	// A client still on ZooKeeper: the cutover refuses without --force.
	onZK := procs.ConnectTo(t, e.ClientAddrs()[0])
	if _, err := onZK.CreateTTL("/ttl-zk", []byte("z"), zk.FlagTTL, zk.WorldACL(zk.PermAll), time.Hour); err != nil {
		t.Fatal(err)
	}
	args := []string{"migrate", "cutover", "--admin-addr", obs.AdminAddr, "--auth", "digest:admin:secret", "--timeout", "30s"}
	if _, err := procs.Run(t, args...); err == nil || !strings.Contains(err.Error(), "not connected to a zkraft observer") {
		t.Fatalf("cutover with a session on ZooKeeper: %v", err)
	}
	onZK.Close()

	// A writer through the observer across the cutover.
	writer := procs.ConnectTo(t, obs.ClientAddr)
	if _, err := writer.Create("/acked", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p, err := writer.Create("/acked/w-", []byte(fmt.Sprint(i)), zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err == nil {
				mu.Lock()
				acked = append(acked, p)
				mu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	before := e.LastZxid(e.Leader())

	out, err := procs.Run(t, args...)
	if err != nil {
		t.Fatalf("cutover: %v\n%s", err, out)
	}
	t.Logf("cutover:\n%s", out)
	if !strings.Contains(out, "writes were held for") {
		t.Errorf("the cutover does not say how long writes were held:\n%s", out)
	}
	// "/" as ZooKeeper has it (no write reaches ZooKeeper any more) and
	// as the new ensemble does; the TTL nodes carried over.
	zkView := procs.ConnectTo(t, e.ClientAddrs()[0])
	_, zkRoot, err := zkView.Get("/")
	zkView.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, root, err := holder.Get("/"); err != nil || root.Cversion != zkRoot.Cversion || root.NumChildren != zkRoot.NumChildren || root.Pzxid != zkRoot.Pzxid {
		t.Errorf("\"/\" after the cutover: %+v %v; ZooKeeper's: %+v", root, err, zkRoot)
	}
	for _, p := range []string{"/ttl-obs", "/ttl-zk"} {
		if ok, st, err := holder.Exists(p); !ok || err != nil || st.EphemeralOwner != 0 {
			t.Errorf("%s after the cutover: %v %+v %v", p, ok, st, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-done

	if m := scrape(); !strings.Contains(m, "\nzkraft_raft_term ") || !strings.Contains(m, "\nznode_count ") {
		t.Errorf("the member's metrics after the cutover lack Raft's or ZooKeeper's figures:\n%.2000s", m)
	}

	// ZooKeeper goes; zkraft serves on.
	for _, s := range e.Servers {
		e.Kill(s)
	}
	if srvr, _ := procs.FourLetter(obs.ClientAddr, "srvr"); !strings.Contains(srvr, "Mode: standalone") && !strings.Contains(srvr, "Mode: leader") {
		t.Errorf("after the cutover srvr says:\n%s", srvr)
	}
	if _, err := holder.Set("/w", []byte("1"), -1); err != nil {
		t.Fatalf("a write after the cutover: %v", err)
	}
	select {
	case ev := <-watch:
		if ev.Type != zk.EventNodeDataChanged {
			t.Errorf("watch event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a watch set before the cutover did not fire after it")
	}
	_, st, err := holder.Get("/lock")
	if err != nil || st.EphemeralOwner != sid || holder.SessionID() != sid {
		t.Fatalf("the holder's ephemeral after the cutover: %+v %v (session %#x, was %#x)", st, err, holder.SessionID(), sid)
	}
	_, wst, err := holder.Get("/w")
	if err != nil || wst.Mzxid <= before {
		t.Errorf("a write after the cutover has zxid %#x, not above ZooKeeper's %#x (%v)", wst.Mzxid, before, err)
	}
	mu.Lock()
	n := len(acked)
	for _, p := range acked {
		if ok, _, err := holder.Exists(p); !ok || err != nil {
			t.Errorf("acknowledged write %s is missing after the cutover (%v)", p, err)
		}
	}
	mu.Unlock()
	if n < 20 {
		t.Errorf("the writer wrote only %d nodes", n)
	}
	select {
	case <-expired:
		t.Fatal("the holder's session expired")
	default:
	}

	// A restart starts as the member, with the tree and the session.
	obs.Kill()
	time.Sleep(200 * time.Millisecond)
	obs.Start(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if srvr, err := procs.FourLetter(obs.ClientAddr, "srvr"); err == nil && (strings.Contains(srvr, "Mode: standalone") || strings.Contains(srvr, "Mode: leader")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server does not serve as the member after a restart")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, st, err := holder.Get("/lock"); err != nil || st.EphemeralOwner != sid {
		t.Fatalf("the ephemeral after the restart: %+v %v", st, err)
	}
	select {
	case <-expired:
		t.Fatal("the holder's session expired")
	default:
	}
}

// TestCutoverOfThreeObservers: three zkraft observers of a ZooKeeper 3.8
// ensemble, each with clients, hold exactly ZooKeeper's tree, Stats and
// sessions just before the cutover, then become a three-member zkraft
// ensemble: a writer through one of them loses no acknowledged write,
// sessions on each keep their ephemerals and watches, and the new
// ensemble survives the loss of its leader once ZooKeeper is gone.
func TestCutoverOfThreeObservers(t *testing.T) {
	e := zktest.StartWithObservers(t, 3, nil)
	var obs []*procs.Member
	var admins []string
	for _, id := range e.ObserverIDs {
		m := procs.StartFollower(t, e, id)
		obs = append(obs, m)
		admins = append(admins, m.AdminAddr)
	}
	holders := make([]*zk.Conn, len(obs))
	for i, m := range obs {
		holders[i] = procs.ConnectTo(t, m.ClientAddr)
		if _, err := holders[i].Create(fmt.Sprintf("/held-%d", i), []byte{byte(i)}, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := holders[0].Create("/data", []byte("x"), 0, zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermCreate|zk.PermDelete)); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := holders[i%3].Create(fmt.Sprintf("/data/n-%d", i), []byte(fmt.Sprint(i)), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	_, _, watch, err := holders[1].ChildrenW("/data")
	if err != nil {
		t.Fatal(err)
	}

	// Just before the cutover: every observer's tree and sessions equal
	// ZooKeeper's.
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	if _, err := zc.Sync("/"); err != nil {
		t.Fatal(err)
	}
	want := walkTree(t, zc)
	for i, h := range holders {
		if _, err := h.Sync("/"); err != nil {
			t.Fatal(err)
		}
		if got := walkTree(t, h); got != want {
			t.Fatalf("observer %d's tree differs from ZooKeeper's:\nzookeeper:\n%s\nobserver:\n%s", e.ObserverIDs[i], want, got)
		}
	}
	zkSessions := e.Sessions(e.Leader())
	if len(zkSessions) == 0 {
		t.Fatal("no session in the dump of ZooKeeper's leader")
	}
	zc.Close()
	time.Sleep(200 * time.Millisecond) // its closeSession reaches the observers
	for _, m := range obs {
		st := migrationStatusOf(t, m)
		got := map[int64]bool{}
		for _, s := range st.TreeSessions {
			got[s] = true
		}
		for s := range zkSessions {
			if !got[s] && s != zc.SessionID() {
				t.Errorf("observer %d lacks ZooKeeper's session %#x", m.ID, s)
			}
		}
		for s := range got {
			if !zkSessions[s] {
				t.Errorf("observer %d holds session %#x, which ZooKeeper's leader does not", m.ID, s)
			}
		}
	}

	writer := holders[2]
	var mu sync.Mutex
	var acked []string
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if p, err := writer.Create("/data/w-", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll)); err == nil {
				mu.Lock()
				acked = append(acked, p)
				mu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	// A client following /zookeeper/config as Curator's EnsembleTracker
	// does: read it with a watch, and again at each event.
	var cfgMu sync.Mutex
	var tracked string
	go func() {
		for {
			data, _, ev, err := holders[1].GetW("/zookeeper/config")
			if err != nil {
				return
			}
			cfgMu.Lock()
			tracked = string(data)
			cfgMu.Unlock()
			if e := <-ev; e.Err != nil {
				return
			}
		}
	}()
	out, err := procs.Run(t, "migrate", "cutover", "--admin-addr", strings.Join(admins, ","), "--auth", "digest:admin:secret", "--timeout", "30s")
	if err != nil {
		t.Fatalf("cutover: %v\n%s", err, out)
	}
	t.Logf("cutover:\n%s", out)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-done
	for _, s := range e.Servers {
		e.Kill(s)
	}

	leaders := 0
	for _, m := range obs {
		if srvr, _ := procs.FourLetter(m.ClientAddr, "srvr"); strings.Contains(srvr, "Mode: leader") {
			leaders++
		} else if !strings.Contains(srvr, "Mode: follower") {
			t.Errorf("server %d after the cutover:\n%s", m.ID, srvr)
		}
	}
	if leaders != 1 {
		t.Errorf("%d leaders", leaders)
	}
	select {
	case ev := <-watch:
		if ev.Type != zk.EventNodeChildrenChanged {
			t.Errorf("watch event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Error("a child watch set before the cutover did not fire")
	}
	for i, h := range holders {
		if _, st, err := h.Get(fmt.Sprintf("/held-%d", i)); err != nil || st.EphemeralOwner != h.SessionID() {
			t.Errorf("holder %d's ephemeral after the cutover: %+v %v", i, st, err)
		}
	}
	check := procs.ConnectTo(t, obs[0].ClientAddr)
	if _, err := check.Sync("/"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, p := range acked {
		if ok, _, err := check.Exists(p); !ok || err != nil {
			t.Errorf("acknowledged write %s is missing (%v)", p, err)
		}
	}
	t.Logf("%d writes acknowledged across the cutover", len(acked))
	mu.Unlock()

	// /zookeeper/config is the new ensemble's, not ZooKeeper's.
	// Every member's line names its client address: clients that follow
	// the membership there (Curator's EnsembleTracker) move to them, not
	// to ZooKeeper's servers, which they learnt through the observers.
	deadline := time.Now().Add(10 * time.Second)
	for {
		cfg, _, err := check.Get("/zookeeper/config")
		if err == nil && strings.Contains(string(cfg), "server.4=") && !strings.Contains(string(cfg), "server.1=") {
			for _, line := range strings.Split(string(cfg), "\n") {
				if id, ok := strings.CutPrefix(line, "server."); ok {
					i := slices.IndexFunc(obs, func(m *procs.Member) bool { return strings.HasPrefix(id, fmt.Sprintf("%d=", m.ID)) })
					if i < 0 || !strings.HasSuffix(line, ";"+obs[i].ClientAddr) {
						t.Errorf("/zookeeper/config's %q does not name a member's client address", line)
					}
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/zookeeper/config after the cutover: %q, %v", cfg, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The tracker heard of the new membership: its watch, fired while
	// reads still went to the observer's tree, fired again after.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		cfgMu.Lock()
		cfg := tracked
		cfgMu.Unlock()
		if strings.Contains(cfg, "server.4=") && !strings.Contains(cfg, "server.1=") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a client following /zookeeper/config's watches still has %q", cfg)
		}
	}

	// A real ensemble: it survives its leader's loss. The leader is found
	// first and killed after: killed as it was found, its successor (elected
	// within milliseconds) was found leading too and killed as well.
	var leader *procs.Member
	var survivor *zk.Conn
	for i, m := range obs {
		if srvr, _ := procs.FourLetter(m.ClientAddr, "srvr"); leader == nil && strings.Contains(srvr, "Mode: leader") {
			leader = m
		} else {
			survivor = holders[i]
		}
	}
	if leader == nil {
		t.Fatal("no member of the new ensemble leads")
	}
	leader.Kill()
	deadline = time.Now().Add(20 * time.Second)
	for {
		_, err := survivor.Create("/after-leader-loss-", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write after the new ensemble lost its leader: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// walkTree renders every znode's path, data, Stat and ACL, except
// /zookeeper's, in order.
func walkTree(t *testing.T, c *zk.Conn) string {
	t.Helper()
	var b strings.Builder
	var walk func(p string)
	walk = func(p string) {
		data, st, err := c.Get(p)
		if err != nil {
			t.Fatalf("get %s: %v", p, err)
		}
		acl, _, err := c.GetACL(p)
		if err != nil {
			t.Fatalf("getACL %s: %v", p, err)
		}
		fmt.Fprintf(&b, "%s %q %+v %v\n", p, data, *st, acl)
		kids, _, err := c.Children(p)
		if err != nil {
			t.Fatalf("children %s: %v", p, err)
		}
		slices.Sort(kids)
		for _, k := range kids {
			if p == "/" && k == "zookeeper" {
				continue
			}
			walk(strings.TrimSuffix(p, "/") + "/" + k)
		}
	}
	walk("/")
	return b.String()
}

// migrationStatusOf asks a following server for its migration status.
func migrationStatusOf(t *testing.T, m *procs.Member) server.MigrationStatus {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+m.AdminAddr+"/commands/migration", nil)
	req.Header.Set("Authorization", "digest admin:secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st server.MigrationStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}
