// Package operator holds zkraft's operator surfaces: the four-letter words
// answered on the client port (ruok, srvr, mntr, cons, dump, ...), the
// AdminServer's HTTP commands (ZooKeeper 3.8's /commands, and 3.9's
// snapshot) and the figures the metrics endpoint exports (mntr's).
//
// It reads a session.Server only through its exported, read-only view
// (Stats, Connections, Mode, Node, Config, ...) and its two resets
// (ResetStats, ResetConnectionStats); session never imports it. The
// four-letter words arrive on the client port, so session detects them on
// a connection's first frame and hands them to the session.FourLetterHandler
// in its Config, which is FourLetter here. The audit log is on the write
// path and lives in backend/audit, which session calls directly.
//
// Every output keeps ZooKeeper's layout byte for byte: tools (zkServer.sh,
// zktop, exporters, the AdminServer's scripts) parse it.
package operator
