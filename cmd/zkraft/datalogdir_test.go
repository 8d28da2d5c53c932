package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/procs"
)

// TestDataLogDir: with zoo.cfg dataLogDir each member keeps its Raft log
// (raft.db, raft.journal) in that directory and its snapshots in dataDir;
// after all three are killed under write load and restarted, every
// acknowledged create is there; conf and dirs report the log directory and
// its size, as ZooKeeper's do.
func TestDataLogDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes twice")
	}
	logDirs := map[int]string{}
	members := procs.StartPreparedEnsemble(t, 3, func(m *procs.Member) {
		dir := filepath.Join(filepath.Dir(m.CfgPath), "txnlog")
		logDirs[m.ID] = dir
		f, err := os.OpenFile(m.CfgPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, "dataLogDir=%s\n", dir); err != nil {
			t.Fatal(err)
		}
	})
	acked := procs.KillAllUnderLoad(t, members, 4, time.Second, 50)

	for _, m := range members {
		dataDir := filepath.Dir(m.CfgPath)
		for _, name := range []string{"raft.db", "raft.journal"} {
			if _, err := os.Stat(filepath.Join(logDirs[m.ID], name)); err != nil {
				t.Errorf("member %d: %s not in dataLogDir: %v", m.ID, name, err)
			}
			if _, err := os.Stat(filepath.Join(dataDir, name)); err == nil {
				t.Errorf("member %d: %s in dataDir too", m.ID, name)
			}
		}
		// A member may still be replaying its log after the restart
		// (leaderOf needs only two): wait until it answers as serving.
		conf := askServing(t, m.ClientAddr, "conf")
		if !strings.Contains(conf, "\ndataLogDir="+logDirs[m.ID]+"\n") || !strings.Contains(conf, "\ndataDir="+dataDir+"\n") {
			t.Errorf("member %d conf does not name both directories:\n%s", m.ID, conf)
		}
		dirs := fourletter.Ask(m.ClientAddr, "dirs")
		match := regexp.MustCompile(`^datadir_size: (\d+)\nlogdir_size: (\d+)\n$`).FindStringSubmatch(dirs)
		if match == nil {
			t.Fatalf("member %d dirs: %q", m.ID, dirs)
		}
		logSize, _ := strconv.ParseInt(match[2], 10, 64)
		if logSize < 1<<20 { // the journal alone is 16 MiB
			t.Errorf("member %d dirs: logdir_size %d, want the log directory's size", m.ID, logSize)
		}
	}
	t.Logf("%d acknowledged creates before all members died, all present after the restart", acked)
}

// askServing sends a four-letter word to addr until the member answers it
// as a serving member (neither a refused connection nor ZooKeeper's "not
// currently serving" line), for up to 20 s.
func askServing(t *testing.T, addr, cmd string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := fourletter.Ask(addr, cmd)
		if out != "" && !strings.Contains(out, "not currently serving") || time.Now().After(deadline) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
}
