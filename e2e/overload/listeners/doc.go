// Package listeners checks, against a zkraft process started under a low
// open file limit (1024), that no listener can be exhausted or make the
// process exit (issue #37): more connections than the file limit are
// opened on the AdminServer, metrics, member and client ports, each
// declaring a request body it never sends (or sending nothing); the
// process must stay up, a ZooKeeper client must still connect and write
// during and after the flood, the flood's connections must be dropped by
// the timeouts, and mntr must count the refused ones in
// zk_connection_rejected.
//
// The package has no code of its own: everything is in its tests. It is
// Linux-only (a second loopback address, 127.0.0.2, and Pdeathsig).
package listeners
