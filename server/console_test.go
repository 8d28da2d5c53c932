package server

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/console"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/session"
)

func TestConsoleSettings(t *testing.T) {
	if d := DefaultConfig(); d.ConsoleEnabled || d.ConsoleWritable {
		t.Fatalf("default console settings: %+v", d)
	}
	st, logs := mustApply(t, "dataDir=/d\nconsole.enabled=true\nconsole.readOnly=false\n")
	if !st.ConsoleEnabled || !st.ConsoleWritable || logs.Len() != 0 {
		t.Fatalf("console keys: enabled %v writable %v, warnings %v", st.ConsoleEnabled, st.ConsoleWritable, logs.All())
	}
	if err := st.checkConsole(); err != nil {
		t.Fatalf("console on the default AdminServer: %v", err)
	}
	st, _ = mustApply(t, "dataDir=/d\nconsole.enabled=true\n")
	if st.ConsoleWritable {
		t.Fatal("console.readOnly does not default to true")
	}
	st, _ = mustApply(t, "dataDir=/d\nconsole.enabled=true\nconsole.allowedHosts=zk1.example.com, zk1\n")
	if len(st.ConsoleAllowedHosts) != 2 || st.ConsoleAllowedHosts[0] != "zk1.example.com" || st.ConsoleAllowedHosts[1] != "zk1" {
		t.Fatalf("console.allowedHosts: %q", st.ConsoleAllowedHosts)
	}
	if _, err := apply(t, "dataDir=/d\nconsole.enabled=yes\n"); err == nil || !strings.Contains(err.Error(), "console.enabled") {
		t.Fatalf("console.enabled=yes: %v", err)
	}
	st, _ = mustApply(t, "dataDir=/d\nconsole.enabled=true\nadmin.enableServer=false\n")
	if err := st.checkConsole(); err == nil || !strings.Contains(err.Error(), "--admin-addr") {
		t.Fatalf("console without an AdminServer: %v", err)
	}
	st = DefaultConfig()
	st.ConsoleWritable = true
	if err := st.checkConsole(); err == nil {
		t.Fatal("a writable console that is off was accepted")
	}
	st, _ = mustApply(t, "dataDir=/d\nconsole.enabled=true\nconsole.heartbeatTimeout=45000\n")
	if st.ConsoleHeartbeat != 45*time.Second || st.checkConsole() != nil {
		t.Fatalf("console.heartbeatTimeout=45000: %v, %v", st.ConsoleHeartbeat, st.checkConsole())
	}
	st, _ = mustApply(t, "dataDir=/d\nconsole.enabled=true\nconsole.heartbeatTimeout=1s\n")
	if err := st.checkConsole(); err == nil || !strings.Contains(err.Error(), "console.heartbeatTimeout") {
		t.Fatalf("a heartbeat timeout of 1 s: %v", err)
	}
}

func TestLoopbackAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:2181": "127.0.0.1:2181", "[::]:2181": "[::1]:2181", "10.1.2.3:2181": "10.1.2.3:2181",
	} {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := loopbackAddr(a); got != want {
			t.Errorf("loopbackAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestEnsembleViewSessionsBounded(t *testing.T) {
	node, err := ensemble.Open(ensemble.Config{DataDir: t.TempDir(), TickTime: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := session.New(session.Config{TickTime: 200 * time.Millisecond}, node)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); node.Close() })
	owned := map[int64]int{} // session id → ephemerals
	for i := 1; i <= 3; i++ {
		conn, ev, err := zk.Connect([]string{ln.Addr().String()}, 4*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conn.Close)
		for e := range ev {
			if e.State == zk.StateHasSession {
				break
			}
		}
		for j := 0; j < i; j++ {
			if _, err := conn.Create(fmt.Sprintf("/s%d-%d", i, j), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
		}
		owned[conn.SessionID()] = i
	}
	v := &ensembleView{node: node}
	list, total := v.Sessions(2, 2)
	if total != 3 || len(list) != 2 {
		t.Fatalf("Sessions(2, 2): %d listed of %d, want 2 of 3", len(list), total)
	}
	paths := 0
	for _, s := range list {
		if s.NumEphemerals != owned[s.ID] || len(s.Ephemerals) != 0 && len(s.Ephemerals) != s.NumEphemerals {
			t.Fatalf("session %#x: %d of %d listed, owns %d", s.ID, len(s.Ephemerals), s.NumEphemerals, owned[s.ID])
		}
		paths += len(s.Ephemerals)
	}
	if paths == 0 || paths > 2 {
		t.Fatalf("Sessions(2, 2) listed %d paths, want 1 or 2", paths)
	}
	list, total = v.Sessions(10, 100)
	paths = 0
	for _, s := range list {
		paths += len(s.Ephemerals)
	}
	if total != 3 || len(list) != 3 || paths != 6 {
		t.Fatalf("Sessions(10, 100): %d sessions of %d, %d paths; want 3 of 3, 6", len(list), total, paths)
	}
}

// TestConsolePeersClientAddr: --peers entries may carry each member's
// client address as a zoo.cfg server line does (;host:port or ;port, the
// port on the member's host), which the console's ensemble page asks; a
// member whose client address is known to no one shows as role "unknown"
// with the reason, not as a member that did not answer (down).
func TestConsolePeersClientAddr(t *testing.T) {
	m, err := parsePeersFlag("1=127.0.0.1:7001;127.0.0.1:2181,2=127.0.0.2:7002;2182,3=127.0.0.3:7003:observer;127.0.0.3:2183,4=127.0.0.4:7004")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1:2181", "127.0.0.2:2182", "127.0.0.3:2183", ""}
	for i, p := range sortPeers(m) {
		if got := memberClientAddr(p); got != want[i] {
			t.Errorf("member %d: client address %q, want %q", p.ID, got, want[i])
		}
	}
	if !m[2].Observer || m[2].Addr != "127.0.0.3:7003" {
		t.Fatalf("observer with a client address: %+v", m[2])
	}
	if _, err := parsePeersFlag("1=127.0.0.1:7001;"); err == nil {
		t.Fatal("an empty client address was accepted")
	}
	unknown := probeForConsole("", time.Second)
	if unknown.Role != console.RoleUnknown || !strings.Contains(unknown.Error, "--peers") {
		t.Fatalf("a member without a client address: %+v", unknown)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if down := probeForConsole(addr, time.Second); down.Role != "" || down.Error == "" {
		t.Fatalf("a member that does not answer: %+v", down)
	}
}
