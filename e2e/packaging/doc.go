// Package packaging holds the tests of what zkraft ships: make release's
// binaries are static, stamped and checksummed.
//
// The package has no code of its own: everything is in its tests.
package packaging
