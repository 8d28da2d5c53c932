package lock_test

import (
	"bytes"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/servertest"
	"github.com/zkraft/zkraft/shell/recipes/lock"
)

// TestSignalRightAfterTheTokenReleases: a SIGTERM sent the moment the
// token is out (a script that reads it and stops the holder at once)
// is caught: the hold ends, the lock is released and the status is 0.
// Before, the signals were caught only once the hold began, so such a
// SIGTERM killed the process (here: the test binary) and left its node
// for the session's expiry.
func TestSignalRightAfterTheTokenReleases(t *testing.T) {
	zs := servertest.Start(t)
	stdin, _ := io.Pipe() // never ends: only the signal ends the hold
	var out bytes.Buffer
	status, err := lock.Run(lock.Options{
		Dial: func(timeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error) {
			c, _, err := zk.Connect([]string{zs.Addr()}, timeout, zk.WithLogInfo(false),
				zk.WithEventCallback(onEvent))
			return c, err
		},
		Path: "/locks/sig", SessionTimeout: 10 * time.Second, Grace: time.Second,
		Announce: func(w io.Writer, l *lock.Lock, _ bool) error {
			return syscall.Kill(os.Getpid(), syscall.SIGTERM)
		},
		Stdin: stdin, Stdout: &out, Stderr: &out,
	})
	if err != nil || status != 0 {
		t.Fatalf("status %d, %v", status, err)
	}
	c, _, err := zk.Connect([]string{zs.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if kids, _, err := c.Children("/locks/sig"); err != nil || len(kids) != 0 {
		t.Fatalf("after the signal: %v %v, want no contender node", kids, err)
	}
}
