package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestWatchWorkedExample runs the worked example of docs/operations.md's
// watch section as written, with zkraft on the PATH and its server's
// port swapped for a free one, and checks the events it prints.
func TestWatchWorkedExample(t *testing.T) {
	t.Parallel()
	out := runWorkedExample(t, lockServer(t))
	var events []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Node") {
			events = append(events, regexp.MustCompile(` 0x[0-9a-f]+$`).ReplaceAllString(l, " ZXID"))
		}
	}
	want := []string{"NodeCreated /app ZXID", "NodeCreated /app/db ZXID", "NodeDataChanged /app/db ZXID", "NodeDeleted /app/db ZXID"}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(out), "watching /app (persistent recursive watch, 0 nodes)") {
		t.Error("no line watching /app")
	}
}
