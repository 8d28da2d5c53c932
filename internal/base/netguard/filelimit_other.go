//go:build !unix

package netguard

// RaiseFileLimit reports no limit where there is no RLIMIT_NOFILE: Plan
// then keeps to its defaults for an unlimited process.
func RaiseFileLimit() (soft, hard, was uint64, err error) { return 0, 0, 0, nil }
