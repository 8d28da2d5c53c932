package e2e

import (
	"strings"
	"testing"
)

// TestEnforceQuota runs zkCli against zkraft and Apache ZooKeeper 3.8,
// both with enforceQuota=true in zoo.cfg: hard limits (setquota -N, -B)
// fail the create or setData that would pass them with the same
// QuotaExceeded message, soft limits (-n) only log, and listquota shows
// the same limits and usage.
func TestEnforceQuota(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	addrs := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		addrs[kind] = StartServer(t, ServerOptions{Kind: kind, ZooCfg: []string{"enforceQuota=true"}}).Addr
	}
	script := strings.Join([]string{
		"create /q", "setquota -N 3 /q", "create /q/a", "create /q/b", "create /q/c", "listquota /q",
		"create /bytes 12345", "setquota -B 10 /bytes", "set /bytes 1234567890", "set /bytes 12345678901", "get /bytes",
		"create /soft", "setquota -n 1 /soft", "create /soft/x", "listquota /soft",
		"delete /q/b", "create /q/c", "ls /q", "quit",
	}, "\n") + "\n"
	out := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		out[kind] = zkCli(t, addrs[kind], script)
	}
	if out[targetZkraft] != out[targetZookeeper] {
		t.Errorf("transcripts differ\nzookeeper:\n%s\nzkraft:\n%s", out[targetZookeeper], out[targetZkraft])
	}
	if n := strings.Count(out[targetZkraft], "Quota has exceeded"); n != 2 {
		t.Errorf("zkraft refused %d writes over a hard limit, want 2:\n%s", n, out[targetZkraft])
	}
}
