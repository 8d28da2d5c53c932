package netguard

import "testing"

// TestPlan: the listeners' caps and the reserve never exceed the limit,
// every share is at least 1, and the shares are those documented.
func TestPlan(t *testing.T) {
	for _, limit := range []uint64{0, 64, 100, 256, 1024, 4096, 20000, 65536, 524287, 1 << 40} {
		p := NewPlan(limit)
		sum := p.Reserve + p.Client.MaxConns + p.Member.MaxConns + p.Admin.MaxConns + p.Metrics.MaxConns + p.Pprof.MaxConns
		if sum > p.Limit {
			t.Errorf("limit %d: reserve and caps sum to %d > %d: %+v", limit, sum, p.Limit, p)
		}
		for name, l := range map[string]Limits{"client": p.Client, "member": p.Member, "admin": p.Admin, "metrics": p.Metrics, "pprof": p.Pprof} {
			if l.MaxConns < 1 || l.MaxConnsPerIP > l.MaxConns {
				t.Errorf("limit %d: %s %+v", limit, name, l)
			}
		}
	}
	p := NewPlan(1024)
	want := Plan{Limit: 1024, Reserve: 256,
		Client: Limits{MaxConns: 576}, Member: Limits{MaxConns: 96, MaxConnsPerIP: 64},
		Admin: Limits{MaxConns: 48, MaxConnsPerIP: 48}, Metrics: Limits{MaxConns: 24, MaxConnsPerIP: 16},
		Pprof: Limits{MaxConns: 24, MaxConnsPerIP: 8}}
	if p != want {
		t.Errorf("NewPlan(1024) = %+v, want %+v", p, want)
	}
	if p := NewPlan(0); p.Limit != PlanCeiling || p.Reserve != 8192 || p.Member.MaxConns != 1024 || p.Admin.MaxConns != 256 {
		t.Errorf("NewPlan(unlimited) = %+v", p)
	}
}

// TestRaiseFileLimit: the soft limit ends at (or one below) the hard
// limit and never lower than it was.
func TestRaiseFileLimit(t *testing.T) {
	soft, hard, was, err := RaiseFileLimit()
	if err != nil {
		t.Skipf("no file limit here: %v", err)
	}
	if soft < was || (hard > 0 && soft+1 < hard) {
		t.Errorf("soft %d, hard %d, was %d", soft, hard, was)
	}
}
