package procs

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// AdminBody fetches one AdminServer command from m.
func AdminBody(t testing.TB, m *Member, command string) string {
	t.Helper()
	resp, err := http.Get("http://" + m.AdminAddr + "/commands/" + command)
	if err != nil {
		t.Fatalf("member %d: GET %s: %v", m.ID, command, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("member %d: %s: %s %q\n%s", m.ID, command, resp.Status, resp.Header.Get("Content-Type"), body)
	}
	return string(body)
}

// AdminGet fetches one AdminServer command from m and decodes its JSON.
func AdminGet(t testing.TB, m *Member, command string) map[string]any {
	t.Helper()
	body := AdminBody(t, m, command)
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("member %d: %s: %v\n%s", m.ID, command, err, body)
	}
	return out
}

// Terms is each member's Raft term (the AdminServer's zab_epoch), once it
// knows a leader (between leaders zabstate has no epoch).
func Terms(t testing.TB, members []*Member) []uint64 {
	t.Helper()
	out := make([]uint64, len(members))
	deadline := time.Now().Add(20 * time.Second)
	for i, m := range members {
		for {
			if epoch, ok := AdminGet(t, m, "zabstate")["zab_epoch"].(float64); ok {
				out[i] = uint64(epoch)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d knows no leader", m.ID)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return out
}
