package backend

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrServerID is wrapped by every error of ParseServerID: a server id that
// is not a Java long (where ZooKeeper's reconfig throws
// NumberFormatException and answers MarshallingError).
var ErrServerID = errors.New("not a server id")

// ParseServerID reads a server id (server.N's N, myid, a reconfig's
// leaving id) as ZooKeeper 3.9 does, with Java's Long.parseLong: a decimal
// number with an optional sign, from -2^63 to 2^63-1. ZooKeeper checks no
// range (QuorumMaj, PrepRequestProcessor's reconfig), so neither does this:
// 0, 300 and -5 are ids; "", "1.5", "0x10" and 2^63 are not. The callers
// add ZooKeeper's few checks of their own: myid -1 is ZooKeeper's "no id",
// and with extended types an id must fit a session id's top byte below
// 0xff (server.Config).
func ParseServerID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want a whole number from -9223372036854775808 to 9223372036854775807", ErrServerID, s)
	}
	return id, nil
}
