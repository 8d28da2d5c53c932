package backend

import "time"

// LevelStatus is an ensemble's level and identity as a member reports
// them (zkraft upgrade status; ensemble/level.go has the rules).
type LevelStatus struct {
	// EnsembleID is the ensemble's id, "-" before it has one.
	EnsembleID string
	// Level is the ensemble's level: what every member must be able to read.
	Level int
	// BuildLevel is the highest level the reporting member's build runs.
	BuildLevel int
	// Leader is whether the reporting member leads.
	Leader bool
	// Members are the other members' build levels, as asked just now
	// (UpgradeStatus and RaiseLevel only).
	Members []MemberBuild
}

// MemberBuild is one member's build level, or why it could not be asked.
type MemberBuild struct {
	ServerID   uint64
	Addr       string
	BuildLevel int // 0 when Err is set
	Err        string
}

// Leveled is an optional Member method set: an ensemble member whose
// ensemble has a level (*ensemble.Node).
type Leveled interface {
	// UpgradeStatus reports the level and asks every other member for its
	// build level, each within timeout.
	UpgradeStatus(timeout time.Duration) LevelStatus
	// RaiseLevel raises the ensemble to this build's level once every
	// member runs a build that can (zkraft upgrade finish); on the leader
	// only.
	RaiseLevel(timeout time.Duration) (LevelStatus, error)
}
