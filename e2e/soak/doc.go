// Package soak holds zkraft's soak test: five members, each in a Docker
// container of its own on a private network, under kill -9, SIGSTOP,
// docker pause, network partitions and, on one designated member, a full
// disk and EIO, while go-zookeeper clients read and write; the history is
// then checked for linearizability and lost acknowledged writes, and the
// five members' trees are compared. See soak_test.go for what runs and
// what is checked; `make soak SOAK_DURATION=30m` runs it long, `make test`
// runs it short.
//
// The package has no code of its own: everything is in its tests, and
// holder/ is the tiny program that keeps each member's network namespace.
package soak
