package ensemble

import "time"

// How long members wait on each other.
//
// ZooKeeper is patient with a member that is merely slow and quick with one
// that is gone. A follower gives up on a leader it has not heard from for
// syncLimit ticks (its socket's read timeout), and a leader steps down once
// it has not heard from a quorum for as long; with the usual zoo.cfg
// (tickTime=2000, syncLimit=5) that is 10 s, through CPU starvation, GC
// pauses and slow disks. A leader whose process dies is replaced at once
// all the same: its sockets close, and its followers elect as soon as
// they see them close.
//
// zkraft does both with hashicorp/raft. Its heartbeat timeout (how long a
// follower waits for a silent leader, randomized up to twice that), its
// election timeout (a candidate's) and its leader lease (how long a leader
// leads without hearing from a quorum) are all the patient timeout, P =
// Config.ElectionTimeout = tickTime×syncLimit: 10 s with the usual zoo.cfg,
// heartbeats every 1 to 2 s. Raft accepts no heartbeat timeout below the
// lease, and the lease is fixed when Raft starts (ReloadConfig cannot
// change it), so no timer ever runs shorter than P. The elections that
// must be quick start without a timer (campaign.go):
//
//   - A follower whose leader's append stream ends dials the leader's
//     member port; a refused connection means its process is gone, or its
//     Raft stopped after it removed itself (leaderloss.go). A process that
//     is slow or stopped (SIGSTOP) still has its port, and one cut off
//     cannot be reached at all. The first surviving voter by member id
//     then tells its own Raft to start an election at once (the
//     TimeoutNow a leadership transfer sends); the others only if those
//     before them are gone too. A kill -9 costs one election, well under
//     a second.
//   - A member that starts and knows no leader has Raft check for one at
//     once, in turn by member id, instead of after P to 2P: Raft then
//     elects, with a pre-vote that members which have a leader refuse, so
//     a member restarting into a running ensemble disturbs nobody.
//   - A member that sees another's vote request has Raft check for a
//     leader once its own has been silent for P, rather than refuse the
//     candidate until its own timer fires.
//
// A leader cut off silently (a partition, SIGSTOP, a dead host) is thus
// replaced as in ZooKeeper: its followers elect P to 2P after they last
// heard from it, and it steps down once it has not heard from a quorum
// for P.

// electionTimeout is P: Raft's heartbeat and election timeout (a lone
// member, which elects only itself, uses a short fixed one).
func (n *Node) electionTimeout() time.Duration {
	if !n.cfg.multi() {
		return 200 * time.Millisecond
	}
	return n.cfg.ElectionTimeout
}

// leaderLease is how long a leader leads without hearing from a quorum: P
// in an ensemble (a lone member is its own quorum).
func (n *Node) leaderLease() time.Duration {
	if !n.cfg.multi() {
		return n.electionTimeout() / 2
	}
	return n.cfg.ElectionTimeout
}

// campaignStep is how long members wait for each other's elections when
// they start them without a timer (campaign.go): long enough for an
// election on a loaded machine, a twentieth of P between 50 and 500 ms.
func (n *Node) campaignStep() time.Duration {
	return min(max(n.electionTimeout()/20, 50*time.Millisecond), 500*time.Millisecond)
}

// dialTimeout bounds a dial to another member on behalf of a request (a
// forwarded write finding its leader) or a probe: a member that does not
// answer a dial this long is as good as unreachable. P, at most 2 s.
func (n *Node) dialTimeout() time.Duration {
	return min(n.electionTimeout(), 2*time.Second)
}
