package shell

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// Exit statuses, as ZooKeeperMain's ExitCode and CliException use them.
const (
	exitOK       = 0
	exitFailed   = 1
	exitNotFound = 127
)

// cliError is a failed command: its message goes to stderr as zkCli prints
// it, and code becomes the exit status.
type cliError struct {
	msg  string
	code int
	err  error // underlying cause, if any
}

// Error returns the message zkCli prints.
func (e *cliError) Error() string { return e.msg }

// Unwrap returns the underlying cause.
func (e *cliError) Unwrap() error { return e.err }

// failf builds a cliError with exit status 1.
func failf(format string, args ...any) *cliError {
	return &cliError{msg: fmt.Sprintf(format, args...), code: exitFailed}
}

// keeperCode extracts a ZooKeeper error code from an error returned by
// go-zookeeper or by the tap. ok is false for errors that carry none.
func keeperCode(err error) (jute.ErrCode, bool) {
	if err == nil {
		return 0, false
	}
	var code jute.ErrCode
	if errors.As(err, &code) {
		return code, true
	}
	table := []struct {
		err  error
		code jute.ErrCode
	}{
		{zk.ErrNoNode, -101},
		{zk.ErrNoAuth, -102},
		{zk.ErrBadVersion, -103},
		{zk.ErrNoChildrenForEphemerals, -108},
		{zk.ErrNodeExists, -110},
		{zk.ErrNotEmpty, -111},
		{zk.ErrSessionExpired, -112},
		{zk.ErrInvalidACL, -114},
		{zk.ErrAuthFailed, -115},
		{zk.ErrSessionMoved, -118},
		{zk.ErrReconfigDisabled, -123},
		{zk.ErrBadArguments, -8},
		{zk.ErrAPIError, -100},
		{zk.ErrNothing, -121},
		{zk.ErrConnectionClosed, -4},
		{zk.ErrClosing, -4},
		{zk.ErrNoServer, -4},
		{errTapConnLoss, -4},
	}
	for _, t := range table {
		if errors.Is(err, t.err) {
			return t.code, true
		}
	}
	var n int32
	if _, serr := fmt.Sscanf(err.Error(), "unknown error: %d", &n); serr == nil {
		return jute.ErrCode(n), true
	}
	return 0, false
}

// codeMessage is KeeperException.getCodeMessage.
func codeMessage(c jute.ErrCode) string {
	switch c {
	case 0:
		return "ok"
	case -1:
		return "SystemError"
	case -2:
		return "RuntimeInconsistency"
	case -3:
		return "DataInconsistency"
	case -4:
		return "ConnectionLoss"
	case -5:
		return "MarshallingError"
	case -13:
		return "NewConfigNoQuorum"
	case -14:
		return "ReconfigInProgress"
	case -6:
		return "Unimplemented"
	case -7:
		return "OperationTimeout"
	case -8:
		return "BadArguments"
	case -100:
		return "APIError"
	case -101:
		return "NoNode"
	case -102:
		return "NoAuth"
	case -103:
		return "BadVersion"
	case -108:
		return "NoChildrenForEphemerals"
	case -110:
		return "NodeExists"
	case -114:
		return "InvalidACL"
	case -115:
		return "AuthFailed"
	case -111:
		return "Directory not empty"
	case -112:
		return "Session expired"
	case -113:
		return "Invalid callback"
	case -118:
		return "Session moved"
	case -119:
		return "Not a read-only call"
	case -120:
		return "Ephemeral node on local session"
	case -121:
		return "No such watcher"
	case -123:
		return "Reconfig is disabled"
	case -124:
		return "Session closed because client failed to authenticate"
	case -125:
		return "Quota has exceeded"
	case -127:
		return "Op throttled due to high load"
	}
	return fmt.Sprintf("Unknown error %d", int32(c))
}

// keeperMessage is KeeperException.getMessage for code c on path.
func keeperMessage(c jute.ErrCode, path string) string {
	if path == "" {
		return "KeeperErrorCode = " + codeMessage(c)
	}
	return "KeeperErrorCode = " + codeMessage(c) + " for " + path
}

// wrapKeeper turns an operation error on path into the message
// CliWrapperException prints.
func wrapKeeper(err error, path string) *cliError {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce
	}
	code, ok := keeperCode(err)
	if !ok {
		return &cliError{msg: err.Error(), code: exitFailed, err: err}
	}
	var msg string
	switch code {
	case -101:
		msg = "Node does not exist: " + path
	case -108:
		msg = "Ephemerals cannot have children: " + path
	case -110:
		msg = "Node already exists: " + path
	case -111:
		msg = "Node not empty: " + path
	case -119:
		msg = "Not a read-only call: " + path
	case -114:
		msg = "Acl is not valid : " + path
	case -102:
		msg = "Insufficient permission : " + path
	case -8:
		msg = "Arguments are not valid : " + path
	case -103:
		msg = "version No is not valid : " + path
	case -14:
		msg = "Another reconfiguration is in progress -- concurrent reconfigs not supported (yet)"
	case -13:
		msg = "No quorum of new config is connected and up-to-date with the leader of last commmitted config" +
			" - try invoking reconfiguration after new servers are connected and synced"
	case -125:
		msg = "Quota has exceeded : " + path
	default:
		msg = keeperMessage(code, path)
	}
	return &cliError{msg: msg, code: exitFailed, err: err}
}

// isCode reports whether err carries ZooKeeper error code c.
func isCode(err error, c jute.ErrCode) bool {
	got, ok := keeperCode(err)
	return ok && got == c
}

// usageError is the CliParseException thrown with a command's usage string.
func usageError(usage string) *cliError {
	return &cliError{msg: usage, code: exitFailed}
}
