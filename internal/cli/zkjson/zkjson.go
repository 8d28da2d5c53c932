// Package zkjson is the JSON form of what zkraft's user interfaces show
// of ZooKeeper's records: the web console's page (package console) and
// the shell's --output json (package shell) write a znode's Stat alike,
// so a script and the page read the same fields. Tree is the subtree file
// the console exports and imports (tree.go).
package zkjson

import (
	"strconv"

	"github.com/go-zookeeper/zk"
)

// Hex formats an id or zxid as ZooKeeper prints them: "0x" and
// Long.toHexString, unsigned, so a session of a member whose id is 128
// or more (its top bit set) is not negative.
func Hex(v int64) string { return "0x" + strconv.FormatUint(uint64(v), 16) }

// Stat is a znode's Stat: zxids and the ephemeral owner in Hex, times in
// milliseconds since the epoch (the page shows them in the browser's
// local time).
type Stat struct {
	Czxid          string `json:"czxid"`
	Mzxid          string `json:"mzxid"`
	Pzxid          string `json:"pzxid"`
	Ctime          int64  `json:"ctime"`
	Mtime          int64  `json:"mtime"`
	Version        int32  `json:"version"`
	Cversion       int32  `json:"cversion"`
	Aversion       int32  `json:"aversion"`
	EphemeralOwner string `json:"ephemeralOwner"`
	DataLength     int32  `json:"dataLength"`
	NumChildren    int32  `json:"numChildren"`
}

// StatOf is st's JSON form; nil for nil.
func StatOf(st *zk.Stat) *Stat {
	if st == nil {
		return nil
	}
	return &Stat{
		Czxid: Hex(st.Czxid), Mzxid: Hex(st.Mzxid), Pzxid: Hex(st.Pzxid),
		Ctime: st.Ctime, Mtime: st.Mtime,
		Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion,
		EphemeralOwner: Hex(st.EphemeralOwner), DataLength: st.DataLength, NumChildren: st.NumChildren,
	}
}
