package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/snapfile"
)

// TestInspectTableQuotesControlCharacters: a snapshot's paths are any
// bytes; the table shows one holding control characters quoted, so a
// crafted file cannot send escape sequences to the operator's terminal.
func TestInspectTableQuotesControlCharacters(t *testing.T) {
	evil := "/a\x1b[2J\x1b]0;owned\x07"
	r := &snapfile.Report{
		Largest:             snapfile.Subtree{Path: evil},
		ByBytes:             []snapfile.Subtree{{Path: evil}},
		ByZnodes:            []snapfile.Subtree{{Path: "/plain"}},
		EphemeralsBySession: []snapfile.SessionEphemerals{{Session: 1, Count: 1, Paths: []string{evil}}},
	}
	var out bytes.Buffer
	if err := writeInspectTable(&out, "f.snap", r, 10); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07") {
		t.Fatalf("control characters reached the table:\n%q", out.String())
	}
	if !strings.Contains(out.String(), `"/a\x1b[2J\x1b]0;owned\a"`) || !strings.Contains(out.String(), "/plain") {
		t.Fatalf("table:\n%s", out.String())
	}
}
