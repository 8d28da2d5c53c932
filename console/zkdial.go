package console

import (
	"errors"
	"fmt"
	"net"
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

// dialerFor returns how the sessions of a login from remoteIP reach the
// server: Config.Dial for that address, else TCP to ClientAddr.
func (c *Console) dialerFor(remoteIP string) func(timeout time.Duration) (net.Conn, error) {
	if dial := c.cfg.Dial; dial != nil {
		return func(time.Duration) (net.Conn, error) { return dial(remoteIP) }
	}
	addr := c.cfg.ClientAddr
	return func(timeout time.Duration) (net.Conn, error) { return net.DialTimeout("tcp", addr, timeout) }
}

// dialLogin opens the ZooKeeper session of a login: go-zookeeper over
// dial (to addr, which only names the server in errors), with the digest
// credentials added before anything is read. It waits up to wait for the
// session.
func dialLogin(dial func(time.Duration) (net.Conn, error), addr, user, password string, timeout, wait time.Duration, ops *opStats) (*login, error) {
	l := &login{user: user, password: password, dial: dial, ended: make(chan struct{})}
	has := make(chan struct{}, 1)
	conn, _, err := zk.Connect([]string{addr}, timeout,
		zk.WithDialer(func(_, _ string, timeout time.Duration) (net.Conn, error) { return dial(timeout) }),
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
