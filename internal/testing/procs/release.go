package procs

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zkraft/zkraft/internal/testing/testenv"
)

// Release is a tagged zkraft release as docs/releases.md records it.
type Release struct {
	Tag, Commit string
	Level       int
}

// repoRoot is the checkout's top directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the release tests need this checkout's git history: git rev-parse: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// PreviousRelease is the newest release in docs/releases.md whose commit is
// an ancestor of HEAD and not HEAD itself.
func PreviousRelease(t testing.TB) Release {
	t.Helper()
	root := repoRoot(t)
	f, err := os.Open(filepath.Join(root, "docs", "releases.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head, _ := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	var best *Release
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "v0.") {
			continue
		}
		r := Release{Tag: strings.TrimSpace(cells[1]), Commit: strings.TrimSpace(cells[2])}
		_, _ = fmt.Sscan(strings.TrimSpace(cells[3]), &r.Level)
		if r.Commit == strings.TrimSpace(string(head)) {
			continue
		}
		if exec.Command("git", "-C", root, "merge-base", "--is-ancestor", r.Commit, "HEAD").Run() != nil {
			t.Fatalf("release %s: commit %s is not in this checkout's history (a shallow clone?)", r.Tag, r.Commit)
		}
		best = &r // the table lists releases oldest first
	}
	if best == nil {
		t.Fatal("docs/releases.md lists no release before this checkout")
	}
	return *best
}

var (
	releaseMu   sync.Mutex
	releaseBins = map[string]string{}
)

// BuildRelease builds r's zkraft from this repository's history (git
// archive of its commit into a temporary directory) once per test
// binary, and returns its path; RunTests removes it.
func BuildRelease(t testing.TB, r Release) string {
	t.Helper()
	releaseMu.Lock()
	defer releaseMu.Unlock()
	if bin, ok := releaseBins[r.Commit]; ok {
		return bin
	}
	root := repoRoot(t)
	dir, err := os.MkdirTemp("", "zkraft-"+r.Tag+"-")
	if err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("sh", "-c", "git -C \"$1\" archive --format=tar \"$2\" | tar -x -C \"$3\"", "sh", root, r.Commit, dir)
	if out, err := archive.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("git archive %s (%s): %v\n%s", r.Tag, r.Commit, err, out)
	}
	bin := filepath.Join(dir, "zkraft")
	args := append([]string{"build", "-trimpath", "-o", bin, "-ldflags", "-X github.com/zkraft/zkraft/internal/base/buildinfo.Version=" + r.Tag}, testenv.BuildFlags()...)
	build := exec.Command("go", append(args, "./cmd/zkraft")...)
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("build %s: %v\n%s", r.Tag, err, out)
	}
	releaseBins[r.Commit] = bin
	return bin
}

// removeReleases removes what BuildRelease built (RunTests).
func removeReleases() {
	releaseMu.Lock()
	defer releaseMu.Unlock()
	for _, bin := range releaseBins {
		os.RemoveAll(filepath.Dir(bin))
	}
}
