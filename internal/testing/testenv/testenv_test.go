package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fakeTB records whether Require failed or skipped.
type fakeTB struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }

func TestRequireFailsInCIAndSkipsElsewhere(t *testing.T) {
	missing := errors.New("java is missing")
	for _, c := range []struct {
		ci                   string
		err                  error
		wantFailed, wantSkip bool
	}{
		{"true", missing, true, false},
		{"", missing, false, true},
		{"false", missing, false, true},
		{"true", nil, false, false},
		{"", nil, false, false},
	} {
		t.Setenv("CI", c.ci)
		f := &fakeTB{}
		Require(f, c.err)
		if f.failed != c.wantFailed || f.skipped != c.wantSkip {
			t.Errorf("CI=%q err=%v: failed %v skipped %v, want %v %v", c.ci, c.err, f.failed, f.skipped, c.wantFailed, c.wantSkip)
		}
	}
}

func TestRaceReports(t *testing.T) {
	dir := t.TempDir()
	if got := RaceReports(dir); len(got) != 0 {
		t.Fatalf("empty dir: %v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "race.123"), []byte("WARNING: DATA RACE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := RaceReports(dir)
	if len(got) != 1 || got[filepath.Join(dir, "race.123")] != "WARNING: DATA RACE" {
		t.Fatalf("reports = %v", got)
	}
}

func TestBuildFlags(t *testing.T) {
	t.Setenv("ZKRAFT_RACE", "1")
	if f := BuildFlags(); len(f) != 1 || f[0] != "-race" {
		t.Fatalf("with ZKRAFT_RACE=1: %v", f)
	}
	t.Setenv("ZKRAFT_RACE", "")
	if f := BuildFlags(); f != nil {
		t.Fatalf("without: %v", f)
	}
}
