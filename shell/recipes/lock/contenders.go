package lock

import (
	"regexp"
	"sort"
	"strconv"
)

// contenderRE matches the children that contend for the lock: Curator's
// "...-lock-NNNNNNNNNN" (lastIndexOf "lock-"), Curator LeaderLatch's
// "...-latch-NNNNNNNNNN" and kazoo's "...__lock__NNNNNNNNNN" (kazoo's
// Election is a Lock), capturing the sequence number (which may be
// negative once the parent's cversion wraps).
var contenderRE = regexp.MustCompile(`(?:lock-|latch-|__lock__)(-?\d{10})$`)

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

// Contenders returns the names of the children that take part in the
// recipe, lowest sequence (the holder, or the leader) first.
func Contenders(children []string) []string {
	cs := contenders(children)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}
