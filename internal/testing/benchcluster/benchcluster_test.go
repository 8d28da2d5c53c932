package benchcluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSteal(t *testing.T) {
	stat := "cpu  2255 34 2290 22625563 6290 127 456 250 0 0\ncpu0 1132 34 1441 11311718 3675 127 438 125 0 0\n"
	if got := parseSteal(stat); got != 2500*time.Millisecond {
		t.Fatalf("steal of %q = %v, want 2.5s", stat, got)
	}
	if got := parseSteal("cpu  1 2 3\n"); got != 0 {
		t.Fatalf("steal of a short line = %v, want 0", got)
	}
}

// TestSettingsReplaceDefaults: a setting replaces the default line of its
// key in place and new keys come after the defaults.
func TestSettingsReplaceDefaults(t *testing.T) {
	got := mergeSettings([]string{"tickTime=2000", "syncLimit=5"}, []string{"syncLimit=20", "globalOutstandingLimit=500"})
	want := []string{"tickTime=2000", "syncLimit=20", "globalOutstandingLimit=500"}
	if !slices.Equal(got, want) {
		t.Fatalf("merged %q, want %q", got, want)
	}
}

// TestNewWritesEachMembersConfig: every member's zoo.cfg names its own
// data directory, the settings, and every member's ports; zkraft members
// asked for profiles get a --pprof-addr of their own.
func TestNewWritesEachMembersConfig(t *testing.T) {
	root := t.TempDir()
	e, err := New(Config{Name: "zkraft", Root: root, Bin: "/bin/zkraft", Size: 3, Settings: []string{"maxSessionTimeout=60000"}, Pprof: true, Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Members) != 3 || len(e.Addrs()) != 3 || strings.Count(e.Servers(), ",") != 2 {
		t.Fatalf("members %d, servers %q", len(e.Members), e.Servers())
	}
	for _, m := range e.Members {
		b, err := os.ReadFile(filepath.Join(m.Dir, "zoo.cfg"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := string(b)
		for _, want := range append([]string{"dataDir=" + m.Dir, "maxSessionTimeout=60000", "tickTime=2000"}, e.Addrs()...) {
			if !strings.Contains(cfg, want) {
				t.Errorf("member %d's zoo.cfg lacks %q:\n%s", m.ID, want, cfg)
			}
		}
		if m.PprofAddr == "" || !slices.Contains(m.argv, m.PprofAddr) {
			t.Errorf("member %d: pprof address %q, argv %q", m.ID, m.PprofAddr, m.argv)
		}
		if i := slices.Index(m.argv, "--admin-addr"); i < 0 || i+1 >= len(m.argv) || m.argv[i+1] != m.AdminAddr || m.AdminAddr == "" {
			t.Errorf("member %d: AdminServer address %q, argv %q", m.ID, m.AdminAddr, m.argv)
		}
		if m.Running() || m.Pid() != 0 {
			t.Errorf("member %d runs before Start", m.ID)
		}
	}
}

func TestParseHeapProfile(t *testing.T) {
	profile := "heap profile: 1: 2 [3: 4] @ heap/1048576\n# runtime.MemStats\n# HeapInuse = 4096000\n# Stack = 65536 / 65536\n"
	if got, err := parseHeapProfile(profile); err != nil || got != 4096000+65536 {
		t.Fatalf("heap of the profile = %d, %v", got, err)
	}
	if _, err := parseHeapProfile("not a profile"); err == nil {
		t.Fatal("a profile without HeapInuse parsed")
	}
}

func TestParseNetstat(t *testing.T) {
	text := "TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 3 29565 29570\nIpExt: InNoRoutes\nIpExt: 0\n"
	if got := parseNetstat(text, "TcpExt:", "ListenOverflows"); got != 29565 {
		t.Fatalf("ListenOverflows %d, want 29565", got)
	}
	if got := parseNetstat(text, "TcpExt:", "Missing"); got != 0 {
		t.Fatalf("a missing field %d, want 0", got)
	}
}
