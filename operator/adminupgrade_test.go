package operator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The upgrade commands on a lone member (level 2 at formation): GET
// reports the id and levels, upgrade_finish wants POST and credentials,
// and raising to the level it runs changes nothing.
func TestAdminUpgradeCommands(t *testing.T) {
	ts := startServer(t)
	hs := httptest.NewServer(NewAdmin(ts.srv).Handler("/commands"))
	defer hs.Close()
	call := func(method, name, auth string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+"/commands/"+name, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, name, err, body)
		}
		return resp.StatusCode, out
	}
	// The first leader writes the level moments after the election.
	var out map[string]any
	for i := 0; i < 100; i++ {
		_, out = call(http.MethodGet, "upgrade", "")
		if out["level"] == float64(2) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out["command"] != "upgrade" || out["level"] != float64(2) || out["build_level"] != float64(2) || out["leader"] != true ||
		len(out["ensemble_id"].(string)) != 36 || out["error"] != nil {
		t.Fatalf("upgrade: %v", out)
	}
	if status, _ := call(http.MethodGet, "upgrade_finish", ""); status != http.StatusMethodNotAllowed {
		t.Fatalf("GET upgrade_finish: %d", status)
	}
	if status, o := call(http.MethodPost, "upgrade_finish", ""); status != http.StatusUnauthorized || !strings.Contains(o["error"].(string), "Auth") {
		t.Fatalf("upgrade_finish without credentials: %d %v", status, o)
	}
	status, fin := call(http.MethodPost, "upgrade_finish", "ip")
	if status != http.StatusOK || fin["ensemble_id"] != out["ensemble_id"] || fin["level"] != float64(2) {
		t.Fatalf("upgrade_finish: %d %v", status, fin)
	}
}
