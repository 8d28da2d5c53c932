package cli

import (
	"regexp"
	"testing"
)

// TestLockWorkedExample runs the worked example of docs/operations.md's
// lock section as written, with zkraft on the PATH and its server's port
// swapped for a free one: the second job gives up with 75, the third
// runs with its token in the environment and its status comes back.
func TestLockWorkedExample(t *testing.T) {
	t.Parallel()
	out := runWorkedExample(t, lockServer(t))
	for _, want := range []string{`(?m)^busy: exit 75$`, `(?m)^ran with token [1-9]\d*$`, `(?m)^exit 3$`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("no line %s", want)
		}
	}
}
