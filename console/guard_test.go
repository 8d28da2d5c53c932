package console

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestGuardHosts: the guard the AdminServer puts in front of every path
// refuses a foreign Host with 421 and passes IP addresses and localhost;
// over TLS every answer, refusals too, carries Strict-Transport-Security.
func TestGuardHosts(t *testing.T) {
	h := GuardHosts(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }), []string{"zk1.example.com"})
	for _, overTLS := range []bool{false, true} {
		hs := httptest.NewUnstartedServer(h)
		if overTLS {
			hs.StartTLS()
		} else {
			hs.Start()
		}
		defer hs.Close()
		for host, want := range map[string]int{
			"evil.example": http.StatusMisdirectedRequest, "localhost:8080": http.StatusOK,
			"127.0.0.1": http.StatusOK, "zk1.example.com": http.StatusOK,
		} {
			for _, path := range []string{"/commands/dump", "/commands/stat"} {
				req, _ := http.NewRequest("GET", hs.URL+path, nil)
				req.Host = host
				resp, err := hs.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("GET %s Host %s: %d, want %d", path, host, resp.StatusCode, want)
				}
				if hsts := resp.Header.Get("Strict-Transport-Security"); (hsts != "") != overTLS {
					t.Errorf("GET %s over TLS %v: Strict-Transport-Security %q", path, overTLS, hsts)
				}
			}
		}
	}
}
