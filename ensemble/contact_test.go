package ensemble

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestContactNotesAMemberGoneAtOnce: a member that answered appends is in
// contact; when its process ends (its transport closes, the kernel closes
// its connections) the leader's transport notes it gone at once, with no
// request under way (the idle pooled connection is read), and signals
// contactLost; a refused dial notes it gone too; an answer to a request
// sent after that brings it back.
func TestContactNotesAMemberGoneAtOnce(t *testing.T) {
	sender, _ := newTestAppendTransport(t, nil)
	receiver, addr := newTestAppendTransport(t, nil)
	go func() {
		for rpc := range receiver.Consumer() {
			rpc.Respond(&raft.AppendEntriesResponse{Term: 7, Success: true}, nil)
		}
	}()
	const window = time.Minute
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(0, 1), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	m := sender.contactOf(addr)
	if !m.inContact(0, sender.now(), window) {
		t.Fatal("a member that answered is not in contact")
	}
	select {
	case <-sender.contactLost:
		t.Fatal("contactLost signalled before the member went")
	default:
	}

	receiver.Close()
	select {
	case <-sender.contactLost:
	case <-time.After(2 * time.Second):
		t.Fatal("the member's closed connection was not noticed")
	}
	if m.inContact(0, sender.now(), window) {
		t.Fatal("a member whose connection closed is still in contact")
	}

	// A member that went (here, one on another port) is back once it
	// answers a request sent after it went.
	back, backAddr := newTestAppendTransport(t, nil)
	go func() {
		for rpc := range back.Consumer() {
			rpc.Respond(&raft.AppendEntriesResponse{Term: 7, Success: true}, nil)
		}
	}()
	mb := sender.contactOf(backAddr)
	mb.closed.Store(sender.now()) // as if it had gone
	if mb.inContact(0, sender.now(), window) {
		t.Fatal("in contact while gone")
	}
	if err := sender.AppendEntries("3", backAddr, sampleAppendRequest(0, 1), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	if !mb.inContact(0, sender.now(), window) {
		t.Fatal("a member that answered again is not in contact")
	}

	// A refused dial (nothing listens on the closed receiver's port).
	m.heard(sender.now(), sender.now())
	for len(sender.contactLost) > 0 {
		<-sender.contactLost
	}
	if err := sender.AppendEntries("2", addr, sampleAppendRequest(0, 1), new(raft.AppendEntriesResponse)); err == nil {
		t.Fatal("append to a closed member succeeded")
	}
	if m.inContact(0, sender.now(), window) {
		t.Fatal("a member that refuses dials is in contact")
	}
	select {
	case <-sender.contactLost:
	default:
		t.Fatal("a refused dial did not signal contactLost")
	}
}

// TestContactWindow: a member is in contact for the window after the
// request it last answered was sent, or after since (the election) if
// that is later, and not if it went after both.
func TestContactWindow(t *testing.T) {
	var m memberContact
	const w = 10 * time.Second
	s := int64(time.Second)
	m.heard(5*s, 6*s)
	if !m.inContact(0, 14*s, w) || m.inContact(0, 15*s+1, w) {
		t.Fatal("window not counted from the request's sending")
	}
	if !m.inContact(20*s, 25*s, w) {
		t.Fatal("a member not heard since the election is not in contact after it")
	}
	m.closed.Store(7 * s)
	if m.inContact(0, 8*s, w) || !m.inContact(20*s, 25*s, w) {
		t.Fatal("gone is not counted after the last answer, or counted after a later election")
	}
	m.heard(8*s, 9*s)
	if !m.inContact(0, 9*s, w) {
		t.Fatal("an answer to a request sent after it went does not bring it back")
	}
}
