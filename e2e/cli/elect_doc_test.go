package cli

import (
	"regexp"
	"testing"
)

// TestElectWorkedExample runs the worked example of docs/operations.md's
// election section as written, with zkraft on the PATH and its server's
// port swapped for a free one: beta leads after alpha with its token in
// CMD's environment, and the listener printed the changes in order.
func TestElectWorkedExample(t *testing.T) {
	t.Parallel()
	out := runWorkedExample(t, lockServer(t))
	for _, want := range []string{`(?m)^elected "alpha": fencing token [1-9]\d* `, `(?m)^beta leads, token [1-9]\d*$`,
		`(?m)^\(no leader\)\nalpha\nbeta\n\(no leader\)\n`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("no %s", want)
		}
	}
}
