package testenv

import (
	"errors"
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
