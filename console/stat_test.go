package console

import "testing"

// TestHexAsZooKeeper: ids and zxids show as ZooKeeper prints them
// (Long.toHexString: unsigned), so a session of a member whose id is 128
// or more, whose top bit is set, reads as in cons, dump and the logs.
func TestHexAsZooKeeper(t *testing.T) {
	server200 := int64(200)
	for v, want := range map[int64]string{
		0:                       "0x0",
		0x1a2b:                  "0x1a2b",
		int64(-1) << 63:         "0x8000000000000000",
		server200<<56 | 0x12345: "0xc800000000012345",
		-1:                      "0xffffffffffffffff",
	} {
		if got := hex(v); got != want {
			t.Errorf("hex(%d) = %s, want %s", v, got, want)
		}
	}
}
