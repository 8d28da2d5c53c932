package procs

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// JavaScript is a Java client run as a script, as java/CuratorFailover.java
// and the observer's watch-failover client are: it prints lines, prints
// READY once it holds its state, waits for a line on its standard input
// (the test's fault is done), and then goes on until it exits.
type JavaScript struct {
	main       string
	cmd        *exec.Cmd
	stdin      io.Writer
	lines      *bufio.Scanner
	transcript strings.Builder
}

// StartJavaScript starts main with JVMFlags on classPath (the compiled
// classes first) and args.
func StartJavaScript(t testing.TB, classPath []string, main string, args ...string) *JavaScript {
	t.Helper()
	_, java := JavaTools(t)
	argv := append(append([]string{}, JVMFlags...), "-cp", strings.Join(classPath, ":"), main)
	s := &JavaScript{main: main, cmd: testproc.Command(java, append(argv, args...)...)}
	stdin, err := s.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = s.cmd.Stdout
	if err := testproc.Start(t, s.cmd); err != nil {
		t.Fatal(err)
	}
	s.stdin, s.lines = stdin, bufio.NewScanner(stdout)
	return s
}

// UntilReady reads the script's lines up to READY, giving each to line
// (if not nil); it reports whether READY came.
func (s *JavaScript) UntilReady(line func(string)) bool {
	for s.lines.Scan() {
		l := s.lines.Text()
		s.transcript.WriteString(l + "\n")
		if line != nil {
			line(l)
		}
		if l == "READY" {
			return true
		}
	}
	return false
}

// Finish sends say as a line, reads the rest of the output until the
// script exits (failing t after timeout), and returns the whole
// transcript with the script's exit error.
func (s *JavaScript) Finish(t testing.TB, say string, timeout time.Duration) (string, error) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, say+"\n"); err != nil {
		t.Fatalf("%v\n%s", err, s.Transcript())
	}
	done := make(chan error, 1)
	go func() {
		for s.lines.Scan() {
			s.transcript.WriteString(s.lines.Text() + "\n")
		}
		done <- s.cmd.Wait()
	}()
	select {
	case err := <-done:
		return s.transcript.String(), err
	case <-time.After(timeout):
		t.Fatalf("%s did not finish within %v:\n%s", s.main, timeout, s.transcript.String())
		return "", nil
	}
}

// Transcript is what the script printed so far (not safe once Finish
// reads on).
func (s *JavaScript) Transcript() string { return s.transcript.String() }
