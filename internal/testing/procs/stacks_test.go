package procs

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func blockForStackTest(ch chan struct{}) { <-ch }

// stackSummary names each blocked goroutine's state and its innermost
// frame of the project's code, once per distinct stack, with a count.
func TestStackSummary(t *testing.T) {
	ch := make(chan struct{})
	defer close(ch)
	for range 3 {
		go blockForStackTest(ch)
	}
	time.Sleep(50 * time.Millisecond)
	buf := make([]byte, 1<<20)
	dump := "SIGQUIT: quit\nPC=0x0 m=0 sigcode=0\n\n" + string(buf[:runtime.Stack(buf, true)])
	got := stackSummary(dump)
	want := "   3 [chan receive] zkraft/zkraft/internal/testing/procs.blockForStackTest"
	if !strings.Contains(got, want+"\n") {
		t.Fatalf("summary lacks %q:\n%s", want, got)
	}
	if strings.Contains(got, "0x") {
		t.Fatalf("summary keeps arguments:\n%s", got)
	}
}
