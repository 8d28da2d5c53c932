package ensemble

import (
	"time"

	"go.uber.org/zap"
)

// ensemble returns the ensemble's state as the log set it.
func (f *fsm) ensemble() ensembleState {
	if s := f.ens.Load(); s != nil {
		return *s
	}
	return ensembleState{}
}

// applyEnsemble applies a kindEnsemble entry (checked by applyLocked).
func (f *fsm) applyEnsemble(e entry, index uint64) {
	was := f.ensemble()
	now := was.raise(e.Level, e.ID, e.Minted)
	f.ens.Store(&now)
	if now == was {
		return
	}
	f.log.Info("ensemble level and id set by the log", zap.Uint8("level", now.Level), zap.Uint8("was", was.level()),
		zap.Stringer("ensembleID", now.ID), zap.Time("minted", time.Unix(0, now.Minted)), zap.Uint64("index", index))
}
