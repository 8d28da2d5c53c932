package ensemble

import "github.com/hashicorp/raft"

// await waits for f, or until the member closes (ErrClosed). hashicorp/raft
// leaves some futures unanswered when it shuts down (those still in its
// buffered apply queue, BatchApplyCh), so a goroutine Close waits for must
// never wait on one alone. It costs a goroutine (left behind if Raft never
// answers): for waits off the request path only.
func (n *Node) await(f raft.Future) error {
	ch := make(chan error, 1)
	go func() { ch <- f.Error() }()
	select {
	case err := <-ch:
		return err
	case <-n.done:
		return ErrClosed
	}
}
