package ensemble

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/zkraft/zkraft/znode"
)

// admit readies an encoded entry for this member's log as leader. Every
// member stops at an entry it cannot decode (fsm.applyLocked), so the
// leader refuses, with dec, an entry a follower forwarded that does not
// decode, rather than let one bad peer stop the ensemble (dec nil: the
// entry was encoded here). And it stamps its own tree options into a
// transaction, in place: the leader's options decide every write, as
// ZooKeeper's leader alone decides them, so members started with
// different settings still apply the log alike (znode.Txn.Options).
func (n *Node) admit(data []byte, dec *znode.TxnDecoder) error {
	if dec != nil {
		e, err := decodeEntry(data, dec)
		if err != nil {
			return fmt.Errorf("ensemble: refusing a forwarded entry: %w", err)
		}
		if e.Kind == kindEnsemble {
			// The leader alone decides the level (RaiseLevel, formEnsemble).
			return fmt.Errorf("ensemble: refusing a forwarded entry: a level change")
		}
	}
	if len(data) > 9 && entryKind(data[0]) == kindTxn {
		znode.StampOptions(data[9:], n.optionBits)
	}
	return nil
}

// noteOptions warns, once per distinct value, when the leader's options a
// write applied with are not this member's own.
func (f *fsm) noteOptions(b znode.OptionBits) {
	if b == 0 || b == f.ownOptions || b == f.warnedOptions {
		return
	}
	f.warnedOptions = b
	leader, _ := b.Options()
	f.log.Warn("writes apply with the leader's tree options, which differ from this member's; reads here use this member's",
		zap.Bool("leader.skipACL", leader.SkipACL), zap.Bool("leader.extendedTypes", leader.ExtendedTypes),
		zap.Bool("leader.enforceQuota", leader.EnforceQuota),
		zap.Bool("skipACL", f.opts.SkipACL), zap.Bool("extendedTypes", f.opts.ExtendedTypes),
		zap.Bool("enforceQuota", f.opts.EnforceQuota))
}
