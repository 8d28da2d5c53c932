// Package packaging holds the tests of what zkraft ships (packaging/,
// make release, make deb and make image): the release binaries are
// static, stamped and checksummed; the .deb installs, runs from its
// installed files as its own user and is removed cleanly; the FROM
// scratch image runs the compose file's three-member ensemble. They need
// root and dpkg, or a Docker engine and docker-compose: without them they
// are skipped with the reason, and fail under CI=true.
//
// The package has no code of its own: everything is in its tests.
package packaging
