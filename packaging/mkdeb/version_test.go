package main

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// require skips t on a developer's machine, and fails it in CI (CI=true,
// where .ci/run installs every tool), when err says a tool is missing:
// the rule of zkraft's internal/testing/testenv, which this module, apart
// from zkraft's, does not import.
func require(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and a tool the test needs is missing: %v", err)
	}
	t.Skipf("SKIP (not CI): %v", err)
}

func TestDebVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.0":                  "1.2.0",
		"v1.2.0-rc1":              "1.2.0~rc1",
		"v1.2.0-rc.1-2-g1234abc":  "1.2.0~rc.1+git2.g1234abc",
		"v1.2.0-3-gabcdef0":       "1.2.0+git3.gabcdef0",
		"v1.2.0-3-gabcdef0-dirty": "1.2.0+git3.gabcdef0.dirty",
		"v1.2.0-dirty":            "1.2.0+dirty",
		"abcdef0":                 "0.0.0+gabcdef0",
		"abcdef0-dirty":           "0.0.0+gabcdef0.dirty",
	} {
		got, err := debVersion(in)
		if err != nil || got != want {
			t.Errorf("debVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-dirty", "v1.2.0_x", "v1.2/0"} {
		if got, err := debVersion(bad); err == nil {
			t.Errorf("debVersion(%q) = %q, want an error", bad, got)
		}
	}
}

// TestDebVersionOrder: dpkg sorts the versions as the releases come.
func TestDebVersionOrder(t *testing.T) {
	if _, err := exec.LookPath("dpkg"); err != nil {
		require(t, fmt.Errorf("dpkg not found (Debian: dpkg): %w", err))
	}
	order := []string{"abcdef0", "v1.2.0-rc1", "v1.2.0-rc1-4-g1111111", "v1.2.0", "v1.2.0-dirty", "v1.2.0-3-gabcdef0", "v1.2.1"}
	for i := 1; i < len(order); i++ {
		a, _ := debVersion(order[i-1])
		b, _ := debVersion(order[i])
		if err := exec.Command("dpkg", "--compare-versions", a, "lt", b).Run(); err != nil {
			t.Errorf("dpkg does not sort %s (%s) before %s (%s)", a, order[i-1], b, order[i])
		}
	}
}
