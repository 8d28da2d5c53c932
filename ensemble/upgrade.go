package ensemble

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/zap"

	"github.com/zkraft/zkraft/backend"
)

var _ backend.Leveled = (*Node)(nil)

// EnsembleID is the ensemble's id (zero before its first leader at level 2
// wrote one).
func (n *Node) EnsembleID() EnsembleID { return n.fsm.ensemble().ID }

// EnsembleLevel is the ensemble's level as this member's log says.
func (n *Node) EnsembleLevel() int { return int(n.fsm.ensemble().level()) }

// ErrNotLeader is returned by RaiseLevel on a member that does not lead.
var ErrNotLeader = errors.New("ensemble: this member is not the leader")

// UpgradeStatus implements backend.Leveled.
func (n *Node) UpgradeStatus(timeout time.Duration) backend.LevelStatus {
	ens := n.fsm.ensemble()
	st := backend.LevelStatus{EnsembleID: ens.ID.String(), Level: int(ens.level()), BuildLevel: BinaryLevel, Leader: n.IsLeader()}
	st.Members = n.probeMembers(timeout)
	return st
}

// probeMembers asks every other member in the Raft configuration for its
// build level, at once.
func (n *Node) probeMembers(timeout time.Duration) []backend.MemberBuild {
	if n.mux == nil || !n.raftSet.Load() {
		return nil
	}
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil
	}
	self := raft.ServerID(fmt.Sprint(n.cfg.ID))
	var out []backend.MemberBuild
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range f.Configuration().Servers {
		if s.ID == self {
			continue
		}
		wg.Add(1)
		go func(s raft.Server) {
			defer wg.Done()
			var id uint64
			_, _ = fmt.Sscan(string(s.ID), &id)
			mb := backend.MemberBuild{ServerID: id, Addr: string(s.Address)}
			n.mux.forgetLegacy(string(s.Address)) // asked anew: it may have been upgraded moments ago
			c, peer, err := n.mux.openLevel(string(s.Address), streamProbe, timeout)
			if err != nil && !errors.Is(err, errRefused) {
				mb.Err = err.Error()
			} else {
				if c != nil {
					c.Close()
				}
				mb.BuildLevel = int(peer.Build)
				if err != nil && peer.Build == 0 {
					mb.Err = err.Error()
				}
			}
			mu.Lock()
			out = append(out, mb)
			mu.Unlock()
		}(s)
	}
	wg.Wait()
	return out
}

// RaiseLevel implements backend.Leveled: on the leader, once every member
// answers with a build that runs BinaryLevel, it writes the level (and an
// ensemble id, if none) to the log. From then on no member of an older
// build is admitted, and none can read the log: downgrading is no longer
// possible. Raising to the level the ensemble already runs succeeds and
// changes nothing.
func (n *Node) RaiseLevel(timeout time.Duration) (backend.LevelStatus, error) {
	st := n.UpgradeStatus(timeout)
	if !st.Leader {
		return st, ErrNotLeader
	}
	if st.Level >= BinaryLevel {
		return st, nil
	}
	var behind []string
	for _, m := range st.Members {
		if m.Err != "" || m.BuildLevel < BinaryLevel {
			why := fmt.Sprintf("runs level %d", m.BuildLevel)
			if m.Err != "" {
				why = m.Err
			}
			behind = append(behind, fmt.Sprintf("server.%d (%s): %s", m.ServerID, m.Addr, why))
		}
	}
	if len(behind) > 0 {
		return st, fmt.Errorf("ensemble: not every member can run level %d: %s", BinaryLevel, strings.Join(behind, "; "))
	}
	if err := n.proposeLevel(BinaryLevel); err != nil {
		return st, fmt.Errorf("ensemble: raise the level: %w", err)
	}
	ens := n.fsm.ensemble()
	st.Level, st.EnsembleID = int(ens.level()), ens.ID.String()
	n.log.Info("ensemble level raised", zap.Int("level", st.Level), zap.String("ensembleID", st.EnsembleID))
	return st, nil
}
