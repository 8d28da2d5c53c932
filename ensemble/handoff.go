package ensemble

import (
	"errors"
	"fmt"
	"time"
)

// ErrHandOffTimeout is returned when no follower took over leadership in
// time; the member then stops as the leader and the others elect.
var ErrHandOffTimeout = errors.New("ensemble: leadership hand-off timed out")

// HandOff passes leadership to the most up-to-date follower before a
// graceful stop (Raft's leadership transfer: the follower is caught up,
// then told to start its election at once), so the others need not wait
// out an election timeout. Writes reaching this member meanwhile are
// refused, as in any change of leader. It returns nil at once on a
// follower or a lone member.
func (n *Node) HandOff(timeout time.Duration) error {
	if n.fwd == nil || !n.IsLeader() {
		return nil
	}
	f := n.raft.LeadershipTransfer()
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("ensemble: leadership hand-off: %w", err)
		}
		return nil
	case <-time.After(timeout):
		return ErrHandOffTimeout
	}
}
