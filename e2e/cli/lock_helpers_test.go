package cli

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// lockProc is a running `zkraft lock` (or `zkraft elect`).
type lockProc struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr syncBuffer
	done           chan struct{}
	code           int
}

// startLock starts `zkraft lock args...`.
func startLock(t *testing.T, args ...string) *lockProc {
	t.Helper()
	return startRecipe(t, "lock", args...)
}

// startRecipe starts `zkraft sub args...`.
func startRecipe(t *testing.T, sub string, args ...string) *lockProc {
	t.Helper()
	p := &lockProc{cmd: testproc.Command(procs.Binary(t), append([]string{sub}, args...)...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	p.run(t)
	return p
}

// run starts p's command and keeps its exit status once it ends.
func (p *lockProc) run(t *testing.T) {
	t.Helper()
	if err := testproc.Start(t, p.cmd); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		case err != nil:
			p.code = -1
		}
		close(p.done)
	}()
}

// wait returns the exit status, failing t if it has not exited within d.
func (p *lockProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		t.Fatalf("zkraft %v still running after %v\nstdout: %s\nstderr: %s", p.cmd.Args[1:], d, p.stdout.String(), p.stderr.String())
		return 0
	}
}

// exited reports whether the process has ended.
func (p *lockProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// token waits up to 10 s for the fencing token the process prints.
func (p *lockProc) token(t *testing.T) int64 {
	t.Helper()
	var tok int64
	waitUntil(t, 10*time.Second, "a fencing token from "+strings.Join(p.cmd.Args[2:], " "), func() bool {
		var ok bool
		tok, ok = tokenIn(p.stdout.String() + p.stderr.String())
		return ok
	})
	return tok
}

var tokenRE = regexp.MustCompile(`fencing token (\d+)`)

func tokenIn(s string) (int64, bool) {
	m := tokenRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

// waitUntil polls cond every 20 ms for up to d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a process writing and a test
// reading.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lineClient is a test client (kazoo, Curator) driven by lines: it
// prints READY, then answers each line it reads with one line.
type lineClient struct {
	stdin io.Writer
	lines chan string
}

func startLineClient(t *testing.T, name string, args ...string) *lineClient {
	t.Helper()
	cmd := testproc.Command(name, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	c := &lineClient{stdin: stdin, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	if got := c.next(t, 60*time.Second); got != "READY" {
		t.Fatalf("%s: %q, not READY\n%s", name, got, stderr.String())
	}
	return c
}

// next is the client's next line within d.
func (c *lineClient) next(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatal("client exited")
		}
		return l
	case <-time.After(d):
		t.Fatalf("client silent for %v", d)
		return ""
	}
}

// say sends a line and returns the answer.
func (c *lineClient) say(t *testing.T, line string) string {
	t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
	return c.next(t, 30*time.Second)
}
