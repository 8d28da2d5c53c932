package jute

// Id is an authentication identity: a scheme and an id within it.
type Id struct {
	Scheme string
	ID     string
}

// Encode implements Record.
func (x *Id) Encode(w *Writer) { w.String(x.Scheme); w.String(x.ID) }

// Decode implements Record. The identities almost every ACL and session
// holds (world:anyone, the ip scheme on loopback) decode without an
// allocation.
func (x *Id) Decode(r *Reader) error {
	x.Scheme = r.commonString()
	x.ID = r.commonString()
	return r.Err()
}

// ACL grants Perms to the identity ID.
type ACL struct {
	Perms int32
	ID    Id
}

// Encode implements Record.
func (x *ACL) Encode(w *Writer) { w.Int(x.Perms); x.ID.Encode(w) }

// Decode implements Record.
func (x *ACL) Decode(r *Reader) error {
	x.Perms = r.Int()
	return x.ID.Decode(r)
}

// WriteACLs appends a vector of ACLs.
func WriteACLs(w *Writer, acl []ACL) {
	w.Int(int32(len(acl)))
	for i := range acl {
		acl[i].Encode(w)
	}
}

// ReadACLs reads a vector of ACLs; null reads as nil.
func ReadACLs(r *Reader) []ACL {
	n, null := r.Count(12)
	if null || r.Err() != nil {
		return nil
	}
	out := make([]ACL, n)
	for i := range out {
		if out[i].Decode(r) != nil {
			return nil
		}
	}
	return out
}

// Stat is a znode's metadata as clients see it.
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
	Pzxid          int64
}

// StatSize is the encoded size of a Stat.
const StatSize = 68

// Encode implements Record.
func (x *Stat) Encode(w *Writer) {
	w.Long(x.Czxid)
	w.Long(x.Mzxid)
	w.Long(x.Ctime)
	w.Long(x.Mtime)
	w.Int(x.Version)
	w.Int(x.Cversion)
	w.Int(x.Aversion)
	w.Long(x.EphemeralOwner)
	w.Int(x.DataLength)
	w.Int(x.NumChildren)
	w.Long(x.Pzxid)
}

// Decode implements Record.
func (x *Stat) Decode(r *Reader) error {
	x.Czxid = r.Long()
	x.Mzxid = r.Long()
	x.Ctime = r.Long()
	x.Mtime = r.Long()
	x.Version = r.Int()
	x.Cversion = r.Int()
	x.Aversion = r.Int()
	x.EphemeralOwner = r.Long()
	x.DataLength = r.Int()
	x.NumChildren = r.Int()
	x.Pzxid = r.Long()
	return r.Err()
}

// RequestHeader precedes every request after the handshake.
type RequestHeader struct {
	Xid  int32
	Type Op
}

// Encode implements Record.
func (x *RequestHeader) Encode(w *Writer) { w.Int(x.Xid); w.Int(int32(x.Type)) }

// Decode implements Record.
func (x *RequestHeader) Decode(r *Reader) error {
	x.Xid = r.Int()
	x.Type = Op(r.Int())
	return r.Err()
}

// ReplyHeader precedes every reply and notification.
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  ErrCode
}

// ReplyHeaderSize is the encoded size of a ReplyHeader.
const ReplyHeaderSize = 16

// Encode implements Record.
func (x *ReplyHeader) Encode(w *Writer) { w.Int(x.Xid); w.Long(x.Zxid); w.Int(int32(x.Err)) }

// Decode implements Record.
func (x *ReplyHeader) Decode(r *Reader) error {
	x.Xid = r.Int()
	x.Zxid = r.Long()
	x.Err = ErrCode(r.Int())
	return r.Err()
}

// ConnectRequest opens or resumes a session. It has no header. The trailing
// readOnly byte is optional: HasReadOnly records whether the client sent it.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// Encode implements Record.
func (x *ConnectRequest) Encode(w *Writer) {
	w.Int(x.ProtocolVersion)
	w.Long(x.LastZxidSeen)
	w.Int(x.TimeOut)
	w.Long(x.SessionID)
	w.Buffer(x.Passwd)
	if x.HasReadOnly {
		w.Bool(x.ReadOnly)
	}
}

// Decode implements Record.
func (x *ConnectRequest) Decode(r *Reader) error {
	x.ProtocolVersion = r.Int()
	x.LastZxidSeen = r.Long()
	x.TimeOut = r.Int()
	x.SessionID = r.Long()
	x.Passwd = r.Buffer()
	x.HasReadOnly = r.Err() == nil && r.Remaining() > 0
	if x.HasReadOnly {
		x.ReadOnly = r.Bool()
	}
	return r.Err()
}

// ConnectResponse answers a ConnectRequest. HasReadOnly mirrors the request.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// Encode implements Record.
func (x *ConnectResponse) Encode(w *Writer) {
	w.Int(x.ProtocolVersion)
	w.Int(x.TimeOut)
	w.Long(x.SessionID)
	w.Buffer(x.Passwd)
	if x.HasReadOnly {
		w.Bool(x.ReadOnly)
	}
}

// Decode implements Record.
func (x *ConnectResponse) Decode(r *Reader) error {
	x.ProtocolVersion = r.Int()
	x.TimeOut = r.Int()
	x.SessionID = r.Long()
	x.Passwd = r.Buffer()
	x.HasReadOnly = r.Err() == nil && r.Remaining() > 0
	if x.HasReadOnly {
		x.ReadOnly = r.Bool()
	}
	return r.Err()
}

// WatcherEvent is the body of a notification (xid -1).
type WatcherEvent struct {
	Type  EventType
	State int32
	Path  string
}

// Encode implements Record.
func (x *WatcherEvent) Encode(w *Writer) { w.Int(int32(x.Type)); w.Int(x.State); w.String(x.Path) }

// Decode implements Record.
func (x *WatcherEvent) Decode(r *Reader) error {
	x.Type = EventType(r.Int())
	x.State = r.Int()
	x.Path = r.String()
	return r.Err()
}

// AuthPacket adds an authentication identity (xid -4, op 100).
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

// Encode implements Record.
func (x *AuthPacket) Encode(w *Writer) { w.Int(x.Type); w.String(x.Scheme); w.Buffer(x.Auth) }

// Decode implements Record.
func (x *AuthPacket) Decode(r *Reader) error {
	x.Type = r.Int()
	x.Scheme = r.String()
	x.Auth = r.Buffer()
	return r.Err()
}

// ErrorResponse carries only an error code (multi results, addWatch).
type ErrorResponse struct {
	Err ErrCode
}

// Encode implements Record.
func (x *ErrorResponse) Encode(w *Writer) { w.Int(int32(x.Err)) }

// Decode implements Record.
func (x *ErrorResponse) Decode(r *Reader) error {
	x.Err = ErrCode(r.Int())
	return r.Err()
}

// GetSASLRequest is the body of a SASL request (opcode 102): the client's
// token.
type GetSASLRequest struct {
	Token []byte
}

// Encode implements Record.
func (x *GetSASLRequest) Encode(w *Writer) { w.Buffer(x.Token) }

// Decode implements Record.
func (x *GetSASLRequest) Decode(r *Reader) error {
	x.Token = r.Buffer()
	return r.Err()
}

// SetSASLResponse is the body of a SASL reply: the server's token (nil
// from a server without SASL).
type SetSASLResponse struct {
	Token []byte
}

// Encode implements Record.
func (x *SetSASLResponse) Encode(w *Writer) { w.Buffer(x.Token) }

// Decode implements Record.
func (x *SetSASLResponse) Decode(r *Reader) error {
	x.Token = r.Buffer()
	return r.Err()
}
