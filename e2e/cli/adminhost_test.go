package cli

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestAdminServerRefusesForeignHosts: every AdminServer path, not only the
// console, answers only under a Host header that names this server, so a
// DNS rebinding page cannot read /commands/dump or /commands/stat; an IP
// address, localhost and a name in console.allowedHosts are served. The
// console is off: the guard is the AdminServer's own.
func TestAdminServerRefusesForeignHosts(t *testing.T) {
	t.Parallel()
	clientAddr, adminAddr := procs.FreeAddr(t), procs.FreeAddr(t)
	procs.StartServer(t, clientAddr, "--client-addr", clientAddr, "--data-dir", t.TempDir(), "--admin-addr", adminAddr,
		"--console-allowed-hosts", "zk1.example.com")
	_, port, _ := strings.Cut(adminAddr, ":")
	hc := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/commands/dump", "/commands/stat", "/commands/ruok"} {
		for host, want := range map[string]int{
			"rebound.example:" + port: http.StatusMisdirectedRequest,
			"localhost:" + port:       http.StatusOK,
			adminAddr:                 http.StatusOK,
			"zk1.example.com":         http.StatusOK,
		} {
			req, _ := http.NewRequest("GET", "http://"+adminAddr+path, nil)
			req.Host = host
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET %s Host %s: %d, want %d: %.200s", path, host, resp.StatusCode, want, body)
			}
			if want == http.StatusMisdirectedRequest && !strings.Contains(string(body), "console.allowedHosts") {
				t.Errorf("the refusal does not name the setting: %s", body)
			}
			if resp.Header.Get("Strict-Transport-Security") != "" {
				t.Errorf("Strict-Transport-Security over plain HTTP")
			}
		}
	}
}
