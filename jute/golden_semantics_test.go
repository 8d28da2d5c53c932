package jute

import (
	"fmt"
	"reflect"
	"testing"
)

// goldenRecord returns the decoded header and body of one golden frame.
func goldenRecord(t *testing.T, name string) (Record, Record) {
	t.Helper()
	for _, g := range loadGolden(t) {
		if g.name == name {
			return decodeGolden(t, g)
		}
	}
	t.Fatalf("no golden frame %s", name)
	return nil, nil
}

// TestGoldenSemantics pins down wire facts the captures show, which the
// server must reproduce.
func TestGoldenSemantics(t *testing.T) {
	t.Run("readOnly byte mirrored", func(t *testing.T) {
		for _, c := range []struct {
			client string
			has    bool
		}{{"go", false}, {"java", true}} {
			_, req := goldenRecord(t, c.client+"/req-connect")
			_, resp := goldenRecord(t, c.client+"/resp-connect")
			if req.(*ConnectRequest).HasReadOnly != c.has || resp.(*ConnectResponse).HasReadOnly != c.has {
				t.Errorf("%s: readOnly byte in request %v, response %v; want %v", c.client,
					req.(*ConnectRequest).HasReadOnly, resp.(*ConnectResponse).HasReadOnly, c.has)
			}
			if n := len(resp.(*ConnectResponse).Passwd); n != 16 {
				t.Errorf("%s: password of %d bytes", c.client, n)
			}
		}
	})
	t.Run("failed multi", func(t *testing.T) {
		for name, want := range map[string][]ErrCode{
			"java/resp-multi-multi-fail": {OK, ErrBadVersion, ErrRuntimeInconsistency},
			"go/resp-multi-multi-fail":   {OK, ErrNoNode, ErrRuntimeInconsistency},
		} {
			h, body := goldenRecord(t, name)
			if h.(*ReplyHeader).Err != OK {
				t.Errorf("%s: reply header err %d, want 0", name, h.(*ReplyHeader).Err)
			}
			var got []ErrCode
			for _, r := range body.(*MultiResponse).Results {
				if r.Type != OpError {
					t.Errorf("%s: result type %d, want -1", name, r.Type)
				}
				got = append(got, r.Err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: errors %v, want %v", name, got, want)
			}
		}
	})
	t.Run("multi result types", func(t *testing.T) {
		_, body := goldenRecord(t, "java/resp-multi-multi-ok")
		var got []Op
		for _, r := range body.(*MultiResponse).Results {
			got = append(got, r.Type)
		}
		// create, createContainer, createTTL, setData, check, delete
		want := []Op{OpCreate, OpCreate2, OpCreate2, OpSetData, OpCheck, OpDelete}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("result types %v, want %v", got, want)
		}
	})
	t.Run("multiRead errors per op", func(t *testing.T) {
		_, body := goldenRecord(t, "java/resp-multiRead-multiread")
		res := body.(*MultiResponse).Results
		if len(res) != 3 || res[0].Err != ErrNoNode || res[1].Type != OpGetData || res[2].Err != ErrNoNode {
			t.Errorf("results %+v", res)
		}
	})
	t.Run("error replies are header only", func(t *testing.T) {
		for _, name := range []string{"java/resp-getData-missing", "java/resp-exists-absent",
			"java/resp-create-nodeexists", "java/resp-delete-nonode", "java/resp-reconfig"} {
			h, _ := goldenRecord(t, name)
			if h.(*ReplyHeader).Err == OK {
				t.Errorf("%s: err 0", name)
			}
		}
	})
	t.Run("addWatch reply has a 4-byte body", func(t *testing.T) {
		_, body := goldenRecord(t, "java/resp-addWatch-rec")
		if _, ok := body.(*ErrorResponse); !ok {
			t.Errorf("body %T", body)
		}
	})
	t.Run("3.8 notification zxid is -1", func(t *testing.T) {
		h, body := goldenRecord(t, "java/resp-notification-watched")
		if h.(*ReplyHeader).Xid != XidNotification || h.(*ReplyHeader).Zxid != -1 {
			t.Errorf("header %+v", h)
		}
		ev := body.(*WatcherEvent)
		if ev.Type != EventNodeDataChanged || ev.State != StateSyncConnected || ev.Path != "/java/watched" {
			t.Errorf("event %+v", ev)
		}
	})
	t.Run("reserved xids", func(t *testing.T) {
		for name, xid := range map[string]int32{
			"java/req-ping": XidPing, "java/req-auth": XidAuth, "java/resp-auth": XidAuth,
			"go/req-ping": XidPing, "go/resp-ping": XidPing,
		} {
			h, _ := goldenRecord(t, name)
			got := int32(0)
			switch h := h.(type) {
			case *RequestHeader:
				got = h.Xid
			case *ReplyHeader:
				got = h.Xid
			}
			if got != xid {
				t.Errorf("%s: xid %d, want %d", name, got, xid)
			}
		}
	})
	t.Run("setWatches uses an ordinary xid", func(t *testing.T) {
		// Both clients send setWatches with the next ordinary xid, not the
		// reserved -8 (the Java client's socket layer overwrites the header
		// xid of everything but ping and auth), and the reply echoes it.
		for _, c := range []string{"go/%s-setWatches", "java/%s-setWatches2"} {
			req, _ := goldenRecord(t, fmt.Sprintf(c, "req"))
			resp, _ := goldenRecord(t, fmt.Sprintf(c, "resp"))
			x := req.(*RequestHeader).Xid
			if x <= 0 || resp.(*ReplyHeader).Xid != x {
				t.Errorf("%s: request xid %d, reply xid %d", c, x, resp.(*ReplyHeader).Xid)
			}
		}
	})
	t.Run("auth reply echoes xid with zxid 0", func(t *testing.T) {
		// go-zookeeper sends auth with an ordinary xid; ZooKeeper echoes
		// whatever xid came, and puts 0 in the reply's zxid.
		for _, c := range []string{"go/%s-auth", "go/%s-auth-reconnect", "java/%s-auth"} {
			req, _ := goldenRecord(t, fmt.Sprintf(c, "req"))
			resp, _ := goldenRecord(t, fmt.Sprintf(c, "resp"))
			rh := resp.(*ReplyHeader)
			if rh.Xid != req.(*RequestHeader).Xid || rh.Zxid != 0 || rh.Err != OK {
				t.Errorf("%s: request xid %d, reply %+v", c, req.(*RequestHeader).Xid, rh)
			}
		}
	})
	t.Run("reconfig nulls", func(t *testing.T) {
		_, body := goldenRecord(t, "java/req-reconfig")
		r := body.(*ReconfigRequest)
		if r.NullJoining || !r.NullLeaving || !r.NullNewMembers || r.CurConfigID != -1 {
			t.Errorf("reconfig %+v", r)
		}
	})
}
