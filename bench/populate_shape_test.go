package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/bench/treeshape"
)

// TestPopulateRealistic creates a bench/treeshape tree against zkraft:
// exactly --nodes znodes under <root>/tree, the widest directory among
// them, which getAllChildrenNumber counts (a missing parent would fail
// its children's creates).
func TestPopulateRealistic(t *testing.T) {
	addr := startZkraft(t)
	cfg := Config{
		Servers: []string{addr}, Workload: "populate", Sessions: 4, Inflight: 32, ValueSize: 100,
		Keys: 1, Duration: time.Second, Watchers: 1, Nodes: 3000, Shape: "realistic",
		SessionTimeout: 10 * time.Second, Root: "/zkraft-bench-shape", Keep: true, Seed: 1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logs bytes.Buffer
	res, err := Run(ctx, cfg, nil, &logs)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	if len(res.Problems) > 0 || !strings.Contains(fmt.Sprint(res.Notes), "holds 3000 znodes") {
		t.Errorf("notes %v, problems %v", res.Notes, res.Problems)
	}
	s, _ := treeshape.New(cfg.Root+"/tree", cfg.Nodes, 1)
	if !strings.Contains(fmt.Sprint(res.Notes), fmt.Sprintf("(%d directories + %d leaves created)", len(s.Dirs()), s.Leaves())) {
		t.Errorf("notes %v, want %d directories and %d leaves", res.Notes, len(s.Dirs()), s.Leaves())
	}
}
