package procs

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/acl"
	"github.com/zkraft/zkraft/internal/testing/zktest"
)

// FollowerSuper is the super user's credentials of every follower
// StartFollower starts, as a migration's operator holds them.
const FollowerSuper = "admin:secret"

// StartFollower starts a zkraft server following e as its observer
// server.id (zoo.cfg's extra lines added), and returns it once it serves
// clients.
func StartFollower(t testing.TB, e *zktest.Ensemble, id int, extra ...string) *Member {
	t.Helper()
	return StartFollowerWith(t, e, id, nil, extra...)
}

// StartFollowerWith is StartFollower with command-line flags for zkraft
// server.
func StartFollowerWith(t testing.TB, e *zktest.Ensemble, id int, flags []string, extra ...string) *Member {
	t.Helper()
	m := LaunchFollowerWith(t, e, id, flags, extra...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if out, err := FourLetter(m.ClientAddr, "srvr"); err == nil && strings.Contains(out, "Mode: observer") {
			return m
		}
		if m.Exited() || time.Now().After(deadline) {
			t.Fatalf("the observer does not serve:\n%s", Tail(m.Log(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// LaunchFollower starts a zkraft server following e as its observer
// server.id, without waiting for it to serve.
func LaunchFollower(t testing.TB, e *zktest.Ensemble, id int, extra ...string) *Member {
	t.Helper()
	return LaunchFollowerWith(t, e, id, nil, extra...)
}

// LaunchFollowerWith is LaunchFollower with command-line flags.
func LaunchFollowerWith(t testing.TB, e *zktest.Ensemble, id int, flags []string, extra ...string) *Member {
	t.Helper()
	dir := t.TempDir()
	m := &Member{ID: id, ClientAddr: FreeAddr(t), AdminAddr: FreeAddr(t), CfgPath: filepath.Join(dir, "zoo.cfg"),
		LogPath: filepath.Join(dir, "zkraft.log"), LogLevel: "info", Flags: flags}
	if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprintln(id)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(m.ClientAddr)
	host, adminPort, _ := net.SplitHostPort(m.AdminAddr)
	text := fmt.Sprintf("tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\n"+
		"admin.serverAddress=%s\nadmin.serverPort=%s\n4lw.commands.whitelist=*\npeerType=observer\nmigration.followZooKeeper=true\n"+
		"superDigest=%s\n%s\n%s\n",
		dir, port, host, adminPort, acl.DigestFromAuth(FollowerSuper), strings.Join(extra, "\n"), strings.Join(e.ServerLines, "\n"))
	if err := os.WriteFile(m.CfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if m.Cmd != nil {
			m.Kill()
		}
		if t.Failed() {
			t.Logf("zkraft observer %d log:\n%s", id, Tail(m.Log(), 8000))
		}
	})
	m.Start(t)
	return m
}

// MigrationCall posts a migration command to a following server as the
// super user and decodes its answer.
func MigrationCall(t testing.TB, m *Member, name, query string) (int, map[string]any) {
	t.Helper()
	u := "http://" + m.AdminAddr + "/commands/" + name
	if query != "" {
		u += "?" + query
	}
	req, _ := http.NewRequest(http.MethodPost, u, nil)
	req.Header.Set("Authorization", "digest "+FollowerSuper)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
