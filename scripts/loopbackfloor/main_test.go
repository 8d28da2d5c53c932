package main

import (
	"net"
	"testing"
	"time"
)

// echoServers starts three in-process echo servers and returns their
// addresses.
func echoServers(t *testing.T) []string {
	t.Helper()
	var addrs []string
	for i := 0; i < 3; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go serveEcho(ln)
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// TestPatterns runs a few rounds of each message pattern against echo
// servers: every round or cycle completes.
func TestPatterns(t *testing.T) {
	addrs := echoServers(t)
	round, err := fanout(addrs, 6, 64)
	if err != nil {
		t.Fatal(err)
	}
	cycle, err := churn(addrs, 4, 5, 48)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			round()
			cycle()
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("rounds or cycles did not complete")
	}
}

// TestFsyncCost writes and syncs a file in a temporary directory.
func TestFsyncCost(t *testing.T) {
	if err := fsyncCost(t.TempDir(), 100, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
