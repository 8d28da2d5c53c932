package benchfloor

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.1, 1}, {0.5, 5}, {0.51, 6}, {0.99, 10}, {1, 10}} {
		if got := Percentile(ds, c.q); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if ds[0] != 5 {
		t.Error("Percentile sorted its argument")
	}
	if Percentile(nil, 0.5) != 0 {
		t.Error("the percentile of nothing is not 0")
	}
}

// TestMeasureLeavesNothingBehind: the fsync file goes into the given
// directory and is removed; every sample is a real duration.
func TestMeasureLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	f, err := Measure(dir, 20)
	if err != nil {
		t.Fatal(err)
	}
	if f.FsyncP50 <= 0 || f.FsyncP99 < f.FsyncP50 || f.RTTP50 <= 0 || f.RTTP99 < f.RTTP50 || f.Samples != 20 {
		t.Fatalf("floor %+v", f)
	}
	if f.Total() != f.FsyncP50+f.RTTP50 {
		t.Fatalf("total %v", f.Total())
	}
	if f.QuorumP50 <= 0 || f.QuorumP99 < f.QuorumP50 || f.SharedTotal() != f.QuorumP50+f.RTTP50 {
		t.Fatalf("shared-disk floor %+v", f)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left in the directory: %v", left)
	}
	if s := f.String(); !strings.HasPrefix(s, "floor ") || !strings.Contains(s, "fsync p50") || !strings.Contains(s, "round trip p50") ||
		!strings.Contains(s, "on one shared disk") {
		t.Fatalf("String: %q", s)
	}
}

func TestFsyncsFailsInAMissingDirectory(t *testing.T) {
	if _, err := Fsyncs(t.TempDir()+"/missing", 1); err == nil {
		t.Fatal("no error for a missing directory")
	}
}

func TestQuorumFsyncsFailsInAMissingDirectory(t *testing.T) {
	if _, err := QuorumFsyncs(t.TempDir()+"/missing", Members, 1); err == nil {
		t.Fatal("no error for a missing directory")
	}
	if _, err := QuorumFsyncs(t.TempDir(), 0, 1); err == nil {
		t.Fatal("no error for no members")
	}
}
