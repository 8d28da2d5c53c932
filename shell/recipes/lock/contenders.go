package lock

import (
	"regexp"
	"sort"
	"strconv"
)

// contenderRE matches the children that contend for the lock: Curator's
// "...-lock-NNNNNNNNNN" (lastIndexOf "lock-") and kazoo's
// "...__lock__NNNNNNNNNN", capturing the sequence number (which may be
// negative once the parent's cversion wraps).
var contenderRE = regexp.MustCompile(`(?:lock-|__lock__)(-?\d{10})$`)

// contender is one child of the lock path taking part in the lock.
type contender struct {
	name string
	seq  int64
}

// contenders returns the children that take part in the lock, ordered
// by sequence number; other children are ignored, as kazoo ignores them.
func contenders(children []string) []contender {
	var out []contender
	for _, c := range children {
		m := contenderRE.FindStringSubmatch(c)
		if m == nil {
			continue
		}
		seq, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, contender{name: c, seq: seq})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// predecessor returns the contender just before self among children, ""
// when self holds the lock, and found=false when self is not among them
// (its node is gone: the session expired).
func predecessor(children []string, self string) (pred string, found bool) {
	for _, c := range contenders(children) {
		if c.name == self {
			return pred, true
		}
		pred = c.name
	}
	return "", false
}
