package main

import (
	"strings"
	"testing"
	"time"
)

// TestRender checks the table: ZooKeeper against zkraft at the compared
// size with zkraft/ZooKeeper ratios, then zkraft's rows at the large size
// with the snapshot commands'.
func TestRender(t *testing.T) {
	zk := &figures{rss: 2000 << 20, restart: 10 * time.Second, snapMs: 400}
	kr := &figures{rss: 500 << 20, restart: 2 * time.Second, snapMs: 100, installed: true}
	big := &figures{rss: 4000 << 20, save: 30 * time.Second, saveSize: 2 << 30, restoreSize: 3 << 30}
	out := render(zk, kr, big, 1_000_000, 10_000_000, 3, time.Now())
	for _, want := range []string{
		"| at 1000000 znodes | ZooKeeper 3.8 | zkraft | zkraft/ZooKeeper |",
		"| resident memory, largest member | 2000 MiB | 500 MiB | 0.25x |",
		"| restart of every member (kill -9) to serving the whole tree | 10.00 s | 2.00 s | 0.20x |",
		"| zkraft at 10000000 znodes | |",
		"| resident memory, largest member | 4000 MiB |",
		"| `zkraft snapshot save` (file size) | 30.00 s (2048 MiB) |",
		"| new follower (empty data directory) caught up | 0.00 s (by log replay) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Count(out, "snapshot save") != 2 { // the command's row and the stall's, in the large table only
		t.Errorf("snapshot save rows:\n%s", out)
	}
}
