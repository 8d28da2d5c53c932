package packaging

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/testenv"
	"github.com/zkraft/zkraft/internal/testing/testport"
	"github.com/zkraft/zkraft/internal/testing/testproc"
)

// What the package installs and makes.
const (
	unitPath   = "/usr/lib/systemd/system/zkraft.service"
	configPath = "/etc/zkraft/zoo.cfg"
	dataDir    = "/var/lib/zkraft"
)

// TestDeb builds the .deb with make deb, installs it with dpkg -i, checks
// what it put on the machine (binary, unit, conffile, the zkraft system
// user and its data directory), starts the server as systemd would from
// the installed unit (its ExecStart as its User: systemd is not PID 1
// here), writes and reads through it with a client (on 127.0.0.1 only, the
// default config's choice), upgrades to a newer package (the edited
// conffile and the data stay, the server reads them back), and removes and
// purges it: remove keeps the edited conffile, purge takes it away and
// leaves the data.
func TestDeb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, installs and removes a package")
	}
	requireRoot(t)
	requireTools(t, map[string]string{"make": "make", "git": "git", "dpkg": "dpkg", "dpkg-query": "dpkg",
		"setpriv": "util-linux", "adduser": "adduser", "deluser": "adduser"})
	// Held until the last cleanup has purged the package and removed what
	// it made: a deferred unlock ran before the cleanups, and a second run
	// then took the first one's leftovers for the machine's own and kept
	// them, or lost them to the first run's cleanup halfway.
	t.Cleanup(lockMachine(t))
	if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", "zkraft").Output(); err == nil && strings.Contains(string(out), "installed") {
		if !testenv.InCI() {
			t.Skip("SKIP (not CI): a zkraft package is installed on this machine; the test installs and removes its own")
		}
		t.Log("purging the zkraft package an earlier run left installed")
		if _, err := run("", nil, "dpkg", "--purge", "zkraft"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(dataDir); err == nil && testenv.InCI() {
		// No package owns it (purge keeps the data): an earlier run that
		// did not get to its cleanup left it, with its znodes.
		t.Logf("removing %s, which an earlier run left", dataDir)
		if err := os.RemoveAll(dataDir); err != nil {
			t.Fatal(err)
		}
	}
	_, userErr := user.Lookup("zkraft")
	hadUser := userErr == nil
	_, dirErr := os.Stat(dataDir)
	hadDataDir := dirErr == nil

	root := moduleRoot(t)
	dist := t.TempDir()
	if _, err := run(root, nil, "make", "--no-print-directory", "deb", "DIST="+dist); err != nil {
		t.Fatal(err)
	}
	debs, _ := filepath.Glob(filepath.Join(dist, "zkraft_*.deb"))
	if len(debs) != 1 {
		t.Fatalf("make deb left %v in %s, want one zkraft_*.deb", debs, dist)
	}
	if out, err := run("", nil, "dpkg", "-i", debs[0]); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("dpkg -i %s:\n%s", filepath.Base(debs[0]), out)
	}
	t.Cleanup(func() {
		if _, err := run("", nil, "dpkg", "--purge", "zkraft"); err != nil {
			t.Error(err)
		}
		if !hadDataDir {
			os.RemoveAll(dataDir)
		}
		if !hadUser {
			if _, err := run("", nil, "deluser", "--system", "zkraft"); err != nil {
				t.Error(err)
			}
		}
	})

	checkInstalled(t)
	unit := readUnit(t, unitPath)
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		if out, err := run("", nil, "systemd-analyze", "verify", unitPath); err != nil {
			t.Errorf("the installed unit does not verify: %v", err)
		} else if out != "" {
			t.Logf("systemd-analyze verify: %s", out)
		}
	} else {
		t.Log("systemd-analyze not found (Debian: systemd): the unit is not verified")
	}

	// The operator's edit: ports of the test's own, so a server on 2181 or
	// 8080 elsewhere on the machine is no obstacle.
	clientPort, err := testport.Free()
	if err != nil {
		t.Fatal(err)
	}
	adminPort, err := testport.Free()
	if err != nil {
		t.Fatal(err)
	}
	editConfig(t, map[string]string{"clientPort": strconv.Itoa(clientPort), "admin.serverPort": strconv.Itoa(adminPort)})

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))
	stop := startUnit(t, unit)
	if err := writeRead(addr, addr, "/installed", []byte("from the .deb")); err != nil {
		stop()
		t.Fatal(err)
	}
	checkLoopbackOnly(t, clientPort)
	stop()
	if owner := ownerOf(t, filepath.Join(dataDir, "raft.db")); owner != "zkraft" {
		t.Errorf("%s/raft.db is owned by %s, want zkraft", dataDir, owner)
	}

	// An upgrade: a newer package over this one keeps the edited conffile
	// and the data, and the server starts again on them.
	bins, _ := filepath.Glob(filepath.Join(dist, "zkraft-*-linux-*"))
	if len(bins) != 1 {
		t.Fatalf("make deb left binaries %v, want one", bins)
	}
	// mkdeb is in packaging/'s own module: run it there (bins and dist
	// are absolute).
	newer, err := run(filepath.Join(root, "packaging"), nil, "go", "run", "./mkdeb", "-bin", bins[0], "-arch", debArch(t, debs[0]),
		"-version", "v999.0.0", "-out", filepath.Join(dist, "newer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run("", nil, "dpkg", "-i", newer); err != nil {
		t.Fatalf("the upgrade: %v", err)
	}
	if v, err := run("", nil, "dpkg-query", "-W", "-f=${Version}", "zkraft"); err != nil || v != "999.0.0" {
		t.Errorf("after the upgrade dpkg says version %q (%v), want 999.0.0", v, err)
	}
	if b, err := os.ReadFile(configPath); err != nil || !strings.Contains(string(b), "clientPort="+strconv.Itoa(clientPort)) {
		t.Errorf("the upgrade did not keep the edited conffile %s (%v)", configPath, err)
	}
	stop = startUnit(t, unit)
	if err := readBack(addr, "/installed", []byte("from the .deb")); err != nil {
		t.Errorf("after the upgrade: %v", err)
	}
	stop()

	if _, err := run("", nil, "dpkg", "-r", "zkraft"); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"/usr/bin/zkraft", unitPath} {
		if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("dpkg -r left %s (%v)", gone, err)
		}
	}
	if b, err := os.ReadFile(configPath); err != nil || !strings.Contains(string(b), "clientPort="+strconv.Itoa(clientPort)) {
		t.Errorf("dpkg -r did not keep the edited conffile %s (%v)", configPath, err)
	}
	if _, err := run("", nil, "dpkg", "--purge", "zkraft"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/etc/zkraft"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dpkg --purge left /etc/zkraft (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "raft.db")); err != nil {
		t.Errorf("dpkg --purge removed the data: %v", err)
	}
}

// lockMachine keeps two runs of the test (two worktrees, a developer's and
// CI's) from installing the package at once.
func lockMachine(t *testing.T) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "zkraft-packaging-test.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// checkInstalled checks what dpkg -i put on the machine.
func checkInstalled(t *testing.T) {
	t.Helper()
	out, err := run("", nil, "/usr/bin/zkraft", "version")
	if err != nil || !strings.HasPrefix(out, "zkraft ") {
		t.Errorf("/usr/bin/zkraft version: %q, %v", out, err)
	}
	conffiles, err := run("", nil, "dpkg-query", "-W", "-f=${Conffiles}", "zkraft")
	if err != nil || !strings.Contains(conffiles, configPath+" ") {
		t.Errorf("%s is not a conffile of the package: %q, %v", configPath, conffiles, err)
	}
	u, err := user.Lookup("zkraft")
	if err != nil {
		t.Fatalf("the postinst made no zkraft user: %v", err)
	}
	if uid, _ := strconv.Atoi(u.Uid); uid == 0 || uid >= 1000 {
		t.Errorf("zkraft is uid %s, want a system user", u.Uid)
	}
	if owner := ownerOf(t, dataDir); owner != "zkraft" {
		t.Errorf("%s is owned by %s, want zkraft", dataDir, owner)
	}
	// zoo.cfg takes passwords (ssl.keyStore.password, superDigest): the
	// server's group reads it, nobody else.
	fi, err := os.Stat(configPath)
	if err != nil {
		t.Fatal(err)
	}
	group := ""
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if g, err := user.LookupGroupId(strconv.Itoa(int(st.Gid))); err == nil {
			group = g.Name
		}
	}
	if fi.Mode().Perm() != 0o640 || group != "zkraft" {
		t.Errorf("%s is %v, group %q; want 0640, group zkraft", configPath, fi.Mode().Perm(), group)
	}
}

// unit is what the test reads of a systemd unit's [Service] section.
type unit struct {
	user, group string
	execStart   []string
}

// readUnit reads User=, Group= and ExecStart= (split on blanks: the
// unit's command has no quoting).
func readUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the package installed no unit: %v", err)
	}
	defer f.Close()
	var u unit
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		switch {
		case !ok:
		case k == "User":
			u.user = v
		case k == "Group":
			u.group = v
		case k == "ExecStart":
			u.execStart = strings.Fields(v)
		}
	}
	if u.user == "" || len(u.execStart) == 0 {
		t.Fatalf("%s: no User= or ExecStart= (%+v)", path, u)
	}
	if u.group == "" {
		u.group = u.user
	}
	return u
}

// editConfig sets keys in the installed zoo.cfg, as an operator would.
func editConfig(t *testing.T, keys map[string]string) {
	t.Helper()
	b, err := os.ReadFile(configPath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for k, v := range keys {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(k) + `=.*$`)
		if !re.MatchString(s) {
			t.Fatalf("%s has no %s= line", configPath, k)
		}
		s = re.ReplaceAllString(s, k+"="+v)
	}
	if err := os.WriteFile(configPath, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startUnit runs the unit's ExecStart as its User and Group, as systemd
// would, and returns a func that stops it with SIGTERM (systemd's
// KillSignal) and checks it exits cleanly.
func startUnit(t *testing.T, u unit) (stop func()) {
	t.Helper()
	args := append([]string{"--reuid=" + u.user, "--regid=" + u.group, "--init-groups", "--"}, u.execStart...)
	cmd := exec.Command("setpriv", args...)
	logPath := filepath.Join(t.TempDir(), "zkraft.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A group of its own, killed when the test ends (setpriv's change of
	// user clears the parent-death signal).
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the server exited with %v on SIGTERM:\n%s", err, readTail(logPath))
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("the server did not stop within 30s of SIGTERM:\n%s", readTail(logPath))
		}
		logFile.Close()
	}
	t.Cleanup(stop)
	// setpriv execs the server: the process is the server, as the user.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if uid, err := processUID(cmd.Process.Pid); err == nil {
			if want, _ := user.Lookup(u.user); want != nil && uid == want.Uid {
				return stop
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the server exited at once (%v):\n%s", err, readTail(logPath))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's process never ran as %s:\n%s", u.user, readTail(logPath))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processUID is the real uid /proc shows for pid.
func processUID(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0], nil
			}
		}
	}
	return "", fmt.Errorf("/proc/%d/status: no Uid line", pid)
}

// ownerOf is the name of the user owning path.
func ownerOf(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	uid := strconv.FormatUint(uint64(fi.Sys().(*syscall.Stat_t).Uid), 10)
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return uid
}

// readTail is the end of a log file, for a failure message.
func readTail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// debArch is the Architecture field of a .deb.
func debArch(t *testing.T, deb string) string {
	t.Helper()
	arch, err := run("", nil, "dpkg-deb", "-f", deb, "Architecture")
	if err != nil {
		t.Fatal(err)
	}
	return arch
}

// checkLoopbackOnly checks the installed zoo.cfg's default: the client
// port answers on 127.0.0.1 and not on the host's other addresses.
func checkLoopbackOnly(t *testing.T, port int) {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || ipnet.IP.IsLoopback() || ipnet.IP.To4() == nil {
			continue
		}
		target := net.JoinHostPort(ipnet.IP.String(), strconv.Itoa(port))
		if c, err := net.DialTimeout("tcp", target, 2*time.Second); err == nil {
			c.Close()
			t.Errorf("the default config serves %s: want the loopback interface only", target)
		}
		return
	}
	t.Log("no non-loopback IPv4 address: the loopback-only default is not checked")
}
