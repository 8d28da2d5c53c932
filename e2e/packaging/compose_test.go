package packaging

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
)

const (
	// testImage is the image make image builds for the test; each run
	// replaces it and removes it at the end.
	testImage = "zkraft-e2e-packaging"
	// projectPrefix and the test's pid name its compose project.
	projectPrefix = "zkraft-e2e-packaging-"
	composeFile   = "packaging/docker/compose.yml"
)

// TestCompose builds the FROM scratch image with make image, brings up
// packaging/docker/compose.yml's three members with docker-compose on
// their private network (client ports published on 127.0.0.1 ports of
// the test's own), checks they form one ensemble (one leader, two
// followers), writes through the first member's container and reads
// through the third's, and takes it all down with its volumes. The image
// run alone with its AdminServer gives a snapshot to zkraft snapshot save.
func TestCompose(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and runs three containers")
	}
	requireTools(t, map[string]string{"make": "make", "git": "git", "docker": "docker.io", "docker-compose": "docker-compose"})
	testenv.Require(t, dockerUsable())
	root := moduleRoot(t)
	dist := t.TempDir()
	if _, err := run(root, nil, "make", "--no-print-directory", "image", "DIST="+dist, "IMAGE="+testImage); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		out, _ := run("", nil, "docker", "image", "ls", "-q", "--filter", "reference="+testImage)
		if ids := strings.Fields(out); len(ids) > 0 {
			if _, err := run("", nil, "docker", append([]string{"rmi", "-f"}, ids...)...); err != nil {
				t.Log(err)
			}
		}
	})

	removeLeftovers(t, root)
	project := fmt.Sprintf("%s%d", projectPrefix, os.Getpid())
	env := []string{"ZKRAFT_IMAGE=" + testImage + ":latest"}
	var addrs []string
	for i := 1; i <= 3; i++ {
		port, err := testport.Free()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, fmt.Sprintf("ZKRAFT_PORT%d=%d", i, port))
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	compose := func(args ...string) (string, error) {
		return run(root, env, "docker-compose", append([]string{"-p", project, "-f", filepath.FromSlash(composeFile)}, args...)...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if out, err := compose("logs", "--no-color", "--tail", "40"); err == nil {
				t.Logf("member logs:\n%s", out)
			}
		}
		if _, err := compose("down", "-v", "--timeout", "10"); err != nil {
			t.Error(err)
		}
	})
	if _, err := compose("up", "-d"); err != nil {
		t.Fatal(err)
	}

	modes := waitForEnsemble(t, addrs, 90*time.Second)
	t.Logf("members: %v", modes)
	if err := writeRead(addrs[0], addrs[2], "/compose", []byte("through zk1, read through zk3")); err != nil {
		t.Fatal(err)
	}
	snapshotFromImage(t, filepath.Join(dist, "image", "zkraft"), fmt.Sprintf("%s-admin", project))
}

// snapshotFromImage runs the image standalone with its AdminServer on and
// saves a snapshot from it with the host's zkraft (bin): the member
// writes the snapshot to a temporary file before it sends it, so the
// FROM scratch image must give it a writable temporary directory.
func snapshotFromImage(t *testing.T, bin, name string) {
	t.Helper()
	port, err := testport.Free()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte("super:secret"))
	digest := "super:" + base64.StdEncoding.EncodeToString(sum[:])
	if _, err := run("", nil, "docker", "run", "-d", "--name", name, "-p", fmt.Sprintf("127.0.0.1:%d:8080", port),
		testImage+":latest", "server", "--client-addr", "0.0.0.0:2181", "--data-dir", "/data",
		"--admin-addr", "0.0.0.0:8080", "--super-digest", digest); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if out, err := run("", nil, "docker", "logs", "--tail", "20", name); err == nil {
				t.Logf("%s's log:\n%s", name, out)
			}
		}
		if _, err := run("", nil, "docker", "rm", "-f", "-v", name); err != nil {
			t.Log(err)
		}
	})
	file := filepath.Join(t.TempDir(), "backup.snap")
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := run("", nil, bin, "snapshot", "save", "--admin-addr", fmt.Sprintf("127.0.0.1:%d", port),
			"--auth", "digest:super:secret", "--timeout", "30s", file)
		if err == nil {
			t.Logf("snapshot save from the image:\n%s", out)
			return
		}
		// Refused by a member that is up is the answer; a connection
		// refused means it is still starting.
		if strings.Contains(err.Error(), "refused the snapshot") || time.Now().After(deadline) {
			t.Fatalf("snapshot save from the image: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitForEnsemble waits until every member answers srvr and exactly one
// leads, and returns their modes.
func waitForEnsemble(t *testing.T, addrs []string, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		modes := make([]string, len(addrs))
		leaders := 0
		for i, a := range addrs {
			modes[i] = "down"
			if out, err := fourletter.AskWithin(a, "srvr", 2*time.Second); err == nil {
				modes[i] = fourletter.Field(out, "Mode: ")
			}
			if modes[i] == "leader" {
				leaders++
			}
		}
		ready := leaders == 1
		for _, m := range modes {
			ready = ready && (m == "leader" || m == "follower")
		}
		if ready {
			return modes
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ensemble of %d after %v: modes %v", len(addrs), within, modes)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// dockerUsable reports why the Docker engine cannot run containers, or nil.
func dockerUsable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return errors.New("the Docker engine is not usable (docker version: " + err.Error() + ": " + strings.TrimSpace(string(out)) + ")")
	}
	return nil
}

// removeLeftovers takes down the compose projects of earlier runs whose
// process is gone (killed by go test's timeout, say): their containers
// and volumes would otherwise stay.
func removeLeftovers(t *testing.T, root string) {
	t.Helper()
	out, err := run("", nil, "docker", "ps", "-a", "--filter", "label=com.docker.compose.project",
		"--format", `{{.Label "com.docker.compose.project"}}`)
	if err != nil {
		t.Logf("leftovers of earlier runs (going on): %v", err)
		return
	}
	seen := map[string]bool{}
	for _, project := range strings.Fields(out) {
		pid, err := strconv.Atoi(strings.TrimPrefix(project, projectPrefix))
		if seen[project] || !strings.HasPrefix(project, projectPrefix) || err != nil {
			continue
		}
		seen[project] = true
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue // a run still going, perhaps in another worktree
		}
		t.Logf("taking down %s, left by an earlier run", project)
		if _, err := run(root, nil, "docker-compose", "-p", project, "-f", filepath.FromSlash(composeFile), "down", "-v", "--timeout", "5"); err != nil {
			t.Logf("leftovers of earlier runs (going on): %v", err)
		}
	}
}
