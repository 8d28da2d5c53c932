package console

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// quietLogger drops go-zookeeper's log lines (they would name the
// console's sessions on every reconnect).
type quietLogger struct{}

// Printf implements zk.Logger and prints nothing.
func (quietLogger) Printf(string, ...any) {}

// errBadCredentials is a login whose user name cannot be a digest identity.
var errBadCredentials = errors.New("a user name must be non-empty and without ':' when a password is given")

// checkCredentials accepts an anonymous login (both empty) or a digest
// user:password whose user has no colon.
func checkCredentials(user, password string) error {
	if user == "" && password == "" {
		return nil
	}
	if user == "" || strings.ContainsAny(user, ":\n\r") {
		return errBadCredentials
	}
	return nil
}

// dialLogin opens the ZooKeeper session of a login: go-zookeeper against
// addr, with the digest credentials added before anything is read. It
// waits up to wait for the session.
func dialLogin(addr, user, password string, timeout, wait time.Duration, ops *opStats) (*login, error) {
	l := &login{user: user, password: password, ended: make(chan struct{})}
	has := make(chan struct{}, 1)
	conn, _, err := zk.Connect([]string{addr}, timeout,
		zk.WithLogger(quietLogger{}),
		zk.WithLogInfo(false),
		zk.WithEventCallback(func(ev zk.Event) {
			switch ev.State {
			case zk.StateHasSession:
				select {
				case has <- struct{}{}:
				default:
				}
			case zk.StateExpired, zk.StateAuthFailed:
				l.expired.Store(true)
			}
		}))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	l.conn = conn
	l.zk = &zkc{conn: conn, ops: ops}
	select {
	case <-has:
	case <-time.After(wait):
		conn.Close()
		return nil, fmt.Errorf("no ZooKeeper session from %s within %v", addr, wait)
	}
	if user != "" {
		if err := conn.AddAuth("digest", []byte(user+":"+password)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("digest auth: %w", err)
		}
	}
	return l, nil
}
