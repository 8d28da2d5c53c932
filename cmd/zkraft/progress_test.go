package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgress: a transfer shorter than a second prints nothing; a
// longer one prints a line per second and a last one at the end.
func TestProgress(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, "received", 3<<20)
	_, _ = p.Write(make([]byte, 1<<20))
	p.finish()
	if out.Len() != 0 {
		t.Fatalf("a short transfer printed %q", out.String())
	}
	p = newProgress(&out, "received", 3<<20)
	p.last = time.Now().Add(-2 * time.Second) // a second has passed
	_, _ = p.Write(make([]byte, 1<<20))
	_, _ = p.Write(make([]byte, 2<<20)) // within the same second: no line
	p.finish()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "received: 1.0 MiB of 3.0 MiB (33%)") ||
		!strings.HasPrefix(lines[1], "received: 3.0 MiB of 3.0 MiB (100%)") {
		t.Fatalf("progress lines %q", lines)
	}
}
