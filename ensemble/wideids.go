package ensemble

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/backend"
)

// wideIDsAllowed reports whether this ensemble may use server ids that do
// not fit a byte (below 0 or above 255; ZooKeeper takes any long) in its
// log entries (kindSessionOwnerWide) and in its membership. zkraft v0.1
// read a member id from one byte, so they need level 2 (level.go): while
// the ensemble is at level 1 a v0.1 member may still be in it (a rolling
// upgrade), and no member writes the wide form nor admits a wide-id
// member. A new ensemble is formed at level 2; an upgraded one gets there
// with zkraft upgrade finish.
func (n *Node) wideIDsAllowed() bool { return n.ident != nil && n.ident.level() >= 2 }

// checkWideIDs refuses a membership with a server id that does not fit a
// byte while wideIDsAllowed says no.
func (n *Node) checkWideIDs(peers []backend.Peer) error {
	for _, p := range peers {
		if !narrowID(p.ID) && !n.wideIDsAllowed() {
			return fmt.Errorf("server id %d: ids below 0 or above 255 need every member on a release that reads them", p.ID)
		}
	}
	return nil
}

// raftID is a member's id in the Raft configuration: its decimal server
// id, as every release has written it ("300", "-5").
func raftID(id int64) raft.ServerID { return raft.ServerID(strconv.FormatInt(id, 10)) }

// memberID reads a Raft server id back (raftID); ok is false for anything
// else.
func memberID(sid raft.ServerID) (id int64, ok bool) {
	id, err := backend.ParseServerID(string(sid))
	return id, err == nil
}
