package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// runApp runs the zkraft command line in process and returns its output.
func runApp(args ...string) (string, error) {
	var out bytes.Buffer
	app := &cli.App{Name: "zkraft", Commands: commands(), Writer: &out, ErrWriter: &out}
	err := app.Run(append([]string{"zkraft"}, args...))
	return out.String(), err
}

// TestImportCommand imports the golden ZooKeeper 3.8 data directory named
// by a zoo.cfg into a new data directory: refused while the zoo.cfg's
// client port is taken (a ZooKeeper still running), done once it is free,
// refused again over the state it wrote.
func TestImportCommand(t *testing.T) {
	golden, err := filepath.Abs(filepath.Join("..", "..", "internal", "zkdata", "testdata", "zk38"))
	if err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	cfg := filepath.Join(t.TempDir(), "zoo.cfg")
	text := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nextendedTypesEnabled=true\n", golden, port)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "zkraft")

	if _, err := runApp("import-zookeeper", "--config", cfg, "--data-dir", target); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Fatalf("import while the client port is taken: %v", err)
	}
	busy.Close()
	out, err := runApp("import-zookeeper", "--config", cfg, "--data-dir", target)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	for _, want := range []string{"snapshot.15", "znodes          17", "last zxid       0x19", "already held    1"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(target, "snapshots", "*", "state.bin")); len(m) != 1 {
		t.Errorf("snapshots written: %v", m)
	}
	if _, err := runApp("import-zookeeper", "--config", cfg, "--data-dir", target); err == nil || !strings.Contains(err.Error(), "already holds state") {
		t.Errorf("a second import over the first: %v", err)
	}
}
