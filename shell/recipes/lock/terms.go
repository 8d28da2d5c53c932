package lock

// Terms are the words Run's messages use for what it acquires, so that a
// recipe built on the lock (zkraft elect's election) speaks of its own.
type Terms struct {
	Path    string // what the path is: "lock path"
	Node    string // what a contender's node is: "lock node"
	NotWon  string // "%s not acquired within %s" (the path, the timeout)
	LostNow string // the loss once held: "lock lost"
}

// LockTerms are zkraft lock's words, the default.
var LockTerms = Terms{Path: "lock path", Node: "lock node", NotWon: "%s not acquired within %s", LostNow: "lock lost"}

// orDefault is t, or LockTerms when t is unset.
func (t Terms) orDefault() Terms {
	if t == (Terms{}) {
		return LockTerms
	}
	return t
}
