package bench

import (
	"context"
	"fmt"
	"time"
)

// TableConfig is the connection table: Sessions idle sessions spread over
// the members, pinging and nothing else, while the caller measures what
// the members hold for them.
type TableConfig struct {
	LoadOptions
	Sessions int
	// Hold is called once every session is open; the sessions stay open
	// until it returns.
	Hold func() error
}

// TableResult is the connection table's client side.
type TableResult struct {
	Sessions int
	Connect  time.Duration // opening every session
	Lost     int           // sessions gone when Hold returned
}

// RunTable opens the idle sessions, calls cfg.Hold, checks every session
// still answers and closes them.
func RunTable(ctx context.Context, cfg TableConfig) (*TableResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.Sessions < 1 {
		return nil, fmt.Errorf("bench: a table of %d sessions", cfg.Sessions)
	}
	f, err := startFleet(&cfg.LoadOptions, cfg.Sessions)
	if err != nil {
		return nil, err
	}
	defer f.close()
	res := &TableResult{Sessions: cfg.Sessions}
	cfg.logf("table: opening %d idle sessions in %d workers", cfg.Sessions, len(f.workers))
	if res.Connect, err = f.open(ctx, &cfg.LoadOptions, openSpec{}); err != nil {
		return nil, err
	}
	cfg.logf("table: %d sessions open in %v", cfg.Sessions, res.Connect.Round(time.Millisecond))
	if cfg.Hold != nil {
		if err := cfg.Hold(); err != nil {
			return nil, err
		}
	}
	st, err := f.status(ctx, "check")
	if err != nil {
		return nil, err
	}
	res.Lost = cfg.Sessions - st.Live
	return res, f.closeSessions(ctx)
}
