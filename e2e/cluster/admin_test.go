package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/jsonshape"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestAdminServerEnsemble reads the AdminServer of each member of a
// three-process ensemble (zoo.cfg admin.serverAddress/admin.serverPort):
// one leader that every member names, the voting view, zabstate and the
// leader-only monitor figures, as ZooKeeper's ensemble members report them.
func TestAdminServerEnsemble(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	members := procs.StartEnsemble(t, 3)
	leader := procs.LeaderOf(t, members, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		agreed := 0
		for _, m := range members {
			r := procs.AdminGet(t, m, "leader")
			if r["leader_id"] == float64(leader.ID) && r["leader_ip"] == "127.0.0.1" && r["is_leader"] == (m == leader) && r["error"] == nil {
				agreed++
			}
		}
		if agreed == len(members) {
			break
		}
		if time.Now().After(deadline) {
			for _, m := range members {
				t.Logf("member %d: %v", m.ID, procs.AdminGet(t, m, "leader"))
			}
			t.Fatalf("members do not agree that member %d leads", leader.ID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Each member's leader, voting_view and zabstate have the fields, order
	// and types of a real ZooKeeper 3.8 ensemble member in the same role
	// (testdata/admin/zookeeper-3.8-ensemble); monitor's fields are among
	// ZooKeeper's.
	for _, m := range members {
		role := "follower"
		if m == leader {
			role = "leader"
		}
		for _, cmd := range []string{"leader", "voting_view", "zabstate"} {
			want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "admin", "zookeeper-3.8-ensemble", role+"-"+cmd+".json"))
			if err != nil {
				t.Fatal(err)
			}
			got := procs.AdminBody(t, m, cmd)
			ws, err1 := jsonshape.OfTopOrdered(want)
			gs, err2 := jsonshape.OfTopOrdered([]byte(got))
			if err1 != nil || err2 != nil || ws != gs {
				t.Errorf("member %d (%s) %s:\n got shape %s\nwant shape %s (%v %v)\n%s", m.ID, role, cmd, gs, ws, err1, err2, got)
			}
		}
	}
	for _, m := range members {
		view := procs.AdminGet(t, m, "voting_view")["current_config"].(map[string]any)
		if len(view) != 3 {
			t.Fatalf("member %d voting_view: %v", m.ID, view)
		}
		for id, v := range view {
			e := v.(map[string]any)
			if e["learner_type"] != "participant" || len(e["server_addresses"].([]any)) != 1 || e["client_address"] == "" {
				t.Fatalf("member %d voting_view[%s]: %v", m.ID, id, e)
			}
		}
		zab := procs.AdminGet(t, m, "zabstate")
		if zab["zabstate"] != "broadcast" || zab["myid"] != float64(m.ID) || zab["voting"] != true || zab["is_leader"] != (m == leader) {
			t.Fatalf("member %d zabstate: %v", m.ID, zab)
		}
		mon := procs.AdminGet(t, m, "mntr")
		zkMon := map[string]any{}
		zkFile := filepath.Join("..", "..", "testdata", "admin", "zookeeper-3.8-ensemble", "follower-monitor.json")
		if m == leader {
			zkFile = strings.Replace(zkFile, "follower-", "leader-", 1)
		}
		if b, err := os.ReadFile(zkFile); err != nil || json.Unmarshal(b, &zkMon) != nil {
			t.Fatalf("%s: %v", zkFile, err)
		}
		for k, v := range mon {
			if k == "followers" { // ZooKeeper 3.4's name for learners, kept for older monitoring
				continue
			}
			if zv, ok := zkMon[k]; !ok || fmt.Sprintf("%T", zv) != fmt.Sprintf("%T", v) {
				t.Errorf("member %d monitor field %s (%T) not in ZooKeeper's %s monitor", m.ID, k, v, filepath.Base(zkFile))
			}
		}
		wantState := "follower"
		if m == leader {
			wantState = "leader"
			if mon["learners"] != float64(2) || mon["followers"] != float64(2) || mon["synced_followers"] != float64(2) ||
				mon["synced_observers"] != float64(0) || mon["leader_uptime"].(float64) <= 0 {
				t.Fatalf("leader monitor: %v", mon)
			}
		} else if _, ok := mon["followers"]; ok {
			t.Fatalf("follower %d reports followers", m.ID)
		}
		if mon["server_state"] != wantState || mon["command"] != "monitor" {
			t.Fatalf("member %d monitor: state %v command %v", m.ID, mon["server_state"], mon["command"])
		}
		conf := procs.AdminGet(t, m, "conf")
		if conf["server_id"] != float64(m.ID) || conf["tick_time"] != float64(500) {
			t.Fatalf("member %d configuration: %v", m.ID, conf)
		}
		icfg := procs.AdminGet(t, m, "icfg")["initial_configuration"].(string)
		if !strings.Contains(icfg, "admin.serverPort=") || !strings.Contains(icfg, "server.3=") {
			t.Fatalf("member %d initial_configuration: %q", m.ID, icfg)
		}
	}
}

// TestAdminPortTakenIsNotFatal: as with ZooKeeper, an AdminServer port
// that cannot be bound is logged and the server runs on without it.
