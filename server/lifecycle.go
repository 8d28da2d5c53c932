package server

import "fmt"

// State is what a server's backend is in its life. A server started as
// an ensemble member is a member for good. A server started to follow a
// running ZooKeeper ensemble (migration.followZooKeeper) is following;
// a live migration's cutover then freezes it (writes held), stops it at a
// zxid, and makes it a member of the new ensemble; a thaw, asked for or
// after frozenLimit, calls the cutover off and it follows again.
//
//	following --freeze--> frozen --stop--> stopped --cutover--> member
//	    ^  (freeze again)   |  (stop again)  |
//	    +------thaw/expire--+----------------+
type State string

// The states.
const (
	StateFollowing State = "following"
	StateFrozen    State = "frozen"
	StateStopped   State = "stopped"
	StateMember    State = "member"
)

// event is a transition asked of the lifecycle.
type event string

// The events.
const (
	evFreeze  event = "freeze"
	evStop    event = "stop"
	evThaw    event = "thaw"
	evExpire  event = "expire"
	evCutover event = "cutover"
)

// transitions is the lifecycle: from each state, the events it takes and
// the state each leads to. An event missing from a state's row is
// refused there, and the state stays.
var transitions = map[State]map[event]State{
	StateFollowing: {evFreeze: StateFrozen, evThaw: StateFollowing},
	StateFrozen:    {evFreeze: StateFrozen, evStop: StateStopped, evThaw: StateFollowing, evExpire: StateFollowing},
	StateStopped:   {evStop: StateStopped, evThaw: StateFollowing, evExpire: StateFollowing, evCutover: StateMember},
	StateMember:    {},
}

// lifecycle is a server's State and its transitions. It is not safe for
// concurrent use: its owner (migration) holds a lock around each command.
type lifecycle struct{ state State }

// next returns the state e leads to from the current one, or an error
// saying why e is refused there.
func (l *lifecycle) next(e event) (State, error) {
	to, ok := transitions[l.state][e]
	if !ok {
		switch {
		case l.state == StateMember:
			return l.state, fmt.Errorf("cannot %s: the cutover is done", e)
		case e == evStop:
			return l.state, fmt.Errorf("cannot stop: %s (freeze first)", l.state)
		}
		return l.state, fmt.Errorf("cannot %s: %s", e, l.state)
	}
	return to, nil
}

// can reports whether e is taken in the current state.
func (l *lifecycle) can(e event) bool {
	_, ok := transitions[l.state][e]
	return ok
}

// apply moves to the state e leads to; the caller checked next first and
// did the work the transition stands for.
func (l *lifecycle) apply(e event) {
	if to, ok := transitions[l.state][e]; ok {
		l.state = to
	}
}
