package znode

import "github.com/zkraft/zkraft/jute"

// createSession adds txn.Session to the session table. An id already in the
// table is refused with NodeExists (the proposer should pick another id).
func (a *applier) createSession() error {
	id := a.txn.Session
	if a.t.sessions[id] != nil {
		return jute.ErrNodeExists
	}
	passwd := make([]byte, len(a.txn.Passwd))
	copy(passwd, a.txn.Passwd)
	a.t.sessions[id] = &session{info: SessionInfo{ID: id, Timeout: a.txn.Timeout, Passwd: passwd}}
	return nil
}

// closeSession deletes the session's ephemerals in sorted path order, each
// firing NodeDeleted and NodeChildrenChanged, then drops the session. An
// unknown session is a no-op, as in ZooKeeper.
func (a *applier) closeSession() {
	s := a.t.sessions[a.txn.Session]
	if s == nil {
		return
	}
	for _, path := range s.sessionPaths() {
		parentPath, name, _ := splitPath(path)
		parent := a.t.lookup(parentPath)
		if parent == nil {
			continue
		}
		n := parent.child(name)
		if n == nil {
			continue
		}
		a.deleteNode(path, parentPath, name, parent, n)
	}
	delete(a.t.sessions, a.txn.Session)
}
