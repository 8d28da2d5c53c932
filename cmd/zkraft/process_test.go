package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
)

// buildBinary compiles this command once per test run.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func zkraftBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zkraft-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "zkraft")
		args := append([]string{"build", "-o", binPath}, testenv.BuildFlags()...)
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// freeAddr picks a free port below the kernel's ephemeral range
// (internal/testing/testport): from a port picked by listening on :0, two
// ensembles were once handed the same member port, and a member that
// heard another ensemble's leader found itself removed from the
// configuration and shut its Raft down ("raft is already shutdown").
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := testport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// member is one zkraft server process of a test ensemble.
type member struct {
	id         int
	clientAddr string
	adminAddr  string // its AdminServer
	cfgPath    string
	logPath    string
	logLevel   string   // --log-level; "" is warn
	logFormat  string   // --log-format; "" is console
	env        []string // added to the test's environment (GOGC=...)
	flags      []string // more flags of zkraft server
	cmd        *exec.Cmd
}

func (m *member) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	level := m.logLevel
	if level == "" {
		level = "warn"
	}
	args := []string{"server", "--config", m.cfgPath, "--log-level", level}
	if m.logFormat != "" {
		args = append(args, "--log-format", m.logFormat)
	}
	args = append(args, m.flags...)
	m.cmd = exec.Command(zkraftBinary(t), args...)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	if m.env != nil {
		m.cmd.Env = append(os.Environ(), m.env...)
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = m.cmd.Wait(); logf.Close() }()
}

func (m *member) kill() { _ = m.cmd.Process.Kill() }

func (m *member) mode() string {
	for _, line := range strings.Split(fourletter.Ask(m.clientAddr, "srvr"), "\n") {
		if v, ok := strings.CutPrefix(line, "Mode: "); ok {
			return v
		}
	}
	return ""
}

// dynamicMembers, among startEnsemble's extra lines (a zoo.cfg comment),
// puts the server lines in a dynamic config file that zoo.cfg names, as
// ZooKeeper 3.5+ does once reconfig is enabled.
const dynamicMembers = "# members in dynamicConfigFile"

// startEnsemble starts size members from zoo.cfg files holding extra.
func startEnsemble(t *testing.T, size int, extra ...string) []*member {
	return startPreparedEnsemble(t, size, nil, extra...)
}

// startPreparedEnsemble is startEnsemble with prepare run on each member
// once its zoo.cfg and myid are written, before it starts.
func startPreparedEnsemble(t *testing.T, size int, prepare func(*member), extra ...string) []*member {
	t.Helper()
	root := t.TempDir()
	var lines []string
	members := make([]*member, size)
	for i := range members {
		members[i] = &member{id: i + 1, clientAddr: freeAddr(t), adminAddr: freeAddr(t)}
		lines = append(lines, fmt.Sprintf("server.%d=%s:0;%s", i+1, freeAddr(t), members[i].clientAddr))
	}
	for _, m := range members {
		dir := filepath.Join(root, fmt.Sprint(m.id))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprintf("%d\n", m.id)), 0o644); err != nil {
			t.Fatal(err)
		}
		// syncLimit=20 ticks of 500ms give the 10s election timeout of the
		// usual zoo.cfg (electionTimeout): a machine running every
		// package's tests at once deposed leaders mid-test when it was a
		// fraction of a second (a session create lost with its leader).
		adminHost, adminPort, _ := strings.Cut(m.adminAddr, ":")
		memberLines := strings.Join(lines, "\n")
		if slices.Contains(extra, dynamicMembers) {
			dyn := filepath.Join(dir, "zoo.cfg.dynamic.100000000")
			if err := os.WriteFile(dyn, []byte(memberLines+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			memberLines = "dynamicConfigFile=" + dyn
		}
		cfg := fmt.Sprintf("tickTime=500\ninitLimit=10\nsyncLimit=20\ndataDir=%s\nmaxClientCnxns=0\n4lw.commands.whitelist=*\n"+
			"admin.serverAddress=%s\nadmin.serverPort=%s\n%s\n%s\n",
			dir, adminHost, adminPort, strings.Join(extra, "\n"), memberLines)
		m.cfgPath = filepath.Join(dir, "zoo.cfg")
		m.logPath = filepath.Join(dir, "zkraft.log")
		if err := os.WriteFile(m.cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if prepare != nil {
			prepare(m)
		}
		m.start(t)
	}
	t.Cleanup(func() {
		for _, m := range members {
			m.kill()
		}
		if t.Failed() {
			for _, m := range members {
				b, _ := os.ReadFile(m.logPath)
				t.Logf("member %d log:\n%s", m.id, tail(string(b), 40))
			}
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for _, m := range members {
		for m.mode() == "" {
			if time.Now().After(deadline) {
				t.Fatalf("member %d not serving", m.id)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return members
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func leaderOf(t *testing.T, members []*member, except *member) *member {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range members {
			if m != except && m.mode() == "leader" {
				return m
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no leader")
	return nil
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...interface{}) {}

// createLoad has n clients, spread over addrs, create sequential znodes
// under /load until stop returns; stop waits for them and returns every
// acknowledged path.
func createLoad(t *testing.T, addrs []string, n int) (conns []*zk.Conn, stop func() []string) {
	t.Helper()
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		done  = make(chan struct{})
	)
	for i := 0; i < n; i++ {
		order := append(addrs[i%len(addrs):], addrs[:i%len(addrs)]...) // spread first choices
		c, _, err := zk.Connect(order, 6*time.Second, zk.WithLogger(quietLogger{}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		conns = append(conns, c)
		wg.Add(1)
		go func(c *zk.Conn, i int) {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				p, err := c.Create(fmt.Sprintf("/load/c%d-", i), []byte("v"), zk.FlagSequence, zk.WorldACL(zk.PermAll))
				if err == nil {
					mu.Lock()
					acked = append(acked, p)
					mu.Unlock()
				}
			}
		}(c, i)
	}
	return conns, func() []string {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return acked
	}
}

// TestEnsembleSurvivesLeaderKill runs three zkraft processes from zoo.cfg
// files, spreads go-zookeeper clients over them, kills -9 the leader under
// load, and checks that every acknowledged sequential create survives with
// a unique name and that no session was lost.
func TestEnsembleSurvivesLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := startEnsemble(t, 3)
	addrs := clientAddrs(members)
	admin := connectAdmin(t, addrs)
	defer admin.Close()
	if _, err := admin.Create("/load", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	const clients = 4
	conns, stopLoad := createLoad(t, addrs, clients)
	sessions := make([]int64, clients)
	time.Sleep(1500 * time.Millisecond)
	for i, c := range conns {
		sessions[i] = c.SessionID()
	}
	leader := leaderOf(t, members, nil)
	killedAt := time.Now()
	leader.kill()
	newLeader := leaderOf(t, members, leader)
	t.Logf("member %d killed; member %d leads after %v", leader.id, newLeader.id, time.Since(killedAt))
	time.Sleep(3 * time.Second)
	acked := stopLoad()

	seen := map[string]bool{}
	for _, p := range acked {
		if seen[p] {
			t.Fatalf("duplicate sequential name %s", p)
		}
		seen[p] = true
	}
	requirePresent(t, admin, acked)
	for i, c := range conns {
		if c.SessionID() != sessions[i] || c.State() == zk.StateExpired {
			t.Fatalf("client %d lost its session: %x -> %x (%v)", i, sessions[i], c.SessionID(), c.State())
		}
	}
	t.Logf("%d acknowledged creates, all present and unique; %d sessions survived", len(acked), clients)

	leader.start(t) // the killed member rejoins and catches up
	deadline := time.Now().Add(20 * time.Second)
	want := fourletter.Field(fourletter.Ask(newLeader.clientAddr, "srvr"), "Node count: ")
	for fourletter.Field(fourletter.Ask(leader.clientAddr, "srvr"), "Node count: ") != want {
		if time.Now().After(deadline) {
			t.Fatalf("restarted member did not catch up: %q vs %q", fourletter.Field(fourletter.Ask(leader.clientAddr, "srvr"), "Node count: "), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEnsembleKeepsAcknowledgedWritesWhenAllDie kills -9 all three members
// at once under write load, restarts them, and checks every acknowledged
// create is there: members write their logs in the background
// (ensemble/asynclog.go), and only what reached a majority's logs may have
// been acknowledged.
func TestEnsembleKeepsAcknowledgedWritesWhenAllDie(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes twice")
	}
	members := startEnsemble(t, 3)
	acked := killAllUnderLoad(t, members, 8, 1500*time.Millisecond, 100)
	t.Logf("%d acknowledged creates before all members died, all present after the restart", acked)
}

// killAllUnderLoad has n clients create znodes under /load for loadFor,
// kills -9 every member at once, restarts them all, and requires every
// create acknowledged before the kill to be there, and at least minAcked
// of them (fewer would prove little). It returns how many there were.
func killAllUnderLoad(t *testing.T, members []*member, n int, loadFor time.Duration, minAcked int) int {
	t.Helper()
	addrs := clientAddrs(members)
	admin := connectAdmin(t, addrs)
	if _, err := admin.Create("/load", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	admin.Close()

	_, stopLoad := createLoad(t, addrs, n)
	time.Sleep(loadFor)
	for _, m := range members {
		m.kill()
	}
	acked := stopLoad()
	time.Sleep(300 * time.Millisecond)
	for _, m := range members {
		m.start(t)
	}
	leaderOf(t, members, nil)

	admin = connectAdmin(t, addrs)
	defer admin.Close()
	if len(acked) < minAcked {
		t.Fatalf("only %d acknowledged creates before the kill; the test proved little", len(acked))
	}
	requirePresent(t, admin, acked)
	return len(acked)
}

// requirePresent fails unless every acknowledged path is under /load. The
// admin session may sit on a member a commit or two behind the one that
// acknowledged the last creates: as in ZooKeeper, it syncs first.
func requirePresent(t *testing.T, admin *zk.Conn, acked []string) {
	t.Helper()
	if _, err := admin.Sync("/load"); err != nil {
		t.Fatal(err)
	}
	children, _, err := admin.Children("/load")
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, c := range children {
		present["/load/"+c] = true
	}
	for _, p := range acked {
		if !present[p] {
			t.Fatalf("acknowledged create %s lost", p)
		}
	}
}

// TestMembersCommand lists and shrinks a three-process ensemble with
// `zkraft members` as the super user, and refuses to remove a non-member
// (a reconfig that would change nothing but the version). Its members come from a dynamic
// config file, as a ZooKeeper 3.5+ ensemble with reconfig enabled has
// them (a zoo.cfg without server lines would start three standalone
// servers, and the list would hold one).
func TestMembersCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	// super:secret
	members := startEnsemble(t, 3, "reconfigEnabled=true", "superDigest=super:lK75jTNcA+U9vtVEw5vB51mj/w4=", dynamicMembers)
	server := members[0].clientAddr
	run := func(args ...string) string {
		out, err := exec.Command(zkraftBinary(t), append([]string{"members"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("zkraft members %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(run("list", "--server", server), "version=") {
		if time.Now().After(deadline) {
			t.Fatal("no ensemble configuration")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out := run("list", "--server", server); strings.Count(out, "server.") != 3 {
		t.Fatalf("list:\n%s", out)
	}
	var listed struct {
		Version string
		Members []struct{ ID, Server string }
	}
	if out := run("list", "-o", "json", "--server", server); json.Unmarshal([]byte(out), &listed) != nil ||
		len(listed.Members) != 3 || listed.Members[0].ID != "1" || listed.Version == "" {
		t.Fatalf("list -o json:\n%s", out)
	}
	// Without credentials the refusal says where they come from, in
	// members and in the shell's reconfig.
	out, err := exec.Command(zkraftBinary(t), "members", "remove", "--server", server, "3").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not authenticated") || !strings.Contains(string(out), "--auth digest:super:PASSWORD or $ZKRAFT_AUTH") {
		t.Fatalf("reconfig without the super user must fail with NoAuth, naming --auth: %v\n%s", err, out)
	}
	out, err = exec.Command(zkraftBinary(t), "shell", "-q", "--server", server, "reconfig", "-remove", "3").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Insufficient permission") || !strings.Contains(string(out), "start the shell with --auth digest:super:PASSWORD") {
		t.Fatalf("shell reconfig without the super user must fail, naming --auth: %v\n%s", err, out)
	}
	before := run("list", "--server", server)
	// Flags after the ids, and the credentials from the environment.
	cmd := exec.Command(zkraftBinary(t), "members", "remove", "7", "--server", server, "--timeout", "5s")
	cmd.Env = append(cmd.Environ(), "ZKRAFT_AUTH=digest:super:secret")
	out, err = cmd.CombinedOutput()
	if err == nil || strings.TrimSpace(string(out)) != "zkraft: server 7 is not a member (members: 1, 2, 3)" {
		t.Fatalf("removing a non-member must fail, naming it: %v\n%s", err, out)
	}
	if after := run("list", "--server", server); after != before {
		t.Fatalf("a refused remove changed the configuration:\n%s\nvs\n%s", before, after)
	}
	out2 := run("remove", "--server", server, "--auth", "super:secret", "3")
	if strings.Contains(out2, "server.3=") || strings.Count(out2, "server.") != 2 {
		t.Fatalf("after remove:\n%s", out2)
	}
	if out := run("list", "--server", members[1].clientAddr); out != out2 {
		t.Fatalf("members disagree:\n%s\nvs\n%s", out, out2)
	}
}

// clientAddrs lists the members' client addresses.
func clientAddrs(members []*member) []string {
	addrs := make([]string, 0, len(members))
	for _, m := range members {
		addrs = append(addrs, m.clientAddr)
	}
	return addrs
}

// connectAdmin opens a go-zookeeper session over addrs for the test's own
// setup and checks.
func connectAdmin(t *testing.T, addrs []string) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect(addrs, 6*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
