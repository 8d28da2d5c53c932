package archtest

import (
	"bytes"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliBinders are the packages that bind commands to urfave/cli: the
// binary, its flag helpers, and the two subcommands (shell, bench) that
// are packages of their own. Nothing the server is made of sees a
// *cli.Context: settings reach it as a server.Config.
var cliBinders = []string{"cmd", "internal/cli", "shell", "bench", "internal/testing", "scripts", "e2e"}

// TestCommandLineStaysAtTheTop: issue 41's rule for the house. Only the
// command-line binders import urfave/cli, and cmd/zkraft keeps the
// command-line binding only: at most 2,500 lines outside its tests.
func TestCommandLineStaysAtTheTop(t *testing.T) {
	for _, rel := range packages(t) {
		binder := false
		for _, b := range cliBinders {
			binder = binder || rel == b || strings.HasPrefix(rel, b+"/")
		}
		if binder {
			continue
		}
		pkg, err := build.ImportDir(filepath.Join("..", "..", "..", rel), 0)
		if err != nil {
			continue
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, "github.com/urfave/cli") {
				t.Errorf("%s imports %s: only %s bind the command line", rel, imp, strings.Join(cliBinders, ", "))
			}
		}
	}

	const maxLines = 2500
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "cmd", "zkraft", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	t.Logf("cmd/zkraft: %d lines outside its tests", lines)
	if lines == 0 || lines > maxLines {
		t.Errorf("cmd/zkraft has %d lines outside its tests, want at most %d: business logic belongs in server/ and below", lines, maxLines)
	}
}
