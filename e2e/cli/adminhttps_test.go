package cli

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestAdminHTTPSServesConsole: with admin.forceHttps the AdminServer, and
// the console beside it, answer over HTTPS with the ssl.quorum key store
// and refuse plain HTTP; every answer carries Strict-Transport-Security;
// the console's session cookie is then Secure.
func TestAdminHTTPSServesConsole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ks := filepath.Join(dir, "admin.pem")
	writePEMKeyStore(t, ks)
	clientAddr, adminAddr := procs.FreeAddr(t), procs.FreeAddr(t)
	host, port, _ := strings.Cut(adminAddr, ":")
	_, cport, _ := strings.Cut(clientAddr, ":")
	cfg := fmt.Sprintf("dataDir=%s\nclientPortAddress=127.0.0.1\nclientPort=%s\nadmin.serverAddress=%s\nadmin.serverPort=%s\n"+
		"admin.forceHttps=true\nssl.quorum.keyStore.location=%s\nconsole.enabled=true\n", dir, cport, host, port, ks)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	procs.StartServer(t, clientAddr, "--config", cfgPath)

	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the test's self-signed certificate
	}}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := hc.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get("https://" + adminAddr + "/commands/ruok"); st != http.StatusOK || !strings.Contains(body, `"command" : "ruok"`) {
		t.Fatalf("https ruok: %d %s", st, body)
	}
	if st, body := get("https://" + adminAddr + "/console/"); st != http.StatusOK || !strings.Contains(body, "zkraft console") {
		t.Fatalf("https console: %d %.200s", st, body)
	}
	// Every answer over HTTPS, the commands', the console's and a
	// refusal's, tells the browser to use nothing else.
	for _, path := range []string{"/commands/ruok", "/console/", "/console/api/whoami"} {
		resp, err := hc.Get("https://" + adminAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if hsts := resp.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(hsts, "max-age=") {
			t.Fatalf("GET %s over HTTPS: %d, Strict-Transport-Security %q", path, resp.StatusCode, hsts)
		}
	}
	if resp, err := hc.Get("http://" + adminAddr + "/commands/ruok"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered on an HTTPS AdminServer")
		}
	}
	resp, err := hc.Post("https://"+adminAddr+"/console/api/login", "application/json", strings.NewReader(`{"user":"","password":""}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := resp.Header.Get("Set-Cookie"); resp.StatusCode != http.StatusOK || !strings.Contains(c, "; Secure") || !strings.Contains(c, "HttpOnly") {
		t.Fatalf("login over HTTPS: %d, cookie %q", resp.StatusCode, c)
	}
}

// TestAdminTLSConfig: the AdminServer's TLS takes the quorum key store,
// else the client port's, asks for a client certificate only with
// admin.needClientAuth, and is refused without any key store.
