package main

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/zookeeper/learner"
)

// TestFollowFailsOnAChangeNotApplied: migrate follow exits non-zero when a
// change ZooKeeper committed was not applied, as when a digest differed.
func TestFollowFailsOnAChangeNotApplied(t *testing.T) {
	if err := followOutcome(learner.Status{Applied: 5, DigestsChecked: 5}); err != nil {
		t.Errorf("a clean follow: %v", err)
	}
	if err := followOutcome(learner.Status{Applied: 5, DigestsChecked: 5, DigestMismatches: 1}); err == nil || !strings.Contains(err.Error(), "digests differed") {
		t.Errorf("a follow with a digest that differed: %v", err)
	}
	if err := followOutcome(learner.Status{Applied: 5, NotApplied: 1}); err == nil || !strings.Contains(err.Error(), "1 changes ZooKeeper committed were not applied") {
		t.Errorf("a follow with a change not applied: %v", err)
	}
}
