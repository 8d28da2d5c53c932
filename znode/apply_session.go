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
// unknown session is a no-op, as in ZooKeeper. Each path is looked up
// again and deleted only if it is still this session's ephemeral: an
// index entry naming anything else (a bug) must never delete a node that
// no check has cleared.
func (a *applier) closeSession() error {
	s := a.t.sessions[a.txn.Session]
	if s == nil {
		return nil
	}
	for _, path := range s.sessionPaths() {
		n := a.t.lookup(path)
		if n == nil || n.kind() != kindEphemeral || n.owner != a.txn.Session {
			continue
		}
		parentPath, name, _ := splitPath(path)
		parent := a.t.lookup(parentPath)
		if parent == nil || parent.child(name) != n {
			continue
		}
		if err := a.deleteNode(path, parentPath, name, parent, n); err != nil {
			return err
		}
	}
	delete(a.t.sessions, a.txn.Session)
	return nil
}
