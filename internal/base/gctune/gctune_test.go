package gctune

import "testing"

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, MaxPercent},
		{4 << 20, MaxPercent},
		{16 << 20, 800},
		{32 << 20, 400},
		{64 << 20, 200},
		{Headroom, 100},
		{256 << 20, 50},
		{400 << 20, 32},
		{512 << 20, 25},
		{4 << 30, MinPercent},
	} {
		if got := Percent(c.live); got != c.want {
			t.Errorf("Percent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

func TestEnabledRespectsOperator(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	if !Enabled() {
		t.Fatal("not enabled with neither GOGC nor GOMEMLIMIT set")
	}
	t.Setenv("GOGC", "200")
	if Enabled() {
		t.Fatal("enabled although GOGC is set")
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if Enabled() {
		t.Fatal("enabled although GOMEMLIMIT is set")
	}
}
