package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestHostAllowed: IP addresses, localhost, this machine's name and the
// configured names pass; any other name (a DNS rebinding page's) does not.
func TestHostAllowed(t *testing.T) {
	name, _ := os.Hostname()
	allowed := []string{"zk1.example.com"}
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:8080": true, "10.1.2.3": true, "localhost:8080": true,
		name + ":8080": name != "", "ZK1.example.com:8080": true, "zk1.example.com.": true,
		"evil.example:8080": false, "zk1.example.com.evil.example": false, "": false,
	} {
		if got := hostAllowed(host, allowed); got != want {
			t.Errorf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestConsoleRefusesOtherHosts: a request under a name the console does
// not answer for, as a DNS rebinding page sends it, gets 421 for the page
// and the API alike, before any login.
func TestConsoleRefusesOtherHosts(t *testing.T) {
	c := New(Config{ClientAddr: "127.0.0.1:1", AllowedHosts: []string{"zk1.example.com"}})
	defer c.Close()
	hs := httptest.NewServer(c.Handler())
	defer hs.Close()
	for _, tc := range []struct {
		host string
		want int
	}{{"evil.example", http.StatusMisdirectedRequest}, {"zk1.example.com", http.StatusOK}, {"", http.StatusOK}} {
		for _, path := range []string{"/console/", "/console/api/whoami"} {
			req, _ := http.NewRequest("GET", hs.URL+path, nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refused := resp.StatusCode == http.StatusMisdirectedRequest
			if refused != (tc.want == http.StatusMisdirectedRequest) {
				t.Errorf("GET %s Host %q: %d %s", path, tc.host, resp.StatusCode, body)
			}
			if refused && !strings.Contains(string(body), "console.allowedHosts") {
				t.Errorf("the refusal does not name the setting: %s", body)
			}
		}
	}
}
