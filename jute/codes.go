package jute

import "strconv"

// Op is a request opcode (RequestHeader.Type).
type Op int32

// Opcodes of the client protocol (ZooDefs.OpCode).
const (
	OpNotification         Op = 0
	OpCreate               Op = 1
	OpDelete               Op = 2
	OpExists               Op = 3
	OpGetData              Op = 4
	OpSetData              Op = 5
	OpGetACL               Op = 6
	OpSetACL               Op = 7
	OpGetChildren          Op = 8
	OpSync                 Op = 9
	OpPing                 Op = 11
	OpGetChildren2         Op = 12
	OpCheck                Op = 13
	OpMulti                Op = 14
	OpCreate2              Op = 15
	OpReconfig             Op = 16
	OpCheckWatches         Op = 17
	OpRemoveWatches        Op = 18
	OpCreateContainer      Op = 19
	OpDeleteContainer      Op = 20
	OpCreateTTL            Op = 21
	OpMultiRead            Op = 22
	OpAuth                 Op = 100
	OpSetWatches           Op = 101
	OpSASL                 Op = 102
	OpGetEphemerals        Op = 103
	OpGetAllChildrenNumber Op = 104
	OpSetWatches2          Op = 105
	OpAddWatch             Op = 106
	OpWhoAmI               Op = 107
	OpCreateSession        Op = -10
	OpCloseSession         Op = -11
	OpError                Op = -1
)

// Reserved xids.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// ErrCode is a ZooKeeper error code (ReplyHeader.Err). It implements error so
// tree operations can return it directly; OK is never returned as an error.
type ErrCode int32

// Error codes (KeeperException.Code).
const (
	OK                      ErrCode = 0
	ErrSystemError          ErrCode = -1
	ErrRuntimeInconsistency ErrCode = -2
	ErrDataInconsistency    ErrCode = -3
	ErrConnectionLoss       ErrCode = -4
	ErrMarshallingError     ErrCode = -5
	ErrUnimplemented        ErrCode = -6
	ErrOperationTimeout     ErrCode = -7
	ErrBadArguments         ErrCode = -8
	ErrUnknownSession       ErrCode = -12
	ErrNewConfigNoQuorum    ErrCode = -13
	ErrReconfigInProgress   ErrCode = -14
	ErrAPIError             ErrCode = -100
	ErrNoNode               ErrCode = -101
	ErrNoAuth               ErrCode = -102
	ErrBadVersion           ErrCode = -103
	ErrNoChildrenForEphem   ErrCode = -108
	ErrNodeExists           ErrCode = -110
	ErrNotEmpty             ErrCode = -111
	ErrSessionExpired       ErrCode = -112
	ErrInvalidCallback      ErrCode = -113
	ErrInvalidACL           ErrCode = -114
	ErrAuthFailed           ErrCode = -115
	ErrSessionMoved         ErrCode = -118
	ErrNotReadOnly          ErrCode = -119
	ErrEphemeralOnLocal     ErrCode = -120
	ErrNoWatcher            ErrCode = -121
	ErrReconfigDisabled     ErrCode = -123
	ErrSessionClosedNoSASL  ErrCode = -124
	ErrQuotaExceeded        ErrCode = -125
	ErrThrottledOp          ErrCode = -127
)

var errNames = map[ErrCode]string{
	OK: "ok", ErrSystemError: "system error", ErrRuntimeInconsistency: "runtime inconsistency",
	ErrDataInconsistency: "data inconsistency", ErrConnectionLoss: "connection loss",
	ErrMarshallingError: "marshalling error", ErrUnimplemented: "unimplemented",
	ErrOperationTimeout: "operation timeout", ErrBadArguments: "bad arguments",
	ErrUnknownSession: "unknown session", ErrNewConfigNoQuorum: "new config no quorum",
	ErrReconfigInProgress: "reconfig in progress", ErrAPIError: "api error", ErrNoNode: "no node",
	ErrNoAuth: "not authenticated", ErrBadVersion: "bad version",
	ErrNoChildrenForEphem: "no children for ephemerals", ErrNodeExists: "node exists",
	ErrNotEmpty: "directory not empty", ErrSessionExpired: "session expired",
	ErrInvalidCallback: "invalid callback", ErrInvalidACL: "invalid ACL", ErrAuthFailed: "auth failed",
	ErrSessionMoved: "session moved", ErrNotReadOnly: "not a read-only call",
	ErrEphemeralOnLocal: "ephemeral on local session", ErrNoWatcher: "no watcher",
	ErrReconfigDisabled: "reconfig disabled", ErrSessionClosedNoSASL: "session closed: SASL auth required",
	ErrQuotaExceeded: "quota exceeded", ErrThrottledOp: "op throttled",
}

// Error returns the code's name as ZooKeeper's KeeperException would.
func (e ErrCode) Error() string {
	if s, ok := errNames[e]; ok {
		return "zk: " + s
	}
	return "zk: error code " + strconv.Itoa(int(e))
}

// EventType is a WatcherEvent type.
type EventType int32

// Watch event types (Watcher.Event.EventType).
const (
	EventNone                EventType = -1
	EventNodeCreated         EventType = 1
	EventNodeDeleted         EventType = 2
	EventNodeDataChanged     EventType = 3
	EventNodeChildrenChanged EventType = 4
)

// Keeper states carried in WatcherEvent.State.
const (
	StateDisconnected      int32 = 0
	StateSyncConnected     int32 = 3
	StateAuthFailed        int32 = 4
	StateConnectedReadOnly int32 = 5
	StateExpired           int32 = -112
)

// Create flags (CreateMode).
const (
	FlagPersistent              int32 = 0
	FlagEphemeral               int32 = 1
	FlagPersistentSequential    int32 = 2
	FlagEphemeralSequential     int32 = 3
	FlagContainer               int32 = 4
	FlagPersistentTTL           int32 = 5
	FlagPersistentSequentialTTL int32 = 6
)

// Permission bits (ZooDefs.Perms).
const (
	PermRead   int32 = 1
	PermWrite  int32 = 2
	PermCreate int32 = 4
	PermDelete int32 = 8
	PermAdmin  int32 = 16
	PermAll    int32 = 31
)

// WatcherType selects watches in checkWatches/removeWatches.
const (
	WatcherChildren            int32 = 1
	WatcherData                int32 = 2
	WatcherAny                 int32 = 3
	WatcherPersistent          int32 = 4
	WatcherPersistentRecursive int32 = 5
)

// AddWatch modes.
const (
	AddWatchPersistent          int32 = 0
	AddWatchPersistentRecursive int32 = 1
)

// DefaultMaxBuffer is jute.maxbuffer's default: the largest frame accepted.
const DefaultMaxBuffer = 0xfffff
