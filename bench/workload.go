package bench

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/zkraft/zkraft/jute"
)

// newWorkload returns the workload named by cfg.Workload.
func newWorkload(cfg *Config) (workload, error) {
	switch cfg.Workload {
	case "read":
		return &kvWorkload{readRatio: 1}, nil
	case "write":
		return &kvWorkload{readRatio: 0}, nil
	case "mixed":
		return &kvWorkload{readRatio: cfg.ReadRatio}, nil
	case "create-delete":
		return &createDeleteWorkload{}, nil
	case "ephemeral-churn":
		return &churnWorkload{}, nil
	case "watch-fanout":
		return &fanoutWorkload{}, nil
	case "populate":
		return &populateWorkload{}, nil
	case "idle-sessions":
		return &idleWorkload{}, nil
	}
	return nil, fmt.Errorf("bench: unknown workload %q", cfg.Workload)
}

// countdown is a reply handler that closes ch once n replies have arrived,
// counting those with an unexpected code in bad.
type countdown struct {
	left atomic.Int64
	ch   chan struct{}
	bad  tally
}

func newCountdown(n int) *countdown {
	c := &countdown{ch: make(chan struct{})}
	c.left.Store(int64(n))
	if n == 0 {
		close(c.ch)
	}
	return c
}

func (c *countdown) handleReply(p *pendingOp, err jute.ErrCode, body []byte) {
	c.bad.handleReply(p, err, body)
	if c.left.Add(-1) == 0 {
		close(c.ch)
	}
}

// wait blocks until every reply arrived or ctx ends.
func (c *countdown) wait(ctx context.Context) error {
	select {
	case <-c.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
