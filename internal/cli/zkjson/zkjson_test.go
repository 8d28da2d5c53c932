package zkjson

import (
	"encoding/json"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestStatJSON: the fields the console's page and shell scripts read,
// by these names; a session id with its top bit set is not negative.
func TestStatJSON(t *testing.T) {
	st := &zk.Stat{Czxid: 0x100000001, Mzxid: 0x100000002, Pzxid: 0x100000003, Ctime: 1700000000000, Mtime: 1700000000001,
		Version: 1, Cversion: 2, Aversion: 3, EphemeralOwner: -1, DataLength: 4, NumChildren: 5}
	b, err := json.Marshal(StatOf(st))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"czxid":"0x100000001","mzxid":"0x100000002","pzxid":"0x100000003","ctime":1700000000000,"mtime":1700000000001,` +
		`"version":1,"cversion":2,"aversion":3,"ephemeralOwner":"0xffffffffffffffff","dataLength":4,"numChildren":5}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if StatOf(nil) != nil {
		t.Error("StatOf(nil) is not nil")
	}
}

// TestHex: ids and zxids show as ZooKeeper prints them
// (Long.toHexString: unsigned), so a session of a member whose id is 128
// or more, whose top bit is set, reads as in cons, dump and the logs.
func TestHex(t *testing.T) {
	server200 := int64(200)
	for v, want := range map[int64]string{
		0:                       "0x0",
		0x1a2b:                  "0x1a2b",
		int64(-1) << 63:         "0x8000000000000000",
		server200<<56 | 0x12345: "0xc800000000012345",
		-1:                      "0xffffffffffffffff",
	} {
		if got := Hex(v); got != want {
			t.Errorf("Hex(%d) = %s, want %s", v, got, want)
		}
	}
}
