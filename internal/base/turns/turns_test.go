package turns

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestTakeWaitsThenRefuses: with every turn held a Take waits for one,
// gets it when one is given back, and is refused after its wait or when
// its context ends.
func TestTakeWaitsThenRefuses(t *testing.T) {
	tu := New(2)
	for range 2 {
		if err := tu.Take(context.Background(), time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := tu.Take(context.Background(), 20*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("all taken: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tu.Take(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("context ended: %v", err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		tu.Done()
	}()
	if err := tu.Take(context.Background(), time.Minute); err != nil {
		t.Fatalf("a turn given back: %v", err)
	}
	if n := tu.Taken(); n != 2 {
		t.Fatalf("taken %d", n)
	}
	tu.Done()
	tu.Done()
	if n := tu.Taken(); n != 0 {
		t.Fatalf("taken %d after all were given back", n)
	}
}
