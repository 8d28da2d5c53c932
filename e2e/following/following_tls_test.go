package following

import (
	"crypto/x509/pkix"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/security/zktls/zktlstest"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// quorumTLSLines are the zoo.cfg lines of quorum TLS with PEM stores, as
// ZooKeeper 3.8 and zkraft both read them.
func quorumTLSLines(keyStore, trustStore string) []string {
	return []string{"sslQuorum=true",
		"ssl.quorum.keyStore.location=" + keyStore, "ssl.quorum.keyStore.type=PEM",
		"ssl.quorum.trustStore.location=" + trustStore, "ssl.quorum.trustStore.type=PEM"}
}

// readWriteThrough checks a following observer from both sides: oc, its
// client, reads ZooKeeper's /before ("zk") after a sync, and writes
// /through ("obs"), which zc, ZooKeeper's client, reads after a sync.
func readWriteThrough(t *testing.T, zc, oc *zk.Conn) {
	t.Helper()
	if _, err := oc.Sync("/before"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := oc.Get("/before"); err != nil || string(data) != "zk" {
		t.Fatalf("the observer reads %q, %v; want ZooKeeper's write", data, err)
	}
	if _, err := oc.Create("/through", []byte("obs"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create through the observer: %v", err)
	}
	if _, err := zc.Sync("/through"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := zc.Get("/through"); err != nil || string(data) != "obs" {
		t.Fatalf("ZooKeeper reads %q, %v; want the observer's write", data, err)
	}
}

// TestFollowZooKeeperQuorumTLS: a zkraft server follows a ZooKeeper 3.8
// ensemble whose quorum traffic is mutual TLS (sslQuorum=true on every
// server) when its zoo.cfg has the same ssl.quorum.* settings, as a
// ZooKeeper observer's: a client of the observer reads a write made on
// ZooKeeper and writes through it.
func TestFollowZooKeeperQuorumTLS(t *testing.T) {
	t.Parallel()
	ks, ts, err := zktlstest.PEMStores(t.TempDir(), pkix.Name{CommonName: "quorum", Organization: []string{"zkraft"}})
	if err != nil {
		t.Fatal(err)
	}
	tlsLines := quorumTLSLines(ks, ts)
	e := zktest.StartWith(t, tlsLines)
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	if _, err := zc.Create("/before", []byte("zk"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	obs := procs.StartFollower(t, e, e.ObserverID, tlsLines...)
	oc := procs.ConnectTo(t, obs.ClientAddr)
	readWriteThrough(t, zc, oc)
	// A later write on ZooKeeper streams to the observer over TLS.
	if _, err := zc.Set("/before", []byte("later"), -1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _, err := oc.Get("/before")
		if err == nil && string(data) == "later" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the observer reads %q, %v; want the streamed write", data, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFollowZooKeeperQuorumTLSUntrusted: an observer whose trust store
// does not hold the authority of the ensemble's certificates does not
// follow it: it keeps running, logs why once, and serves no tree.
func TestFollowZooKeeperQuorumTLSUntrusted(t *testing.T) {
	t.Parallel()
	ks, ts, err := zktlstest.PEMStores(t.TempDir(), pkix.Name{CommonName: "quorum", Organization: []string{"zkraft"}})
	if err != nil {
		t.Fatal(err)
	}
	e := zktest.StartWith(t, quorumTLSLines(ks, ts))
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	if _, err := zc.Create("/before", []byte("zk"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// Stores of another authority: neither side trusts the other.
	otherKS, otherTS, err := zktlstest.PEMStores(t.TempDir(), pkix.Name{CommonName: "stranger"})
	if err != nil {
		t.Fatal(err)
	}
	obs := procs.LaunchFollower(t, e, e.ObserverID, quorumTLSLines(otherKS, otherTS)...)
	const why = "the quorum TLS handshake failed"
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(obs.LogPath)
		if strings.Contains(string(b), why) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the observer's log does not say %q:\n%s", why, procs.Tail(string(b), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // a few retry rounds
	if obs.Cmd.ProcessState != nil {
		t.Fatalf("the observer exited: %v", obs.Cmd.ProcessState)
	}
	b, _ := os.ReadFile(obs.LogPath)
	if n := strings.Count(string(b), why); n > len(e.Servers) {
		t.Errorf("the handshake failure is logged %d times in 3s: once per server is enough", n)
	}
	if strings.Contains(string(b), "up to date") {
		t.Errorf("the observer synced without a trusted certificate:\n%s", procs.Tail(string(b), 4000))
	}
}

// TestFollowZooKeeperQuorumPortUnification: a ZooKeeper ensemble moving
// its quorum to TLS one server at a time runs sslQuorum=true with
// portUnification=true, its quorum ports taking TLS and plain
// connections alike. A zkraft observer follows it either way: plain
// without the ssl.quorum.* settings, TLS with them.
func TestFollowZooKeeperQuorumPortUnification(t *testing.T) {
	t.Parallel()
	ks, ts, err := zktlstest.PEMStores(t.TempDir(), pkix.Name{CommonName: "quorum", Organization: []string{"zkraft"}})
	if err != nil {
		t.Fatal(err)
	}
	tlsLines := quorumTLSLines(ks, ts)
	e := zktest.StartWithObservers(t, 2, append([]string{"portUnification=true"}, tlsLines...))
	zc := procs.ConnectTo(t, e.ClientAddrs()...)
	if _, err := zc.Create("/unified", []byte("zk"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	plain := procs.StartFollower(t, e, e.ObserverIDs[0], "portUnification=true")
	secure := procs.StartFollower(t, e, e.ObserverIDs[1], append([]string{"portUnification=true"}, tlsLines...)...)
	for name, m := range map[string]*procs.Member{"plain": plain, "TLS": secure} {
		c := procs.ConnectTo(t, m.ClientAddr)
		if _, err := c.Sync("/unified"); err != nil {
			t.Fatalf("%s observer: sync: %v", name, err)
		}
		if data, _, err := c.Get("/unified"); err != nil || string(data) != "zk" {
			t.Errorf("the %s observer reads %q, %v; want ZooKeeper's write", name, data, err)
		}
		if b, _ := os.ReadFile(m.LogPath); strings.Contains(string(b), "portUnification") {
			t.Errorf("the %s observer does not know portUnification:\n%s", name, procs.Tail(string(b), 2000))
		}
	}
}
