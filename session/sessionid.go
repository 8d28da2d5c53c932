package session

import (
	"math/rand/v2"
	"time"
)

// firstSessionID is where a member's session ids start, as ZooKeeper's
// SessionTrackerImpl.initializeNextSessionId computes it: the server id
// shifted into the top byte over the start time's milliseconds (their low
// 40 bits, shifted left 16, leaving 65,536 ids a millisecond before a
// restart could reach ids it minted before). The shift is Java's: an id
// that does not fit a byte keeps its low byte, so members 44 and 300 mint
// under the same top byte, in ZooKeeper and here.
//
// What keeps sessions unique across members, whatever their ids, is the
// log, not the prefix: a createSession carries its id, and applying it
// fails (NodeExists) while a live session holds that id (znode's
// createSession), on every member alike; the member that minted it then
// tries another (createSession, skipAfterCollision). So two members whose
// ids are equal modulo 256 may mint the same candidate, but never both
// hold a session under it. Only read-only sessions, which never reach the
// log, skip that check; a client never brings one to a read-write server
// (it reconnects with session id 0 until it has seen one).
func firstSessionID(serverID int64, now time.Time) int64 {
	id := serverID<<56 | int64(uint64(now.UnixMilli())<<24>>8)
	if id == containerOwner {
		id++ // as ZooKeeper: never an ephemeral owner's container marker
	}
	return id
}

// containerOwner is the ephemeralOwner ZooKeeper gives a container node
// (EphemeralType.CONTAINER_EPHEMERAL_OWNER), never a session id.
const containerOwner = -1 << 63

// collisionStride bounds how far skipAfterCollision moves the counter.
const collisionStride = 1 << 16

// skipAfterCollision moves the session counter past a candidate the log
// refused because a live session held it: by a random stride up to a
// millisecond's worth of ids, so that two members minting from the same
// point (ids equal modulo 256, started in the same millisecond) fall out
// of step after one collision instead of colliding on every id.
func (s *Server) skipAfterCollision() {
	s.nextSession.Add(1 + rand.Int64N(collisionStride))
}
