package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// adminGet fetches one AdminServer command from m and decodes its JSON.
func adminGet(t *testing.T, m *member, command string) map[string]any {
	t.Helper()
	resp, err := http.Get("http://" + m.adminAddr + "/commands/" + command)
	if err != nil {
		t.Fatalf("member %d: GET %s: %v", m.id, command, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("member %d: %s: %s %q\n%s", m.id, command, resp.Status, resp.Header.Get("Content-Type"), body)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("member %d: %s: %v\n%s", m.id, command, err, body)
	}
	return out
}

// TestAdminServerEnsemble reads the AdminServer of each member of a
// three-process ensemble (zoo.cfg admin.serverAddress/admin.serverPort):
// one leader that every member names, the voting view, zabstate and the
// leader-only monitor figures, as ZooKeeper's ensemble members report them.
func TestAdminServerEnsemble(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := startEnsemble(t, 3)
	leader := leaderOf(t, members, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		agreed := 0
		for _, m := range members {
			r := adminGet(t, m, "leader")
			if r["leader_id"] == float64(leader.id) && r["leader_ip"] == "127.0.0.1" && r["is_leader"] == (m == leader) && r["error"] == nil {
				agreed++
			}
		}
		if agreed == len(members) {
			break
		}
		if time.Now().After(deadline) {
			for _, m := range members {
				t.Logf("member %d: %v", m.id, adminGet(t, m, "leader"))
			}
			t.Fatalf("members do not agree that member %d leads", leader.id)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, m := range members {
		view := adminGet(t, m, "voting_view")["current_config"].(map[string]any)
		if len(view) != 3 {
			t.Fatalf("member %d voting_view: %v", m.id, view)
		}
		for id, v := range view {
			e := v.(map[string]any)
			if e["learner_type"] != "participant" || len(e["server_addresses"].([]any)) != 1 || e["client_address"] == "" {
				t.Fatalf("member %d voting_view[%s]: %v", m.id, id, e)
			}
		}
		zab := adminGet(t, m, "zabstate")
		if zab["zabstate"] != "broadcast" || zab["myid"] != float64(m.id) || zab["voting"] != true || zab["is_leader"] != (m == leader) {
			t.Fatalf("member %d zabstate: %v", m.id, zab)
		}
		mon := adminGet(t, m, "mntr")
		wantState := "follower"
		if m == leader {
			wantState = "leader"
			if mon["followers"] != float64(2) || mon["synced_followers"] != float64(2) {
				t.Fatalf("leader monitor: followers %v synced %v", mon["followers"], mon["synced_followers"])
			}
		} else if _, ok := mon["followers"]; ok {
			t.Fatalf("follower %d reports followers", m.id)
		}
		if mon["server_state"] != wantState || mon["command"] != "monitor" {
			t.Fatalf("member %d monitor: state %v command %v", m.id, mon["server_state"], mon["command"])
		}
		conf := adminGet(t, m, "conf")
		if conf["server_id"] != float64(m.id) || conf["tick_time"] != float64(500) {
			t.Fatalf("member %d configuration: %v", m.id, conf)
		}
		icfg := adminGet(t, m, "icfg")["initial_configuration"].(string)
		if !strings.Contains(icfg, "admin.serverPort=") || !strings.Contains(icfg, "server.3=") {
			t.Fatalf("member %d initial_configuration: %q", m.id, icfg)
		}
	}
}

// TestAdminPortTakenIsNotFatal: as with ZooKeeper, an AdminServer port
// that cannot be bound is logged and the server runs on without it.
func TestAdminPortTakenIsNotFatal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	core, logs := observer.New(zap.WarnLevel)
	stop := startAdmin(ln.Addr().String(), "/commands", nil, zap.New(core))
	stop()
	if logs.Len() != 1 || !strings.Contains(logs.All()[0].Message, "AdminServer") {
		t.Fatalf("want one warning about the AdminServer, got %v", logs.All())
	}
}
