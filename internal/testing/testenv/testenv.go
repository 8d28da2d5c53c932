// Package testenv holds the one rule for tests that need tools from outside
// Go (java and Debian's ZooKeeper packages, real clients, a KDC): they skip
// on a developer's machine without them, and fail under CI=true, where
// .ci/run installs everything and no test may be skipped.
package testenv

import (
	"os"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Require does nothing if err is nil; otherwise it fails t in CI and
// skips it elsewhere, saying why.
func Require(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if InCI() {
		t.Fatalf("CI=true and a tool the test needs is missing: %v", err)
	} else {
		t.Skipf("SKIP (not CI): %v", err)
	}
}
