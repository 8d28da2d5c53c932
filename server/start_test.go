package server

import (
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/backend"
)

// TestStartFailureReleases: a Start that fails leaves nothing running and
// nothing open, whichever step failed: the client port in use (before
// anything is created), an HTTPS AdminServer without a key store (after
// the member and the session server, with its parker's epoll set, pipe
// and goroutine, and its quorum watcher, were created), and the same
// while following ZooKeeper (after the follow loop could have started).
func TestStartFailureReleases(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd: Linux only")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// A port nothing listens on: the follow loop's dials fail at once.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	zkAddr := closed.Addr().String()
	closed.Close()

	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"client port in use", func(c *Config) { c.ClientAddr = taken.Addr().String() }, "address already in use"},
		{"AdminServer HTTPS without a key store", func(c *Config) {
			c.AdminAddr, c.AdminHTTPS = "127.0.0.1:0", true
		}, errAdminNoKeyStore.Error()},
		{"following, AdminServer HTTPS without a key store", func(c *Config) {
			c.AdminAddr, c.AdminHTTPS = "127.0.0.1:0", true
			c.FollowZooKeeper = true
			c.Members = []backend.Peer{{ID: 1, Addr: zkAddr}, {ID: c.ServerID, Addr: "127.0.0.1:1", Observer: true}}
		}, errAdminNoKeyStore.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := func() {
				t.Helper()
				cfg := DefaultConfig()
				cfg.ServerID = 7
				cfg.DataDir = t.TempDir()
				cfg.ClientAddr = "127.0.0.1:0"
				cfg.TickTime = 100 * time.Millisecond
				cfg.KeepGC = true
				tc.set(&cfg)
				s, err := Start(cfg, nil)
				if err == nil {
					s.Close()
					t.Fatal("Start succeeded")
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Start: %v, want %q", err, tc.want)
				}
			}
			start() // the process's first-use goroutines and files
			fds, gs := openFDs(t), runtime.NumGoroutine()
			start()
			var extraFDs, extraGs int
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				extraFDs, extraGs = openFDs(t)-fds, runtime.NumGoroutine()-gs
				if extraFDs <= 0 && extraGs <= 0 || time.Now().After(deadline) {
					break
				}
			}
			if extraFDs > 0 || extraGs > 0 {
				buf := make([]byte, 1<<20)
				t.Fatalf("a failed Start left %d file descriptors and %d goroutines:\n%s",
					extraFDs, extraGs, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
