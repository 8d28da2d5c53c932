// Package packaging holds the tests of what zkraft ships (packaging/,
// make release and make deb): the release binaries are static, stamped
// and checksummed; the .deb installs, runs from its installed files as its
// own user and is removed cleanly. The package test needs root and dpkg:
// without them it is skipped with the reason, and fails under CI=true.
//
// The package has no code of its own: everything is in its tests.
package packaging
