package session

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/znode"
)

// closingRevalidator closes the session a client resumes while the
// handshake is between its check of the tree and bind, as an expiry
// applied at that moment does: its leader says yes, and the close is
// applied here before the connection is bound.
type closingRevalidator struct {
	*ensemble.Node
	t *testing.T
}

func (r *closingRevalidator) Revalidate(id int64, _ int32) (bool, error) {
	if _, err := r.ProposeWait(&znode.Txn{Type: jute.OpCloseSession, Session: id, Time: time.Now().UnixMilli()}); err != nil {
		r.t.Errorf("closing the session: %v", err)
	}
	return true, nil
}

func (r *closingRevalidator) SessionPasswd(int64) []byte { return nil }

// TestResumeOfASessionClosedMeanwhileExpires: a session closed after a
// resuming handshake found it in the tree, and before the connection was
// bound, is expired to its client. The close's hook found no connection
// to drop; the connection served the dead session, answering its pings,
// so a client holding a lock through an ephemeral never learned that the
// ephemeral was gone.
func TestResumeOfASessionClosedMeanwhileExpires(t *testing.T) {
	be := &closingRevalidator{Node: standaloneNode(t), t: t}
	_, addr := serveOn(t, be)

	first := rawclient.Dial(t, addr)
	resp := first.ConnectFor(10000)
	if resp.SessionID == 0 {
		t.Fatalf("no session: %+v", resp)
	}
	first.Conn.Close()

	c := rawclient.Dial(t, addr)
	defer c.Conn.Close()
	c.Send(&jute.ConnectRequest{TimeOut: 10000, SessionID: resp.SessionID, Passwd: resp.Passwd})
	var again jute.ConnectResponse
	if err := jute.Unmarshal(c.Frame(), &again); err != nil {
		t.Fatal(err)
	}
	if again.SessionID != 0 || again.TimeOut != 0 {
		t.Fatalf("resumed a closed session: %+v", again)
	}
	c.ExpectClosed()
}
