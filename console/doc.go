// Package console is zkraft's web console: a page served by the server
// itself for browsing, editing and watching the tree and for looking at the
// ensemble, so an operator need not install ZooNavigator or zkui beside it.
//
// # Security model
//
// The console has no access to the tree of its own. Each person who logs in
// gets a ZooKeeper session of their own, opened with go-zookeeper over the
// connection Config.Dial gives (cmd/zkraft: an in-process connection to the
// member's session server, which takes none of the client port's
// connection places and carries the browser's address as its ip identity),
// with their digest credentials added as a client's addauth would: every
// read and write goes through the same session path, the same ACL checks
// and the same audit log as any client's. A node whose ACL refuses that
// identity is refused to the page.
//
//   - The browser holds only an opaque random token in an HttpOnly,
//     SameSite=Strict cookie (Secure over TLS); the token maps to the
//     ZooKeeper session on the server. Passwords never reach a page, a URL or
//     a log line; the console keeps them in memory only, as go-zookeeper must
//     to re-authenticate after a reconnect and as the live view needs to open
//     its watch session.
//   - Every request that changes something (login and logout included) must
//     be a JSON POST; every one but login must also carry the session's CSRF
//     token in the X-CSRF-Token header, and one whose Origin names another
//     host is refused.
//   - The console is off unless enabled and read-only unless writes are
//     enabled (Config.Writable).
//
// ZooKeeper's digest scheme takes any password: a wrong one is a different
// identity. The console refuses, as a failed login, an identity the
// ensemble does not know (Config.KnownUser: not the super user's, named by
// no ACL), before any session is opened, so a guess costs no replicated
// write; failed logins are throttled per address and per user
// (throttle.go). Anonymous logins (world:anyone) are always allowed, within
// their share of the login bound.
//
// A login ends when its browser goes away: the page sends a heartbeat every
// third of Config.HeartbeatTimeout, a live stream holds the login while it
// is open, and a login silent for the timeout is ended with its sessions.
//
// # Live updates
//
// The page opens a server-sent event stream for the subtree it shows. The
// console opens a second ZooKeeper session for it with the same credentials
// (package internal/zookeeper/watchconn, shared with zkraft watch, since
// go-zookeeper v1.0.4 has no addWatch) and sets one persistent recursive
// watch, whose notifications the server filters by READ permission as for
// any client.
//
// # Subtree jobs
//
// Copy, move, import and recursive delete of a subtree run as background
// jobs of the login (jobs.go, subtreerun.go) on its own ZooKeeper session:
// surveyed and confirmed first (a fingerprint of the subtree travels with
// the job, which refuses if the subtree changed), one multi when small, in
// batches otherwise, walking one directory listing per level (walk.go) so
// memory does not grow with the subtree. A login runs one at a time and
// its jobs end with it.
package console
