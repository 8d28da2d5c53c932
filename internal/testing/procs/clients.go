package procs

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// QuietLogger is a go-zookeeper logger that says nothing.
type QuietLogger struct{}

// Printf discards its arguments.
func (QuietLogger) Printf(string, ...interface{}) {}

// ConnectAdmin opens a go-zookeeper session over addrs for the test's
// own setup and checks; the caller closes it.
func ConnectAdmin(t testing.TB, addrs []string) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect(addrs, 6*time.Second, zk.WithLogger(QuietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ConnectTo opens a session over addrs, closed when the test ends, and
// waits up to 20 s until it has one.
func ConnectTo(t testing.TB, addrs ...string) *zk.Conn {
	t.Helper()
	c, ev, err := zk.Connect(addrs, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.State == zk.StateHasSession {
				return c
			}
		case <-deadline:
			t.Fatalf("no session from %v", addrs)
		}
	}
}

// WaitSession waits up to 20 s until c has a session.
func WaitSession(t testing.TB, c *zk.Conn) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for c.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			t.Fatal("no session")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FourLetter sends a four-letter word to addr and returns the answer.
func FourLetter(addr, cmd string) (string, error) {
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := nc.Write([]byte(cmd)); err != nil {
		return "", err
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := nc.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String(), nil
}

// CreateLoad has n clients, spread over addrs, create sequential znodes
// under /load until stop returns; stop waits for them and returns every
// acknowledged path.
func CreateLoad(t testing.TB, addrs []string, n int) (conns []*zk.Conn, stop func() []string) {
	t.Helper()
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		done  = make(chan struct{})
	)
	for i := 0; i < n; i++ {
		order := append(addrs[i%len(addrs):], addrs[:i%len(addrs)]...) // spread first choices
		c, _, err := zk.Connect(order, 6*time.Second, zk.WithLogger(QuietLogger{}))
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

// RequirePresent fails unless every acknowledged path is under /load. The
// admin session may sit on a member a commit or two behind the one that
// acknowledged the last creates: as in ZooKeeper, it syncs first.
func RequirePresent(t testing.TB, admin *zk.Conn, acked []string) {
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

// KillAllUnderLoad has n clients create znodes under /load for loadFor,
// kills -9 every member at once, restarts them all, and requires every
// create acknowledged before the kill to be there, and at least minAcked
// of them (fewer would prove little). It returns how many there were.
func KillAllUnderLoad(t testing.TB, members []*Member, n int, loadFor time.Duration, minAcked int) int {
	t.Helper()
	addrs := ClientAddrs(members)
	admin := ConnectAdmin(t, addrs)
	if _, err := admin.Create("/load", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	admin.Close()

	_, stopLoad := CreateLoad(t, addrs, n)
	time.Sleep(loadFor)
	KillAll(members)
	acked := stopLoad()
	for _, m := range members {
		m.Start(t)
	}
	LeaderOf(t, members, nil)

	admin = ConnectAdmin(t, addrs)
	defer admin.Close()
	if len(acked) < minAcked {
		t.Fatalf("only %d acknowledged creates before the kill; the test proved little", len(acked))
	}
	RequirePresent(t, admin, acked)
	return len(acked)
}
