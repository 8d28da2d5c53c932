// Package shell is "zkraft shell", a drop-in replacement for ZooKeeper's
// zkCli.sh, mounted by the zkraft binary through Command.
//
//	zkraft shell -server host:port[,host:port...] [-timeout 30s] [command args...]
//
// Both -server and --server spellings work (urfave/cli parses Go-style
// flags); -timeout takes a duration or, as zkCli's, milliseconds. With a
// command, the shell runs it and exits with zkCli's status: 0 success, 1
// failure, 127 unknown command. Without one it reads commands from --file
// or stdin. When stdin is not a terminal that is one command per line and
// no prompt, exactly as zkCli does when it runs without JLine. On a terminal
// it offers:
//   - line editing (github.com/peterh/liner) with history persisted in
//     ~/.zkraft_history (--history-file to change it);
//   - tab completion of command names and of znode paths (children are
//     asked from the server);
//   - zkCli's prompt, "[zk: host:port(CONNECTED) 3] ", showing the connection
//     state, reprinted after asynchronous output;
//   - connection loss, reconnection and session expiry announced in plain
//     words on stderr besides zkCli's WATCHER:: events. An expired or
//     auth-failed session ends as in zkCli, until connect.
//
// # Compatibility
//
// Every zkCli 3.9 command is implemented with zkCli's option parsing (the
// commons-cli rules: options anywhere, "-v5", "--"), its messages ("Node does
// not exist: /a", "Created /a" on stderr, usage strings, commons-cli
// exception texts), its output formats (StatPrinter with Java's
// Date.toString in the local zone, Jute's CSV rendering of ACL ids,
// "WATCHER::" / "WatchedEvent state:... type:... path:... zxid: N"
// notifications, Netty's hex dump for get -x) and its quirks (history
// numbering, "Not connected" after close, deprecated "get path watch" forms,
// ls -R's order). The golden transcripts in testdata/shell are checked
// against Apache's zkCli at test time.
//
// Known differences, all deliberate or forced:
//   - The version command names zkraft; events always carry 3.9's " zxid: N"
//     suffix (3.8's zkCli prints none).
//   - The initial SyncConnected event is always printed before the first
//     command's output (zkCli prints it from another thread, so its position
//     varies); likewise notifications always precede the output of the
//     command that triggered them.
//   - -r (read-only sessions) is accepted but ignored: go-zookeeper cannot
//     ask for one.
//   - addauth waits for the server's verdict, so after a rejected
//     credential the next command prints "Not connected" where zkCli, which
//     sends it before the rejection arrives, may print an AuthFailed error.
//   - zkCli's addWatch remembers the -m mode of an earlier call (its command
//     objects are shared); this shell does not.
//   - Local watch-removal events for removewatches on a path holding both
//     data and child watches are printed data first; zkCli's order depends on
//     a hash map.
//
// -client-configuration reads zkCli's client properties file: with
// zookeeper.client.secure=true the shell connects over TLS, presenting the
// zookeeper.ssl.keyStore.* certificate and checking the server against
// zookeeper.ssl.trustStore.* (PKCS12, JKS or PEM), its host name too
// unless zookeeper.ssl.hostnameVerification=false. SASL keys have no
// effect: go-zookeeper does not speak SASL.
//
// A chroot in the connect string ("host:port/app") is applied by the shell
// (chroot.go) as the Java client does, including its quirk that
// getEphemerals ignores the chroot.
//
// # Scripts
//
// script.go adds what scripts need and zkCli lacks. -o json makes stdout
// carry JSON alone, one document a line: the banner, WATCHER:: events,
// "Not connected" and the text of commands without a JSON form go to
// stderr, and create, set -s, sync, version and reconfig print JSON too.
// --quiet drops the banner and the connection-state events. --auth
// scheme:credential (and $ZKRAFT_AUTH) adds credentials to every session
// before the first command. --stop-on-error ends a script at the first
// failing command, "Not connected" included, with that command's status.
//
// Beyond zkCli: --output json (or -o json for the whole session) on get, ls,
// stat, getAcl, config, getEphemerals, getAllChildrenNumber, whoami and
// tree; "tree [-d depth] path" draws a subtree; binary data printed to a
// terminal has its control characters escaped as \xNN.
//
// # Operations go-zookeeper lacks
//
// The shell is built on github.com/go-zookeeper/zk v1.0.4, which has no
// addWatch, whoAmI, getEphemerals, getAllChildrenNumber, removeWatches or
// SetWatches2, and whose Reconfig does not return the new configuration.
// These must run on go-zookeeper's own session (ephemerals, identities and
// watches are per session), so a second connection cannot carry them.
// Instead the shell installs a dialer (zk.WithDialer) that wraps each TCP
// connection in a tap (tap.go): the tap writes its own request frames between
// go-zookeeper's, with xids from a private range, and removes the replies to
// those xids from the byte stream before go-zookeeper reads it. The tap also
// sees every notification first, which is how persistent-watch events (which
// go-zookeeper would drop) are printed, and after a reconnect it re-arms
// persistent watches by upgrading go-zookeeper's SetWatches to a SetWatches2.
// Request and response records come from the project's jute package.
package shell
