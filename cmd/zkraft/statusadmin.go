package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// adminFacts are what zkraft status reads from a member's AdminServer:
// ZooKeeper's mntr has neither the leader a member knows nor its epoch
// (zkraft's Raft term), and zkraft keeps its mntr ZooKeeper's.
type adminFacts struct {
	leaderID int64  // -1 if unknown
	term     uint64 // 0 if unknown
}

// askAdmin reads the leader and zabstate commands of the AdminServer at
// addr (host:port or a URL up to the command prefix, e.g.
// http://host:8080/commands) within timeout.
func askAdmin(addr string, timeout time.Duration) (adminFacts, error) {
	facts := adminFacts{leaderID: -1}
	base := adminURL(addr)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var leader struct {
		LeaderID *int64 `json:"leader_id"`
	}
	if err := getAdmin(ctx, base+"/leader", &leader); err != nil {
		return facts, err
	}
	if leader.LeaderID != nil {
		facts.leaderID = *leader.LeaderID
	}
	var zab struct {
		Epoch uint64 `json:"zab_epoch"`
	}
	if err := getAdmin(ctx, base+"/zabstate", &zab); err != nil {
		return facts, err
	}
	facts.term = zab.Epoch
	return facts, nil
}

func getAdmin(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("admin %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("admin %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("admin %s: %w", url, err)
	}
	return nil
}
