package storage

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// faultyStable is an in-memory stable store whose writes fail with EIO
// once failing is set.
type faultyStable struct {
	*raft.InmemStore
	failing atomic.Bool
}

func (s *faultyStable) Set(key, val []byte) error {
	if s.failing.Load() {
		return fmt.Errorf("write %s: %w", key, syscall.EIO)
	}
	return s.InmemStore.Set(key, val)
}

func (s *faultyStable) SetUint64(key []byte, val uint64) error {
	if s.failing.Load() {
		return fmt.Errorf("write %s: %w", key, syscall.EIO)
	}
	return s.InmemStore.SetUint64(key, val)
}

// TestStableStoreFailureStopsInsteadOfPanicking: a member whose stable
// store fails (EIO) when it must save a new term is stopped through its
// fail callback with the cause, and Raft does not panic (a panic in
// Raft's goroutine would kill this test binary).
func TestStableStoreFailureStopsInsteadOfPanicking(t *testing.T) {
	const members = 3
	var (
		rafts   [members]*raft.Raft
		stables [members]*faultyStable
		trans   [members]*raft.InmemTransport
		failed  = make(chan error, members)
	)
	var conf raft.Configuration
	for i := range trans {
		_, trans[i] = raft.NewInmemTransport(raft.ServerAddress(fmt.Sprint(i)))
		conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(fmt.Sprint(i)), Address: trans[i].LocalAddr()})
	}
	for i := range trans {
		for j := range trans {
			if i != j {
				trans[i].Connect(trans[j].LocalAddr(), trans[j])
			}
		}
	}
	for i := range rafts {
		rc := raft.DefaultConfig()
		rc.LocalID = raft.ServerID(fmt.Sprint(i))
		rc.HeartbeatTimeout, rc.ElectionTimeout = 100*time.Millisecond, 100*time.Millisecond
		rc.LeaderLeaseTimeout, rc.CommitTimeout = 50*time.Millisecond, 5*time.Millisecond
		rc.Logger = hclog.NewNullLogger()
		stables[i] = &faultyStable{InmemStore: raft.NewInmemStore()}
		logs, snaps := raft.NewInmemStore(), raft.NewInmemSnapshotStore()
		if err := raft.BootstrapCluster(rc, logs, stables[i], snaps, trans[i], conf); err != nil {
			t.Fatal(err)
		}
		stable := NewFailStopStable(stables[i], func(err error) { failed <- err })
		r, err := raft.NewRaft(rc, &raft.MockFSM{}, logs, stable, snaps, trans[i])
		if err != nil {
			t.Fatal(err)
		}
		rafts[i] = r
	}
	defer func() {
		for _, r := range rafts {
			_ = r.Shutdown().Error()
		}
	}()
	leader := -1
	for deadline := time.Now().Add(10 * time.Second); leader < 0; {
		for i, r := range rafts {
			if r.State() == raft.Leader {
				leader = i
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Every follower's disk fails; the leader goes, and the next term
	// must be saved by whoever campaigns or votes.
	for i := range stables {
		if i != leader {
			stables[i].failing.Store(true)
		}
	}
	if err := rafts[leader].Shutdown().Error(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-failed:
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("fail called with %v, want the EIO", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a failed term write did not stop the member")
	}
}
