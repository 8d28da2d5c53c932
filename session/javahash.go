package session

import (
	"sort"

	"github.com/zkraft/zkraft/acl"
)

// javaClonedSetOrder orders items as ZooKeeper's getEphemerals returns
// them: it iterates HashSet.clone() of the session's ephemerals, and the
// clone re-hashes into a table sized for setSize entries
// (tableSizeFor(setSize/0.75 + 1)), so items fall into bins
// (h ^ h>>>16) & (capacity-1). Ties keep the given order.
func javaClonedSetOrder(items []string, setSize int) []string {
	want := int32(float32(setSize)/0.75 + 1)
	capacity := int32(1)
	for capacity < want {
		capacity *= 2
	}
	bin := func(s string) int32 {
		h := acl.JavaStringHash(s)
		return (h ^ int32(uint32(h)>>16)) & (capacity - 1)
	}
	out := append([]string(nil), items...)
	sort.SliceStable(out, func(i, j int) bool { return bin(out[i]) < bin(out[j]) })
	return out
}
