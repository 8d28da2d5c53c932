package jute

// Several zookeeper.jute records share one shape; each shape is one Go type
// and the jute names are noted on it.

// PathRequest is {path}: GetACLRequest, SyncRequest, SyncResponse,
// CreateResponse, GetAllChildrenNumberRequest, GetEphemeralsRequest.
type PathRequest struct {
	Path string
}

// Encode implements Record.
func (x *PathRequest) Encode(w *Writer) { w.String(x.Path) }

// Decode implements Record.
func (x *PathRequest) Decode(r *Reader) error {
	x.Path = r.String()
	return r.Err()
}

// PathWatchRequest is {path, watch}: ExistsRequest, GetDataRequest,
// GetChildrenRequest, GetChildren2Request.
type PathWatchRequest struct {
	Path  string
	Watch bool
}

// Encode implements Record.
func (x *PathWatchRequest) Encode(w *Writer) { w.String(x.Path); w.Bool(x.Watch) }

// Decode implements Record.
func (x *PathWatchRequest) Decode(r *Reader) error {
	x.Path = r.String()
	x.Watch = r.Bool()
	return r.Err()
}

// PathVersionRequest is {path, version}: DeleteRequest, CheckVersionRequest.
type PathVersionRequest struct {
	Path    string
	Version int32
}

// Encode implements Record.
func (x *PathVersionRequest) Encode(w *Writer) { w.String(x.Path); w.Int(x.Version) }

// Decode implements Record.
func (x *PathVersionRequest) Decode(r *Reader) error {
	x.Path = r.String()
	x.Version = r.Int()
	return r.Err()
}

// PathTypeRequest is {path, int}: CheckWatchesRequest and RemoveWatchesRequest
// (type), AddWatchRequest (mode).
type PathTypeRequest struct {
	Path string
	Type int32
}

// Encode implements Record.
func (x *PathTypeRequest) Encode(w *Writer) { w.String(x.Path); w.Int(x.Type) }

// Decode implements Record.
func (x *PathTypeRequest) Decode(r *Reader) error {
	x.Path = r.String()
	x.Type = r.Int()
	return r.Err()
}

// StatResponse is {stat}: ExistsResponse, SetDataResponse, SetACLResponse.
type StatResponse struct {
	Stat Stat
}

// Encode implements Record.
func (x *StatResponse) Encode(w *Writer) { x.Stat.Encode(w) }

// Decode implements Record.
func (x *StatResponse) Decode(r *Reader) error { return x.Stat.Decode(r) }

// CreateRequest is create/create2/createContainer's body; TTL is set only
// for createTTL (CreateTTLRequest), selected by HasTTL.
type CreateRequest struct {
	Path   string
	Data   []byte
	ACL    []ACL
	Flags  int32
	TTL    int64
	HasTTL bool
}

// Encode implements Record.
func (x *CreateRequest) Encode(w *Writer) {
	w.String(x.Path)
	w.Buffer(x.Data)
	WriteACLs(w, x.ACL)
	w.Int(x.Flags)
	if x.HasTTL {
		w.Long(x.TTL)
	}
}

// Decode implements Record. Set HasTTL before decoding a CreateTTLRequest.
func (x *CreateRequest) Decode(r *Reader) error {
	x.Path = r.String()
	x.Data = r.Buffer()
	x.ACL = ReadACLs(r)
	x.Flags = r.Int()
	if x.HasTTL {
		x.TTL = r.Long()
	}
	return r.Err()
}

// Create2Response is {path, stat}.
type Create2Response struct {
	Path string
	Stat Stat
}

// Encode implements Record.
func (x *Create2Response) Encode(w *Writer) { w.String(x.Path); x.Stat.Encode(w) }

// Decode implements Record.
func (x *Create2Response) Decode(r *Reader) error {
	x.Path = r.String()
	return x.Stat.Decode(r)
}

// GetDataResponse is {data, stat}; also the reconfig response.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

// Encode implements Record.
func (x *GetDataResponse) Encode(w *Writer) { w.Buffer(x.Data); x.Stat.Encode(w) }

// Decode implements Record.
func (x *GetDataResponse) Decode(r *Reader) error {
	x.Data = r.Buffer()
	return x.Stat.Decode(r)
}

// SetDataRequest is {path, data, version}.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

// Encode implements Record.
func (x *SetDataRequest) Encode(w *Writer) { w.String(x.Path); w.Buffer(x.Data); w.Int(x.Version) }

// Decode implements Record.
func (x *SetDataRequest) Decode(r *Reader) error {
	x.Path = r.String()
	x.Data = r.Buffer()
	x.Version = r.Int()
	return r.Err()
}

// GetACLResponse is {acl, stat}.
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// Encode implements Record.
func (x *GetACLResponse) Encode(w *Writer) { WriteACLs(w, x.ACL); x.Stat.Encode(w) }

// Decode implements Record.
func (x *GetACLResponse) Decode(r *Reader) error {
	x.ACL = ReadACLs(r)
	return x.Stat.Decode(r)
}

// SetACLRequest is {path, acl, version}.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

// Encode implements Record.
func (x *SetACLRequest) Encode(w *Writer) { w.String(x.Path); WriteACLs(w, x.ACL); w.Int(x.Version) }

// Decode implements Record.
func (x *SetACLRequest) Decode(r *Reader) error {
	x.Path = r.String()
	x.ACL = ReadACLs(r)
	x.Version = r.Int()
	return r.Err()
}

// StringsResponse is {vector<ustring>}: GetChildrenResponse (children),
// GetEphemeralsResponse (ephemerals).
type StringsResponse struct {
	Strings []string
}

// Encode implements Record.
func (x *StringsResponse) Encode(w *Writer) { w.Strings(x.Strings) }

// Decode implements Record.
func (x *StringsResponse) Decode(r *Reader) error {
	x.Strings = r.Strings()
	return r.Err()
}

// GetChildren2Response is {children, stat}.
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

// Encode implements Record.
func (x *GetChildren2Response) Encode(w *Writer) { w.Strings(x.Children); x.Stat.Encode(w) }

// Decode implements Record.
func (x *GetChildren2Response) Decode(r *Reader) error {
	x.Children = r.Strings()
	return x.Stat.Decode(r)
}

// IntResponse is {int}: GetAllChildrenNumberResponse.
type IntResponse struct {
	N int32
}

// Encode implements Record.
func (x *IntResponse) Encode(w *Writer) { w.Int(x.N) }

// Decode implements Record.
func (x *IntResponse) Decode(r *Reader) error {
	x.N = r.Int()
	return r.Err()
}

// SetWatches re-arms watches after a reconnect: SetWatches (op 101) or, with
// V2 set, SetWatches2 (op 105) which adds the persistent lists.
type SetWatches struct {
	RelativeZxid        int64
	DataWatches         []string
	ExistWatches        []string
	ChildWatches        []string
	PersistentWatches   []string
	PersistentRecursive []string
	V2                  bool
}

// Encode implements Record.
func (x *SetWatches) Encode(w *Writer) {
	w.Long(x.RelativeZxid)
	w.Strings(x.DataWatches)
	w.Strings(x.ExistWatches)
	w.Strings(x.ChildWatches)
	if x.V2 {
		w.Strings(x.PersistentWatches)
		w.Strings(x.PersistentRecursive)
	}
}

// Decode implements Record. Set V2 before decoding a SetWatches2.
func (x *SetWatches) Decode(r *Reader) error {
	x.RelativeZxid = r.Long()
	x.DataWatches = r.Strings()
	x.ExistWatches = r.Strings()
	x.ChildWatches = r.Strings()
	if x.V2 {
		x.PersistentWatches = r.Strings()
		x.PersistentRecursive = r.Strings()
	}
	return r.Err()
}

// ClientInfo is one identity in a whoAmI reply.
type ClientInfo struct {
	AuthScheme string
	User       string
}

// WhoAmIResponse is {vector<ClientInfo>}.
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

// Encode implements Record.
func (x *WhoAmIResponse) Encode(w *Writer) {
	w.Int(int32(len(x.ClientInfo)))
	for _, c := range x.ClientInfo {
		w.String(c.AuthScheme)
		w.String(c.User)
	}
}

// Decode implements Record.
func (x *WhoAmIResponse) Decode(r *Reader) error {
	n, _ := r.Count(8)
	x.ClientInfo = make([]ClientInfo, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		x.ClientInfo = append(x.ClientInfo, ClientInfo{AuthScheme: r.String(), User: r.String()})
	}
	return r.Err()
}

// ReconfigRequest is {joiningServers, leavingServers, newMembers, curConfigId}.
// ZooKeeper tells incremental from non-incremental reconfig by which strings
// are null (the Java client sends null for unused ones), so each string has a
// Null flag: set by Decode, honoured by Encode (a null string encodes as
// length -1 whatever the string field holds).
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64

	NullJoining, NullLeaving, NullNewMembers bool
}

func writeNullable(w *Writer, s string, null bool) {
	if null {
		w.NullString()
		return
	}
	w.String(s)
}

// Encode implements Record.
func (x *ReconfigRequest) Encode(w *Writer) {
	writeNullable(w, x.JoiningServers, x.NullJoining)
	writeNullable(w, x.LeavingServers, x.NullLeaving)
	writeNullable(w, x.NewMembers, x.NullNewMembers)
	w.Long(x.CurConfigID)
}

// Decode implements Record.
func (x *ReconfigRequest) Decode(r *Reader) error {
	x.JoiningServers, x.NullJoining = r.NullableString()
	x.LeavingServers, x.NullLeaving = r.NullableString()
	x.NewMembers, x.NullNewMembers = r.NullableString()
	x.CurConfigID = r.Long()
	return r.Err()
}
