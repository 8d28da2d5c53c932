package cli

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
	"github.com/zkraft/zkraft/internal/testing/testproc"
	"github.com/zkraft/zkraft/server"
)

// listeningHost is the address a TCP socket of this machine listens on at
// port, from /proc/net/tcp and tcp6 ("0.0.0.0", "127.0.0.1", "::"...), or
// "" when none does.
func listeningHost(t *testing.T, port string) string {
	t.Helper()
	want, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil && file == "/proc/net/tcp6" {
			continue // IPv6 turned off
		}
		if err != nil {
			t.Fatalf("listening sockets unknown: %v", err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			hexHost, hexPort, ok := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); !ok || err != nil || p != want {
				continue
			}
			f.Close()
			return procHost(hexHost)
		}
		f.Close()
	}
	return ""
}

// procHost decodes /proc/net/tcp's address: 32-bit words in host (little
// endian) order.
func procHost(h string) string {
	var ip net.IP
	for i := 0; i+8 <= len(h); i += 8 {
		w, _ := strconv.ParseUint(h[i:i+8], 16, 32)
		ip = append(ip, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	if v4 := ip.To4(); v4 != nil && len(ip) == 16 && !ip.Equal(net.IPv6zero) {
		return v4.String()
	}
	return ip.String()
}

// writePEMKeyStore writes a self-signed key and certificate as a PEM key
// store.
func writePEMKeyStore(t *testing.T, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zkraft"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	out := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestZooConfigListensOnAllInterfaces: a zoo.cfg with clientPort and no
// clientPortAddress has the client port on every interface, as ZooKeeper,
// and so the secure client port and the AdminServer; a remote client
// finds the port after a binary swap. Without a zoo.cfg the server stays
// on loopback.
func TestZooConfigListensOnAllInterfaces(t *testing.T) {
	dir := t.TempDir()
	client, secure, admin := procs.FreeAddr(t), procs.FreeAddr(t), procs.FreeAddr(t)
	_, clientPort, _ := net.SplitHostPort(client)
	_, securePort, _ := net.SplitHostPort(secure)
	_, adminPort, _ := net.SplitHostPort(admin)
	ks := filepath.Join(dir, "server.pem")
	writePEMKeyStore(t, ks)
	cfg := filepath.Join(dir, "zoo.cfg")
	text := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%s\nsecureClientPort=%s\nssl.keyStore.location=%s\n"+
		"admin.serverPort=%s\n4lw.commands.whitelist=srvr\n", filepath.Join(dir, "data"), clientPort, securePort, ks, adminPort)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	procs.StartServer(t, client, "--config", cfg)
	for name, port := range map[string]string{"clientPort": clientPort, "secureClientPort": securePort, "admin.serverPort": adminPort} {
		deadline := time.Now().Add(5 * time.Second)
		for listeningHost(t, port) == "" && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond) // the AdminServer starts after the client port
		}
		if host := listeningHost(t, port); host != "0.0.0.0" && host != "::" {
			t.Errorf("%s %s: listening on %q, want every interface (0.0.0.0), as ZooKeeper", name, port, host)
		}
	}

	// Without a zoo.cfg: zkraft's own default, 127.0.0.1:2181.
	ln, err := net.Listen("tcp", "0.0.0.0:2181")
	if err != nil {
		t.Logf("port 2181 is taken here; the default address is not checked: %v", err)
		return
	}
	ln.Close()
	procs.StartServer(t, "127.0.0.1:2181", "--data-dir", filepath.Join(dir, "default"))
	if host := listeningHost(t, "2181"); host != "127.0.0.1" {
		t.Errorf("without a zoo.cfg the client port listens on %q, want 127.0.0.1", host)
	}
}

// runRefused runs zkraft with args and requires it to exit non-zero with
// one line of output naming want.
func runRefused(t *testing.T, want string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel() // a server that starts instead is killed
	out, err := testproc.CommandContext(ctx, procs.Binary(t), args...).CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err == nil || len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("zkraft %v: %v; want exit 1 and one line naming %q:\n%s", args, err, want, out)
	}
}

// TestZooConfigRefusals: a zoo.cfg ZooKeeper refuses to start with is
// refused, with one line saying why: no dataDir, a server line without an
// election port, a superDigest that is not a digest, a whitelist naming an
// unknown four-letter word. An unknown key starts the server with a
// warning suggesting the key it resembles.
func TestZooConfigRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	client := procs.FreeAddr(t)
	_, port, _ := net.SplitHostPort(client)
	base := fmt.Sprintf("tickTime=500\nclientPort=%s\nadmin.enableServer=false\n", port)
	for _, tc := range []struct{ name, text, want string }{
		{"nodatadir.cfg", base, "dataDir is not set"},
		{"noelection.cfg", base + "dataDir=" + data + "\nserver.1=127.0.0.1:2888\n",
			"server.1=127.0.0.1:2888 does not have the form host:quorumPort:electionPort"},
		{"plaindigest.cfg", base + "dataDir=" + data + "\nsuperDigest=super:secret\n", "superDigest is not user:base64(sha1(user:password))"},
		{"unknown4lw.cfg", base + "dataDir=" + data + "\n4lw.commands.whitelist=srvr,ruok,mntrr\n", `unknown four-letter word "mntrr"`},
	} {
		runRefused(t, tc.want, "server", "--config", write(tc.name, tc.text))
	}
	// --data-dir chooses the directory a zoo.cfg does not name.
	other := procs.FreeAddr(t)
	_, otherPort, _ := net.SplitHostPort(other)
	procs.StartServer(t, other, "--config", write("flagdatadir.cfg", strings.Replace(base, port, otherPort, 1)),
		"--data-dir", filepath.Join(dir, "flagdata"))
	runRefused(t, "server.4=127.0.0.1:2888 does not have the form", "members", "add", "--server", procs.FreeAddr(t), "server.4=127.0.0.1:2888")
	runRefused(t, "superDigest is not", "server", "--data-dir", data, "--client-addr", client, "--super-digest", "super:secret")
	runRefused(t, `unknown four-letter word "stats"`, "server", "--data-dir", data, "--client-addr", client, "--4lw-whitelist", "stats")
	if _, err := os.Stat(data); err == nil {
		t.Error("a refused configuration created the data directory")
	}

	// An unknown key is a warning naming the key it resembles.
	cfg := write("typo.cfg", base+"dataDir="+data+"\nmaxClientCnxn=10\n")
	logPath := filepath.Join(dir, "typo.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := testproc.Command(procs.Binary(t), "server", "--config", cfg, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := testproc.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(fourletter.Ask(client, "srvr"), "Mode: ") {
		if time.Now().After(deadline) {
			t.Fatal("server with an unknown key not serving")
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(logPath)
	if !strings.Contains(string(b), "maxClientCnxn") || !strings.Contains(string(b), `"didYouMean": "maxClientCnxns"`) {
		t.Errorf("no did-you-mean warning for maxClientCnxn:\n%s", b)
	}
}

// TestDigestCommand: `zkraft digest user:password` prints what ZooKeeper's
// DigestAuthenticationProvider prints, and the server takes it as its
// superDigest.
func TestDigestCommand(t *testing.T) {
	t.Parallel()
	out, err := testproc.Command(procs.Binary(t), "digest", "super:secret").CombinedOutput()
	if err != nil || string(out) != "super:secret->super:lK75jTNcA+U9vtVEw5vB51mj/w4=\n" {
		t.Fatalf("zkraft digest: %v %q", err, out)
	}
	if err := server.CheckSuperDigest(strings.TrimSpace(strings.SplitN(string(out), "->", 2)[1])); err != nil {
		t.Fatal(err)
	}
}

// TestStartErrors: the errors of a server that cannot start say what is
// wrong, once: a data directory another zkraft runs on names its pid (not
// bolt's "open raft.db: timeout"), rejoin does not move its log
// aside and import-zookeeper does not write beside it; a client port in use is found before
// any directory is made; a missing config file is named once.
func TestStartErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	client := procs.FreeAddr(t)
	first := procs.StartServer(t, client, "--data-dir", data, "--client-addr", client)
	runRefused(t, fmt.Sprintf("data directory %s is in use by another zkraft, pid %d", data, first.Process.Pid),
		"server", "--data-dir", data, "--client-addr", procs.FreeAddr(t))
	runRefused(t, fmt.Sprintf("rejoin: data directory %s is in use by another zkraft, pid %d", data, first.Process.Pid),
		"rejoin", "--data-dir", data)
	golden, err := filepath.Abs(filepath.Join("..", "..", "internal", "zookeeper", "datadir", "testdata", "zk38"))
	if err != nil {
		t.Fatal(err)
	}
	runRefused(t, fmt.Sprintf("import-zookeeper: data directory %s is in use by another zkraft, pid %d", data, first.Process.Pid),
		"import-zookeeper", "--from", golden, "--data-dir", data)

	other := filepath.Join(dir, "other")
	runRefused(t, "address already in use", "server", "--data-dir", other, "--client-addr", client)
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a server refused for its port created its data directory: %v", err)
	}
	// The metrics port as well, as ZooKeeper does not start without it.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	runRefused(t, "metrics: listen tcp "+busy.Addr().String()+": bind: address already in use",
		"server", "--data-dir", other, "--client-addr", procs.FreeAddr(t), "--metrics-addr", busy.Addr().String())
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a server refused for its metrics port created its data directory: %v", err)
	}

	missing := filepath.Join(dir, "missing", "zoo.cfg")
	out, _ := testproc.Command(procs.Binary(t), "server", "--config", missing).CombinedOutput()
	if strings.Count(string(out), missing) != 1 {
		t.Errorf("a missing config file must be named once:\n%s", out)
	}
	runRefused(t, "no such file or directory", "server", "--config", missing)
}

// TestVersion: `zkraft version` and `zkraft --version` print the module
// version and the revision the toolchain stamped into the binary (as `go
// version -m` reads them), and srvr, mntr and envi show them after
// ZooKeeper's release, in ZooKeeper's format.
func TestVersion(t *testing.T) {
	t.Parallel()
	bin := procs.Binary(t)
	out, err := testproc.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("zkraft version: %v\n%s", err, out)
	}
	flag, err := testproc.Command(bin, "--version").CombinedOutput()
	if err != nil || string(flag) != string(out) {
		t.Fatalf("zkraft --version: %v %q; want what zkraft version prints, %q", err, flag, out)
	}
	stamp, err := testproc.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, stamp)
	}
	module, revision := "", "unknown"
	for _, line := range strings.Split(string(stamp), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/zkraft/zkraft" {
			module = f[2]
		}
		if len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision=") {
			revision = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if module == "" || !strings.HasPrefix(string(out), "zkraft "+module+" (revision "+revision) {
		t.Fatalf("zkraft version printed %q; the binary holds module %q, revision %q", out, module, revision)
	}

	client := procs.FreeAddr(t)
	procs.StartServer(t, client, "--data-dir", filepath.Join(t.TempDir(), "data"), "--client-addr", client, "--4lw-whitelist", "srvr,mntr,envi")
	want := "3.9.3-zkraft-" + strings.Trim(module, "()")
	for word, prefix := range map[string]string{"srvr": "Zookeeper version: ", "mntr": "zk_version\t", "envi": "zookeeper.version="} {
		answer := "\n" + fourletter.Ask(client, word)
		_, line, _ := strings.Cut(answer, "\n"+prefix)
		line, _, _ = strings.Cut(line, "\n")
		if !strings.HasPrefix(line, want) || (len(revision) >= 12 && !strings.Contains(line, revision[:12])) {
			t.Errorf("%s does not show %q with revision %q:\n%s", word, prefix+want, revision, answer)
		}
	}
}
