package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testproc"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// TestWideServerIDs starts three zkraft processes whose zoo.cfg lines are
// server.300, server.44 and server.556 and whose myid files say so (ids
// ZooKeeper takes; all three share the low byte 44, a session id's top
// byte). They elect and serve, conf reports each one's id, and with
// Debian's python3-kazoo (testdata/kazoo_reconfig.py) kazoo's own
// TestReconfig passes against them (test_no_super_auth joins server.999
// without the super user: NoAuth), a super user adds and removes
// observer 1000, a wide id without the right is NoAuth and one that is not
// a long MarshallingError, and sessions made on every member are distinct.
func TestWideServerIDs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	python := kazooPython(t)
	ids := map[int]string{1: "300", 2: "44", 3: "556"}
	wide := strings.NewReplacer("server.1=", "server.300=", "server.2=", "server.44=", "server.3=", "server.556=")
	prepare := func(m *procs.Member) {
		b, err := os.ReadFile(m.CfgPath)
		if err == nil {
			err = os.WriteFile(m.CfgPath, []byte(wide.Replace(string(b))), 0o644)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(m.DataDir(), "myid"), []byte(ids[m.ID]+"\n"), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	members := procs.StartPreparedEnsemble(t, 3, prepare, "reconfigEnabled=true", "superDigest="+acl.DigestID("super", "test"))
	var hosts []string
	for _, m := range members {
		if conf := fourletter.Ask(m.ClientAddr, "conf"); !strings.Contains(conf, "\nserverId="+ids[m.ID]+"\n") {
			t.Fatalf("member %s's conf:\n%s", ids[m.ID], conf)
		}
		hosts = append(hosts, m.ClientAddr)
	}
	procs.LeaderOf(t, members, nil)

	runKazooReconfig(t, python, hosts)
}

// TestKazooReconfigOnZooKeeper runs testdata/kazoo_reconfig.py against
// three Apache ZooKeeper 3.8 servers (ids 1 to 3) with reconfig enabled
// and the same super user: what TestWideServerIDs expects of zkraft
// (kazoo's TestReconfig, observer 1000, NoAuth for server.70000 without
// the super user, MarshallingError for server.x) is ZooKeeper's answer.
func TestKazooReconfigOnZooKeeper(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three ZooKeeper servers")
	}
	python := kazooPython(t)
	e := zktest.StartWith(t, []string{"reconfigEnabled=true"},
		"-Dzookeeper.DigestAuthenticationProvider.superDigest="+acl.DigestID("super", "test"))
	runKazooReconfig(t, python, e.ClientAddrs())
}

// kazooPython is Debian's python3, with python3-kazoo.
func kazooPython(t *testing.T) string {
	t.Helper()
	python, err := exec.LookPath("/usr/bin/python3")
	if err == nil {
		err = testproc.Command(python, "-c", "import kazoo").Run()
	}
	if err != nil {
		testenv.Require(t, fmt.Errorf("python3-kazoo is missing (.ci/run installs it): %w", err))
	}
	return python
}

// runKazooReconfig runs testdata/kazoo_reconfig.py against hosts and
// expects every one of its six checks to pass.
func runKazooReconfig(t *testing.T, python string, hosts []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := testproc.CommandContext(ctx, python, filepath.Join("testdata", "kazoo_reconfig.py"), strings.Join(hosts, ","))
	out, err := cmd.CombinedOutput()
	t.Logf("kazoo_reconfig.py:\n%s", out)
	passed := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ok ") {
			passed++
		}
	}
	if err != nil || passed != 6 {
		t.Fatalf("kazoo_reconfig.py: %v; %d of 6 checks passed", err, passed)
	}
}
