package console

import (
	"crypto/sha256"
	"net/netip"
	"sync"
	"time"
)

// Failed logins are throttled per client address and per user name. A
// failed login is one whose digest identity the ensemble does not know
// (Config.KnownUser): a guessed password. Each key gets freeFailures
// failures without delay; after that each failure makes it wait before its
// next attempt, twice as long each time from failureDelay up to
// maxFailureDelay. Failures are forgiven one per maxFailureDelay, so a key
// left alone is soon free again, and a guesser that keeps going gets about
// one guess per maxFailureDelay per key. An attempt during a wait is
// answered 429 with Retry-After and costs nothing: it is not checked and
// not counted. Anonymous logins are never throttled (they guess nothing).
//
// Both tables are bounded (maxThrottled keys each): a guesser rotating
// names or addresses evicts the entries with the fewest failures among a
// random sample, not those of the user or address it is hammering.
const (
	freeFailures    = 5
	failureDelay    = time.Second
	maxFailureDelay = 5 * time.Minute
	maxThrottled    = 4096
	evictSample     = 8
)

// loginThrottle is the two tables of failed logins.
type loginThrottle struct {
	byAddr, byUser *failureTable
}

func newLoginThrottle() *loginThrottle {
	return &loginThrottle{byAddr: newFailureTable(), byUser: newFailureTable()}
}

// wait is how long a login as user from addr must wait, 0 if it may try.
func (t *loginThrottle) wait(addr, user string, now time.Time) time.Duration {
	return max(t.byAddr.wait(addrKey(addr), now), t.byUser.wait(userKey(user), now))
}

// failed counts a failed login as user from addr.
func (t *loginThrottle) failed(addr, user string, now time.Time) {
	t.byAddr.fail(addrKey(addr), now)
	t.byUser.fail(userKey(user), now)
}

// succeeded forgets user's failures: its password was given. The
// address's stay (it may be guessing other users).
func (t *loginThrottle) succeeded(user string) { t.byUser.forget(userKey(user)) }

// addrKey is the throttle's key for a client address: the address, or
// for IPv6 its /64 (one host usually holds a whole /64).
func addrKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return "?" + addr
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// userKey is the throttle's key for a user name: a hash, so a long name
// costs the table no more than a short one.
func userKey(user string) string {
	h := sha256.Sum256([]byte(user))
	return string(h[:16])
}

// failureTable counts failures per key.
type failureTable struct {
	mu      sync.Mutex
	entries map[string]*failures
}

// failures is one key's record.
type failures struct {
	n     float64   // failures not yet forgiven, as of at
	at    time.Time // the last failure
	until time.Time // no attempt before this
}

func newFailureTable() *failureTable { return &failureTable{entries: make(map[string]*failures)} }

// count is f's failures not yet forgiven at now.
func (f *failures) count(now time.Time) float64 {
	return max(0, f.n-float64(now.Sub(f.at))/float64(maxFailureDelay))
}

// wait is how long key must wait at now.
func (t *failureTable) wait(key string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.entries[key]; f != nil && now.Before(f.until) {
		return f.until.Sub(now)
	}
	return 0
}

// fail counts a failure of key at now and sets its next wait.
func (t *failureTable) fail(key string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.entries[key]
	if f == nil {
		if len(t.entries) >= maxThrottled {
			t.evictLocked(now)
		}
		f = &failures{}
		t.entries[key] = f
	}
	f.n = f.count(now) + 1
	f.at = now
	if over := int(f.n+0.5) - freeFailures; over > 0 {
		f.until = now.Add(delayAfter(over))
	}
}

// delayAfter is the wait after the over-th failure beyond the free ones.
func delayAfter(over int) time.Duration {
	if over > 20 {
		return maxFailureDelay
	}
	return min(failureDelay<<(over-1), maxFailureDelay)
}

// forget drops key's record.
func (t *failureTable) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.entries, key)
}

// evictLocked makes room for one entry: of a few entries taken at random
// (map order), the one with the fewest failures goes.
func (t *failureTable) evictLocked(now time.Time) {
	var victim string
	least, seen := 0.0, 0
	for k, f := range t.entries {
		if n := f.count(now); seen == 0 || n < least {
			victim, least = k, n
		}
		if seen++; seen == evictSample {
			break
		}
	}
	delete(t.entries, victim)
}

// sweep drops the records with nothing left to remember.
func (t *failureTable) sweep(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, f := range t.entries {
		if f.count(now) == 0 && !now.Before(f.until) {
			delete(t.entries, k)
		}
	}
}

// sweep drops both tables' forgotten records.
func (t *loginThrottle) sweep(now time.Time) {
	t.byAddr.sweep(now)
	t.byUser.sweep(now)
}
