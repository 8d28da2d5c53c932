package packaging

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelease runs make release and checks what it leaves in DIST: one
// binary per platform, static (no interpreter, no dynamic section) for the
// right machine, built with -trimpath (no trace of the source directory),
// stamped with git describe's version (zkraft version shows it), and a
// SHA256SUMS that matches them.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zkraft for two platforms")
	}
	requireTools(t, map[string]string{"make": "make", "git": "git", "sha256sum": "coreutils"})
	root := moduleRoot(t)
	version, err := run(root, nil, "git", "describe", "--tags", "--always", "--dirty")
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	if _, err := run(root, nil, "make", "--no-print-directory", "release", "DIST="+dist); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for arch, machine := range want {
		name := fmt.Sprintf("zkraft-%s-linux-%s", version, arch)
		path := filepath.Join(dist, name)
		bin, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("make release made no %s: %v", name, err)
		}
		sum := sha256.Sum256(bin)
		if line := hex.EncodeToString(sum[:]) + "  " + name + "\n"; !bytes.Contains(sums, []byte(line)) {
			t.Errorf("SHA256SUMS has no line %q:\n%s", line, sums)
		}
		checkStatic(t, path, machine)
		if bytes.Contains(bin, []byte(root+string(filepath.Separator))) {
			t.Errorf("%s holds the source directory %s: built without -trimpath", name, root)
		}
	}
	if n := strings.Count(string(sums), "\n"); n != len(want) {
		t.Errorf("SHA256SUMS has %d lines, want %d:\n%s", n, len(want), sums)
	}
	out, err := run(dist, nil, filepath.Join(dist, fmt.Sprintf("zkraft-%s-linux-amd64", version)), "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "zkraft "+version+" ") {
		t.Errorf("zkraft version: %q, want the version %s stamped", out, version)
	}

	// make deb and make image build one platform again (make release
	// PLATFORMS=linux/<arch>): SHA256SUMS keeps the other's line.
	if _, err := run(root, nil, "make", "--no-print-directory", "release", "DIST="+dist, "PLATFORMS=linux/amd64"); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, sums) {
		t.Errorf("SHA256SUMS after building one platform again:\n%s\nwant, as before:\n%s", again, sums)
	}
}

// TestBuildStamped: make build stamps bin/zkraft with git describe's
// version and the commit, as make release does, even where GOFLAGS has
// -buildvcs=false (the toolchain then records no revision).
func TestBuildStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zkraft")
	}
	requireTools(t, map[string]string{"make": "make", "git": "git"})
	root := moduleRoot(t)
	version, err := run(root, nil, "git", "describe", "--tags", "--always", "--dirty")
	if err != nil {
		t.Fatal(err)
	}
	revision, err := run(root, nil, "git", "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "zkraft")
	if _, err := run(root, []string{"GOFLAGS=-buildvcs=false"}, "make", "--no-print-directory", "build", "BIN="+bin); err != nil {
		t.Fatal(err)
	}
	out, err := run(root, nil, bin, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "zkraft "+version+" (revision "+revision) || strings.Contains(out, "unknown") {
		t.Errorf("zkraft version: %q, want version %s and revision %s", out, version, revision)
	}
}

// checkStatic fails t unless path is an ELF executable for machine with
// no program interpreter and no dynamic section: a static binary.
func checkStatic(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	if f.Machine != machine {
		t.Errorf("%s is for %v, want %v", path, f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (%v)", path, p.Type)
		}
	}
}
