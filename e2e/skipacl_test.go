package e2e

import (
	"strings"
	"testing"
)

// TestSkipACL runs zkCli against zkraft and Apache ZooKeeper 3.8, both
// with skipACL=yes: a session without credentials reads, lists, writes,
// re-ACLs and deletes nodes whose ACLs name someone else, sees their ACLs
// unmasked, and gets the same transcript from both.
func TestSkipACL(t *testing.T) {
	skipShort(t)
	t.Parallel()
	needJava(t)
	addrs := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		addrs[kind] = StartServer(t, ServerOptions{Kind: kind, ZooCfg: []string{"skipACL=yes"}}).Addr
	}
	steps := []string{
		"addauth digest alice:secret\ncreate /locked v auth::cdrwa\ncreate /locked/kid k auth::r\n" +
			"create /readonly r world:anyone:r\nquit\n",
		"get /locked\nls /locked\ngetAcl /locked\nset /locked changed\nget /locked\ncreate /locked/new n\n" +
			"set /readonly w\nsetAcl /readonly world:anyone:cdrwa\ndelete /locked/kid\ndelete /locked/new\ndelete /locked\nls /\nquit\n",
	}
	out := map[string]string{}
	for _, kind := range []string{targetZkraft, targetZookeeper} {
		var all []string
		for _, script := range steps {
			all = append(all, zkCli(t, addrs[kind], script))
		}
		out[kind] = strings.Join(all, "\n---\n")
	}
	if out[targetZkraft] != out[targetZookeeper] {
		t.Errorf("transcripts differ\nzookeeper:\n%s\nzkraft:\n%s", out[targetZookeeper], out[targetZkraft])
	}
	if strings.Contains(out[targetZkraft], "Insufficient permission") || !strings.Contains(out[targetZkraft], "changed") {
		t.Errorf("zkraft checked ACLs under skipACL=yes:\n%s", out[targetZkraft])
	}
}
