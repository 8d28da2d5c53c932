package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefusesMinSessionTimeoutAboveMax: as ZooKeeper's
// QuorumPeerConfig, a minSessionTimeout above maxSessionTimeout (each
// bound as it applies: unset is 2 and 20 ticks) is refused at start.
func TestLoadRefusesMinSessionTimeoutAboveMax(t *testing.T) {
	dir := t.TempDir()
	load := func(text string) error {
		t.Helper()
		p := filepath.Join(dir, "zoo.cfg")
		if err := os.WriteFile(p, []byte("dataDir="+dir+"\n"+text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p, nil, nil)
		return err
	}
	for _, bad := range []string{
		"tickTime=2000\nminSessionTimeout=60000\nmaxSessionTimeout=30000\n",
		"tickTime=2000\nminSessionTimeout=50000\n", // above the default maximum, 20 ticks
		"tickTime=2000\nmaxSessionTimeout=3000\n",  // below the default minimum, 2 ticks
	} {
		if err := load(bad); err == nil || !strings.Contains(err.Error(), "must not be larger than maxSessionTimeout") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for _, good := range []string{
		"tickTime=2000\n",
		"tickTime=2000\nminSessionTimeout=30000\nmaxSessionTimeout=30000\n",
		"tickTime=2000\nminSessionTimeout=50000\nmaxSessionTimeout=90000\n",
	} {
		if err := load(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}
