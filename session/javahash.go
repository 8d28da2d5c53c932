package session

import (
	"sort"
	"unicode/utf16"

	"github.com/zkraft/zkraft/jute"
)

// ZooKeeper keeps a connection's identities in a ConcurrentHashMap-backed
// set, so whoAmI lists them in that table's iteration order: by bin
// (spread(Id.hashCode()) & (capacity-1)), then insertion order within a
// bin. Clients print the list as they receive it (zkCli's whoami), so we
// order ours the same way.

// javaStringHash is Java's String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			a, b := utf16.EncodeRune(r)
			h = 31*h + int32(a)
			h = 31*h + int32(b)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaIDHash is the jute-generated Id.hashCode.
func javaIDHash(id jute.Id) int32 {
	result := int32(17)
	result = 37*result + javaStringHash(id.Scheme)
	result = 37*result + javaStringHash(id.ID)
	return result
}

// javaSetOrder orders ids as a ConcurrentHashMap key set built by adding
// them in the given order iterates them.
func javaSetOrder(ids []jute.Id) []jute.Id {
	capacity := int32(16)
	for float64(len(ids)) >= 0.75*float64(capacity) {
		capacity *= 2
	}
	out := append([]jute.Id(nil), ids...)
	bin := func(id jute.Id) int32 {
		h := javaIDHash(id)
		spread := (h ^ int32(uint32(h)>>16)) & 0x7fffffff
		return spread & (capacity - 1)
	}
	sort.SliceStable(out, func(i, j int) bool { return bin(out[i]) < bin(out[j]) })
	return out
}

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
		h := javaStringHash(s)
		return (h ^ int32(uint32(h)>>16)) & (capacity - 1)
	}
	out := append([]string(nil), items...)
	sort.SliceStable(out, func(i, j int) bool { return bin(out[i]) < bin(out[j]) })
	return out
}
