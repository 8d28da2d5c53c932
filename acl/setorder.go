package acl

import (
	"unicode/utf16"

	"github.com/zkraft/zkraft/jute"
)

// ZooKeeper keeps a connection's identities (ServerCnxn.authInfo) in a
// ConcurrentHashMap-backed set, and everything that lists them iterates
// that table: whoAmI's answer, and fixupACL's expansion of an "auth" entry
// (request.authInfo is a copy of the set as a list). The order is by bin
// (spread(Id.hashCode()) & (capacity-1)), then insertion order within a
// bin. IdentityOrder reproduces it from the identities in insertion order,
// which is how a session's set is recorded in the log, so every member
// derives the same order.

// JavaStringHash is Java's String.hashCode over UTF-16 code units.
func JavaStringHash(s string) int32 {
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
	result = 37*result + JavaStringHash(id.Scheme)
	result = 37*result + JavaStringHash(id.ID)
	return result
}

// IdentityOrder orders ids, given in the order they were added, as a
// ZooKeeper connection's identity set iterates them. ids is not modified;
// a repeated identity counts once, as in a set.
//
// It replays the adds on a model of ConcurrentHashMap's table: 16 bins to
// start, an add appended to its bin's list, and the table doubled once it
// holds three quarters of its capacity. A doubling splits each bin's list
// as transfer() does: the longest tail whose nodes all go the same way
// moves as it is, and the nodes before it are pushed in front of their new
// list one by one, which reverses them. (Bins long enough to become trees
// take more identities than a connection holds.)
func IdentityOrder(ids []jute.Id) []jute.Id {
	type node struct {
		id   jute.Id
		hash int32
	}
	spread := func(id jute.Id) int32 {
		h := javaIDHash(id)
		return (h ^ int32(uint32(h)>>16)) & 0x7fffffff
	}
	table := make([][]node, 16)
	size := 0
	seen := make(map[jute.Id]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		h := spread(id)
		i := h & int32(len(table)-1)
		table[i] = append(table[i], node{id, h})
		size++
		if size < len(table)-len(table)/4 {
			continue
		}
		n := int32(len(table))
		next := make([][]node, 2*n)
		for i, bin := range table {
			if len(bin) == 0 {
				continue
			}
			last := len(bin) - 1 // start of the tail going one way
			for last > 0 && bin[last-1].hash&n == bin[last].hash&n {
				last--
			}
			var lo, hi []node
			for _, nd := range bin[:last] {
				if nd.hash&n == 0 {
					lo = append([]node{nd}, lo...)
				} else {
					hi = append([]node{nd}, hi...)
				}
			}
			if bin[last].hash&n == 0 {
				lo = append(lo, bin[last:]...)
			} else {
				hi = append(hi, bin[last:]...)
			}
			next[i], next[int32(i)+n] = lo, hi
		}
		table = next
	}
	out := make([]jute.Id, 0, size)
	for _, bin := range table {
		for _, nd := range bin {
			out = append(out, nd.id)
		}
	}
	return out
}
