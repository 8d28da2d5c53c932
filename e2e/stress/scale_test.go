//go:build linux

package stress

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/jute"
)

// scaleSessions is how many sessions TestSessionsResumeAfterLeaderKill
// opens: 10,000 by default, ZKRAFT_SCALE_SESSIONS=N for another count.
func scaleSessions(t *testing.T) int {
	n := 10000
	if s := os.Getenv("ZKRAFT_SCALE_SESSIONS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("ZKRAFT_SCALE_SESSIONS=%q: want a positive count", s)
		}
		n = v
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Max < uint64(n)+1000 {
		t.Fatalf("the open-file hard limit %d is below %d sessions plus room: raise it (ulimit -Hn) or set ZKRAFT_SCALE_SESSIONS", lim.Max, n)
	}
	return n
}

// scaleSession is one raw client session: a socket, the session's id and
// password, and the last zxid it saw, enough to resume it elsewhere as a
// ZooKeeper client does.
type scaleSession struct {
	mu     sync.Mutex
	ready  atomic.Bool // opened, and its ephemeral created: the pings may use it
	nc     net.Conn
	br     *bufio.Reader
	member int // index of the member it is connected to
	id     int64
	passwd []byte
	zxid   int64
	w      jute.Writer
}

// roundTrip sends one request and reads its reply header.
func (s *scaleSession) roundTrip(h *jute.RequestHeader, body jute.Record) (jute.ReplyHeader, error) {
	s.w.Reset()
	at := jute.BeginFrame(&s.w)
	h.Encode(&s.w)
	if body != nil {
		body.Encode(&s.w)
	}
	jute.EndFrame(&s.w, at)
	_ = s.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.nc.Write(s.w.Buf); err != nil {
		return jute.ReplyHeader{}, err
	}
	for {
		b, err := jute.ReadFrame(s.br, nil, 1<<20)
		if err != nil {
			return jute.ReplyHeader{}, err
		}
		var rh jute.ReplyHeader
		if err := rh.Decode(jute.NewReader(b)); err != nil {
			return rh, err
		}
		if rh.Xid == jute.XidNotification {
			continue
		}
		if rh.Zxid > s.zxid {
			s.zxid = rh.Zxid
		}
		return rh, nil
	}
}

// errExpired is a session the server reports expired on reconnection.
var errExpired = errors.New("session expired")

// open connects to addr, creating the session (id 0) or resuming it.
func (s *scaleSession) open(addr string, timeout time.Duration) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	var w jute.Writer
	at := jute.BeginFrame(&w)
	passwd := s.passwd
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	(&jute.ConnectRequest{LastZxidSeen: s.zxid, TimeOut: int32(timeout / time.Millisecond), SessionID: s.id, Passwd: passwd}).Encode(&w)
	jute.EndFrame(&w, at)
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReaderSize(nc, 512)
	if _, err := nc.Write(w.Buf); err != nil {
		nc.Close()
		return err
	}
	b, err := jute.ReadFrame(br, nil, 1<<16)
	if err != nil {
		nc.Close()
		return err
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(b, &resp); err != nil {
		nc.Close()
		return err
	}
	if resp.TimeOut <= 0 {
		nc.Close()
		return fmt.Errorf("session %#x: %w", s.id, errExpired)
	}
	if s.id != 0 && resp.SessionID != s.id {
		nc.Close()
		return fmt.Errorf("resumed session %#x answered as %#x", s.id, resp.SessionID)
	}
	s.nc, s.br, s.id, s.passwd = nc, br, resp.SessionID, resp.Passwd
	return nil
}

// vmRSS is a process's resident set in KiB, from /proc.
func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// forEach runs f over every session on workers goroutines, returning the
// first error.
func forEach(sessions []*scaleSession, workers int, f func(i int, s *scaleSession) error) error {
	var (
		next  atomic.Int64
		first atomic.Pointer[error]
		wg    sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(sessions) || first.Load() != nil {
					return
				}
				if err := f(i, sessions[i]); err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

// TestSessionsResumeAfterLeaderKill: 10,000 sessions spread over a
// 3-member ensemble, each owning an ephemeral znode and pinging as a
// client does; the leader is killed with SIGKILL; every session whose
// connection broke resumes on a surviving member with its id and
// password; none expires: after more than a session timeout has passed
// under the new leader every ephemeral is still there and every session
// still answers. Members' resident memory per session is logged.
func TestSessionsResumeAfterLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes and 10,000 sessions")
	}
	n := scaleSessions(t)
	const timeout = 12 * time.Second
	members := procs.StartEnsemble(t, 3, "maxSessionTimeout=60000", "syncLimit=4") // tickTime=500: 2 s election timeout
	addrs := procs.ClientAddrs(members)
	var before []int64
	for _, m := range members {
		before = append(before, vmRSS(m.Cmd.Process.Pid))
	}

	root := &scaleSession{}
	if err := root.open(addrs[0], timeout); err != nil {
		t.Fatal(err)
	}
	if h, err := root.roundTrip(&jute.RequestHeader{Xid: 1, Type: jute.OpCreate},
		&jute.CreateRequest{Path: "/scale", ACL: []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "world", ID: "anyone"}}}}); err != nil || h.Err != jute.OK {
		t.Fatalf("create /scale: %v %v", h.Err, err)
	}
	root.nc.Close()

	sessions := make([]*scaleSession, n)
	for i := range sessions {
		sessions[i] = &scaleSession{member: i % len(members)}
	}

	// Every session pings every timeout/3 from the moment it is open, as
	// ZooKeeper's clients do (opening them all takes longer than a session
	// timeout on a busy machine), and resumes on another live member when
	// its connection breaks.
	var (
		dead      atomic.Int32 // index of the killed member + 1
		resumed   atomic.Int64
		failures  atomic.Int64
		expired   atomic.Int64
		stopPings = make(chan struct{})
		pingsDone = make(chan struct{})
	)
	resume := func(s *scaleSession) error {
		s.nc.Close()
		deadline := time.Now().Add(timeout)
		for {
			alive := rand.IntN(len(members))
			if d := int(dead.Load()) - 1; alive == d {
				continue
			}
			err := s.open(addrs[alive], timeout)
			if err == nil {
				s.member = alive
				resumed.Add(1)
				return nil
			}
			if errors.Is(err, errExpired) {
				expired.Add(1)
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("session %#x not resumed within its timeout: %w", s.id, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ping := func(_ int, s *scaleSession) error {
		if !s.ready.Load() {
			return nil // still opening
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for {
			h, err := s.roundTrip(&jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing}, nil)
			if err == nil && h.Err == jute.OK {
				return nil
			}
			if err == nil && h.Err == jute.ErrSessionExpired {
				expired.Add(1)
				return fmt.Errorf("session %#x: %w", s.id, errExpired)
			}
			if failures.Add(1) <= 3 {
				t.Logf("session %#x on member %d: ping failed (%v, error %d); resuming elsewhere", s.id, members[s.member].ID, err, h.Err)
			}
			if err := resume(s); err != nil {
				return err
			}
		}
	}
	var pingErr error
	var stopOnce sync.Once
	stop := func() { stopOnce.Do(func() { close(stopPings) }); <-pingsDone }
	t.Cleanup(stop) // before the members stop, should the test end early
	go func() {
		defer close(pingsDone)
		for {
			round := time.Now()
			// 128 at a time: each is a client of its own, and with 32 a
			// machine running two make tests resumed the dead member's
			// 3,333 sessions too slowly: 26 expired.
			if err := forEach(sessions, 128, ping); err != nil {
				pingErr = err
				return
			}
			select {
			case <-stopPings:
				return
			case <-time.After(time.Until(round.Add(timeout / 3))):
			}
		}
	}()

	start := time.Now()
	err := forEach(sessions, 64, func(i int, s *scaleSession) error {
		if err := s.open(addrs[s.member], timeout); err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		h, err := s.roundTrip(&jute.RequestHeader{Xid: 1, Type: jute.OpCreate},
			&jute.CreateRequest{Path: fmt.Sprintf("/scale/s%d", i), ACL: []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "world", ID: "anyone"}}}, Flags: jute.FlagEphemeral})
		if err == nil && h.Err != jute.OK {
			err = fmt.Errorf("create: error %d", h.Err)
		}
		if err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		s.ready.Store(true)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sessions, each with an ephemeral, opened in %v", n, time.Since(start).Round(time.Millisecond))
	for i, m := range members {
		after := vmRSS(m.Cmd.Process.Pid)
		t.Logf("member %d: RSS %d -> %d KiB with %d sessions, %d of them connected here (%.1f KiB per session)",
			m.ID, before[i], after, n, n/len(members), float64(after-before[i])/float64(n))
	}

	time.Sleep(2 * time.Second)
	leader := procs.LeaderOf(t, members, nil)
	for i, m := range members {
		if m == leader {
			dead.Store(int32(i + 1))
		}
	}
	killed := time.Now()
	leader.Kill()
	next := procs.LeaderOf(t, members, leader)
	t.Logf("member %d killed; member %d leads after %v", leader.ID, next.ID, time.Since(killed).Round(time.Millisecond))

	// More than a session timeout under the new leader: a session it did
	// not know, or whose pings it did not count, would expire in it.
	time.Sleep(timeout + timeout/2)
	stop()
	if pingErr != nil {
		t.Fatalf("after the leader kill: %v (%d sessions resumed, %d expired)", pingErr, resumed.Load(), expired.Load())
	}

	// Each session answers once more on its own connection, and every
	// ephemeral is still there.
	if err := forEach(sessions, 32, ping); err != nil {
		t.Fatal(err)
	}
	var children int
	for _, m := range members {
		if m == leader {
			continue
		}
		children = ephemeralCount(t, m.ClientAddr)
		if children != n {
			t.Fatalf("member %d holds %d of the %d ephemerals: sessions expired", m.ID, children, n)
		}
	}
	t.Logf("%d sessions kept through the leader kill: %d resumed on another member after %d failed pings, 0 expired, %d ephemerals on each survivor",
		n, resumed.Load(), failures.Load(), children)
	for _, m := range members {
		if m != leader {
			t.Logf("member %d: RSS %d KiB after the failover", m.ID, vmRSS(m.Cmd.Process.Pid))
		}
	}
}

// ephemeralCount asks a member for /scale's child count (its Stat's
// numChildren) through a fresh session.
func ephemeralCount(t *testing.T, addr string) int {
	t.Helper()
	s := &scaleSession{}
	if err := s.open(addr, 12*time.Second); err != nil {
		t.Fatal(err)
	}
	defer s.nc.Close()
	s.w.Reset()
	at := jute.BeginFrame(&s.w)
	(&jute.RequestHeader{Xid: 1, Type: jute.OpExists}).Encode(&s.w)
	(&jute.PathWatchRequest{Path: "/scale"}).Encode(&s.w)
	jute.EndFrame(&s.w, at)
	if _, err := s.nc.Write(s.w.Buf); err != nil {
		t.Fatal(err)
	}
	b, err := jute.ReadFrame(s.br, nil, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	r := jute.NewReader(b)
	var h jute.ReplyHeader
	var st jute.Stat
	if err := h.Decode(r); err != nil || h.Err != jute.OK {
		t.Fatalf("exists /scale: %v %v", h.Err, err)
	}
	if err := st.Decode(r); err != nil {
		t.Fatal(err)
	}
	return int(st.NumChildren)
}
