package soak

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/testport"
)

// dockerTimeout bounds one docker command: the engine on a loaded two-core
// machine takes seconds to start a container, never minutes.
const dockerTimeout = 3 * time.Minute

// dockerOut runs the docker CLI and returns its trimmed output; an error
// carries what it printed on stderr.
func dockerOut(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// member is one zkraft server: its container, and the holder container
// whose network namespace (address, published client port, partition
// rules) it joins and keeps across restarts.
type member struct {
	id         int
	name       string // the zkraft container
	holder     string // the container holding its network namespace
	ip         string // on the private network
	clientAddr string // its client port, published on 127.0.0.1
	dataDir    string // host directory bind-mounted at /data
	netPid     int    // the holder's pid, for nsenter
}

// cluster is five members on a private Docker network. Member diskID keeps
// its data on a faultyDisk.
type cluster struct {
	owner   string // ownerToken of this process
	dir     string // this run's host directory
	image   string
	network string
	members []*member
	diskID  int
	disk    *faultyDisk
	logf    func(string, ...any)
}

// clusterConfig is what a cluster is built with.
type clusterConfig struct {
	size      int
	diskID    int   // the member on the faulty disk
	diskSize  int64 // its ext4 image's size
	snapCount int
}

// startCluster builds the image, the network, the faulty disk and the
// containers, starts every member and waits until they serve. teardown must
// run afterwards, whether or not startCluster succeeded: it removes what
// was made.
func startCluster(cfg clusterConfig, logf func(string, ...any)) (*cluster, error) {
	owner, err := ownerToken(os.Getpid())
	if err != nil {
		return nil, err
	}
	c := &cluster{owner: owner, dir: filepath.Join(soakBase(), owner), diskID: cfg.diskID, logf: logf,
		network: "zkraft-soak-" + strconv.Itoa(os.Getpid())}
	if err := os.MkdirAll(filepath.Join(c.dir, "conf"), 0o755); err != nil {
		return c, err
	}
	if c.image, err = buildImage(filepath.Join(c.dir, "image"), logf); err != nil {
		return c, err
	}
	labels := []string{"--label", labelKey + "=1", "--label", ownerKey + "=" + owner}
	if _, err := dockerOut(append(append([]string{"network", "create"}, labels...), c.network)...); err != nil {
		return c, err
	}
	for i := 1; i <= cfg.size; i++ {
		port, err := testport.Free()
		if err != nil {
			return c, err
		}
		m := &member{id: i, clientAddr: fmt.Sprintf("127.0.0.1:%d", port),
			name:    fmt.Sprintf("zkraft-soak-%d-m%d", os.Getpid(), i),
			holder:  fmt.Sprintf("zkraft-soak-%d-h%d", os.Getpid(), i),
			dataDir: filepath.Join(c.dir, fmt.Sprintf("m%d", i))}
		c.members = append(c.members, m)
	}
	myidDir := map[int]string{}
	for _, m := range c.members {
		myidDir[m.id] = m.dataDir
		if m.id == c.diskID {
			if c.disk, err = newFaultyDisk(m.dataDir, cfg.diskSize); err != nil {
				return c, err
			}
			myidDir[m.id] = c.disk.dataDir()
			m.dataDir = c.disk.mountpoint
		}
		if err := os.MkdirAll(myidDir[m.id], 0o755); err != nil {
			return c, err
		}
		if err := os.WriteFile(filepath.Join(myidDir[m.id], "myid"), []byte(strconv.Itoa(m.id)+"\n"), 0o644); err != nil {
			return c, err
		}
	}
	if err := c.parallel(func(m *member) error {
		_, err := dockerOut(append(append([]string{"run", "-d", "--name", m.holder}, labels...),
			"--network", c.network, "-p", m.clientAddr+":2181", "--entrypoint", "/holder", c.image)...)
		if err != nil {
			return err
		}
		out, err := dockerOut("inspect", "-f", `{{.State.Pid}} {{(index .NetworkSettings.Networks "`+c.network+`").IPAddress}}`, m.holder)
		if err != nil {
			return err
		}
		pid, ip, _ := strings.Cut(out, " ")
		if m.netPid, err = strconv.Atoi(pid); err != nil || ip == "" {
			return fmt.Errorf("holder %s: pid and address %q", m.holder, out)
		}
		m.ip = ip
		return nil
	}); err != nil {
		return c, err
	}
	if err := c.writeConfig(cfg); err != nil {
		return c, err
	}
	err = c.parallel(func(m *member) error {
		_, err := dockerOut(append(append([]string{"create", "--name", m.name}, labels...),
			"--network", "container:"+m.holder,
			"-v", filepath.Join(c.dir, "conf")+":/conf:ro", "-v", m.dataDir+":/data",
			c.image, "server", "--config", "/conf/zoo.cfg", "--log-level", "info")...)
		if err != nil {
			return err
		}
		return c.start(m)
	})
	if err != nil {
		return c, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, m := range c.members {
		for c.mode(m) == "" {
			if time.Now().After(deadline) {
				return c, fmt.Errorf("member %d is not serving after 2m:\n%s", m.id, tail(c.logs(m), 30))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return c, nil
}

// writeConfig writes the zoo.cfg every member reads: ZooKeeper's usual
// tickTime 2000 and syncLimit 5, so a silent leader (SIGSTOP, a partition)
// is replaced after 10-20 s and a dead one at once (ensemble/timeouts.go).
// snapCount is low so snapshots, log compaction and snapshot installs
// happen during the run.
func (c *cluster) writeConfig(cfg clusterConfig) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir=/data\n")
	fmt.Fprintf(&b, "clientPort=2181\nclientPortAddress=0.0.0.0\nmaxClientCnxns=0\n")
	fmt.Fprintf(&b, "4lw.commands.whitelist=*\nadmin.enableServer=false\nsnapCount=%d\n", cfg.snapCount)
	for _, m := range c.members {
		fmt.Fprintf(&b, "server.%d=%s:2888:3888\n", m.id, m.ip)
	}
	return os.WriteFile(filepath.Join(c.dir, "conf", "zoo.cfg"), []byte(b.String()), 0o644)
}

// parallel runs fn for every member at once and joins their errors.
func (c *cluster) parallel(fn func(*member) error) error {
	errs := make([]error, len(c.members))
	var wg sync.WaitGroup
	for i, m := range c.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(m)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// start starts a member's container (its process starts over on its data).
func (c *cluster) start(m *member) error {
	_, err := dockerOut("start", m.name)
	return err
}

// signal sends sig (KILL, STOP, CONT) to the member's process.
func (c *cluster) signal(m *member, sig string) error {
	_, err := dockerOut("kill", "--signal", sig, m.name)
	return err
}

// pause freezes (or thaws) the member's container with the cgroup freezer.
func (c *cluster) pause(m *member, on bool) error {
	verb := "unpause"
	if on {
		verb = "pause"
	}
	_, err := dockerOut(verb, m.name)
	return err
}

// state is what docker says of a member's container.
type state struct {
	running  bool
	paused   bool
	exitCode int
	finished time.Time
}

// states inspects every member's container in one docker call.
func (c *cluster) states() (map[int]state, error) {
	args := []string{"inspect", "-f", "{{.Name}} {{.State.Running}} {{.State.Paused}} {{.State.ExitCode}} {{.State.FinishedAt}}"}
	for _, m := range c.members {
		args = append(args, m.name)
	}
	out, err := dockerOut(args...)
	if err != nil {
		return nil, err
	}
	byName := map[string]state{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 5 {
			continue
		}
		code, _ := strconv.Atoi(f[3])
		at, _ := time.Parse(time.RFC3339Nano, f[4])
		byName[strings.TrimPrefix(f[0], "/")] = state{running: f[1] == "true", paused: f[2] == "true", exitCode: code, finished: at}
	}
	res := map[int]state{}
	for _, m := range c.members {
		s, ok := byName[m.name]
		if !ok {
			return nil, fmt.Errorf("docker inspect: no state for %s in %q", m.name, out)
		}
		res[m.id] = s
	}
	return res, nil
}

// srvr asks the member for srvr over its published client port ("" if it
// does not answer).
func (c *cluster) srvr(m *member) string { return fourletter.Ask(m.clientAddr, "srvr") }

// mode is the member's "Mode:" (leader, follower), or "" when it does not
// serve (down, stopped, or without a quorum).
func (c *cluster) mode(m *member) string { return fourletter.Field(c.srvr(m), "Mode: ") }

// leader returns the member that says it leads, or nil.
func (c *cluster) leader() *member {
	var found *member
	var mu sync.Mutex
	_ = c.parallel(func(m *member) error {
		if c.mode(m) == "leader" {
			mu.Lock()
			found = m
			mu.Unlock()
		}
		return nil
	})
	return found
}

// logs returns everything the member's process has written (all its runs).
func (c *cluster) logs(m *member) string {
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", "logs", "-t", m.name)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("(docker logs %s: %v)\n%s", m.name, err, buf.String())
	}
	return buf.String()
}

// saveLogs writes every member's log into dir as m<N>.log.
func (c *cluster) saveLogs(dir string) error {
	return c.parallel(func(m *member) error {
		return os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%d.log", m.id)), []byte(c.logs(m)), 0o644)
	})
}

// teardown removes the containers, the network, the faulty disk's mounts,
// the run's directory and the soak's dangling images. It tries
// everything and returns every error.
func (c *cluster) teardown() error {
	var errs []error
	// The members first: each shares its holder's network namespace, and
	// removing both in one call once left the network counting an endpoint
	// that no container held ("has active endpoints" until the daemon
	// restarts).
	var names []string
	for _, m := range c.members {
		names = append(names, m.name)
	}
	if len(names) > 0 {
		_, _ = dockerOut(append([]string{"rm", "-f", "-v"}, names...)...) // the sweep below reports what is left
	}
	if c.owner != "" {
		out, _ := dockerOut("ps", "-a", "-q", "--filter", "label="+ownerKey+"="+c.owner)
		if ids := strings.Fields(out); len(ids) > 0 {
			if _, err := dockerOut(append([]string{"rm", "-f", "-v"}, ids...)...); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.network != "" {
		if out, _ := dockerOut("network", "ls", "-q", "--filter", "name=^"+c.network+"$"); out != "" {
			if err := removeNetwork(c.network); err != nil && strings.Contains(err.Error(), "active endpoints") {
				// Docker's own leak (moby's "active endpoints" with no
				// container attached): not the run's, and the next run's
				// removeLeftovers tries again.
				c.logf("teardown: network %s left behind: %v", c.network, err)
			} else if err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.disk != nil {
		if err := c.disk.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.dir != "" {
		if err := unmountUnder(c.dir); err != nil {
			errs = append(errs, err)
		} else if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, err)
		}
	}
	pruneImages(c.logf)
	return errors.Join(errs...)
}

// removeNetwork removes a network whose containers were just removed. The
// daemon may still count their endpoints after docker rm -f returns ("has
// active endpoints" with no container attached; seen once in make test,
// where it lasted), so that error is retried for up to 10 s.
func removeNetwork(name string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := dockerOut("network", "rm", name)
		if err == nil || !strings.Contains(err.Error(), "active endpoints") || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// imageTag names the soak's image. It stays between runs; a run whose
// binaries differ from the ones it holds builds it again, and the image
// that held the old ones is left dangling for pruneImages.
const imageTag = "zkraft-soak:latest"

// hashKey labels the image with the hash of the binaries it holds.
const hashKey = "zkraft.soak.binaries"

// buildImage brings bin/zkraft up to date (as make build does), builds the
// holder, and makes sure imageTag is a FROM scratch image of both, building
// it if it is missing or holds other binaries. It returns the image's id:
// containers are made from the id, so another run that retags imageTag
// meanwhile cannot change what this one runs.
func buildImage(dir string, logf func(string, ...any)) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin", "zkraft")
	builds := [][]string{
		{"build", "-trimpath", "-o", bin, "./cmd/zkraft"},
		{"build", "-trimpath", "-o", filepath.Join(dir, "holder"), "./e2e/soak/holder"},
	}
	for _, args := range builds {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	h := sha256.New()
	for _, p := range []string{bin, filepath.Join(dir, "holder")} {
		if err := copyInto(h, p); err != nil {
			return "", err
		}
	}
	hash := hex.EncodeToString(h.Sum(nil))[:16]
	out, err := dockerOut("image", "inspect", "-f", `{{.Id}} {{index .Config.Labels "`+hashKey+`"}}`, imageTag)
	if id, have, _ := strings.Cut(out, " "); err == nil && have == hash {
		return id, nil
	}
	if err := copyFile(bin, filepath.Join(dir, "zkraft")); err != nil {
		return "", err
	}
	dockerfile := "FROM scratch\nCOPY zkraft holder /\nENTRYPOINT [\"/zkraft\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return "", err
	}
	logf("building image %s (binaries %s)", imageTag, hash)
	id, err := dockerOut("build", "-q", "--label", labelKey+"=1", "--label", hashKey+"="+hash, "-t", imageTag, dir)
	if err != nil {
		return "", err
	}
	return id, nil
}

// moduleRoot is the directory of the go.mod enclosing the test.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

func copyInto(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

func copyFile(from, to string) error {
	f, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if err := copyInto(f, from); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
