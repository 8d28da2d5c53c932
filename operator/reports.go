package operator

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zkraft/zkraft/internal/base/turns"
	"github.com/zkraft/zkraft/session"
)

// Large reports take turns. The answers of these commands grow with the
// server's tables (every connection, every session's ephemerals, every
// watch): at a million watches one /commands/watches is 12 MB of JSON
// built from ~100 MB of maps in about a second of a core. The AdminServer
// needs no whitelist and takes up to 64 connections from one address, so
// 64 at once held 2 GB and both cores (a write meanwhile waited 1.4 s);
// four addresses would have held the machine's memory. Each server makes
// one such report at a time; a request waits up to reportWait for its
// turn, then is refused as busy (503 on the AdminServer), and memory and
// CPU stay those of one report.
var (
	// heavyAdmin are the AdminServer's large reports, by primary name.
	heavyAdmin = map[string]bool{
		"connections": true, "stats": true, "dump": true,
		"watch_summary": true, "watches": true, "watches_by_path": true,
	}
	// heavyWords are the four-letter words that answer them.
	heavyWords = map[string]bool{"cons": true, "stat": true, "dump": true, "wchs": true, "wchc": true, "wchp": true}
)

// reportWait is how long a large report waits for its server's turn.
var reportWait = 10 * time.Second

// errReportBusy is a large report refused after reportWait.
var errReportBusy = errors.New("another large report is being made on this server; try again")

// reportTurns holds each server's one turn, made at its first large
// report.
var reportTurns sync.Map // *session.Server → *turns.Turns

// takeReportTurn waits for srv's turn to make a large report, up to
// reportWait or until ctx ends, and returns the function that ends it.
func takeReportTurn(ctx context.Context, srv *session.Server) (func(), error) {
	v, ok := reportTurns.Load(srv)
	if !ok {
		v, _ = reportTurns.LoadOrStore(srv, turns.New(1))
	}
	tu := v.(*turns.Turns)
	if err := tu.Take(ctx, reportWait); err != nil {
		if errors.Is(err, turns.ErrBusy) {
			return nil, errReportBusy
		}
		return nil, err
	}
	return tu.Done, nil
}
