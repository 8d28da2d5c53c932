package shell

import (
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// chrootConn is the ZooKeeper client the commands use: go-zookeeper's
// connection seen through the chroot of the connect string
// ("host:port/app"), as the Java client applies it. Paths are prefixed with
// the chroot on the way out; paths coming back (created nodes, event paths,
// ephemerals) have it removed. With no chroot it passes everything through.
type chrootConn struct {
	*zk.Conn
	root string // "" or "/app": no trailing slash
}

// server maps a client path to the server's.
func (c chrootConn) server(p string) string {
	if c.root == "" {
		return p
	}
	if p == "/" {
		return c.root
	}
	return c.root + p
}

// client maps a server path back to the client's.
func (c chrootConn) client(p string) string {
	if c.root == "" {
		return p
	}
	if p == c.root {
		return "/"
	}
	if strings.HasPrefix(p, c.root+"/") {
		return p[len(c.root):]
	}
	return p
}

// Get implements zk.Conn.Get through the chroot.
func (c chrootConn) Get(p string) ([]byte, *zk.Stat, error) { return c.Conn.Get(c.server(p)) }

// GetW implements zk.Conn.GetW through the chroot.
func (c chrootConn) GetW(p string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	return c.Conn.GetW(c.server(p))
}

// Set implements zk.Conn.Set through the chroot.
func (c chrootConn) Set(p string, data []byte, version int32) (*zk.Stat, error) {
	return c.Conn.Set(c.server(p), data, version)
}

// Create implements zk.Conn.Create through the chroot.
func (c chrootConn) Create(p string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	created, err := c.Conn.Create(c.server(p), data, flags, acl)
	return c.client(created), err
}

// CreateTTL implements zk.Conn.CreateTTL through the chroot.
func (c chrootConn) CreateTTL(p string, data []byte, flags int32, acl []zk.ACL, ttl time.Duration) (string, error) {
	created, err := c.Conn.CreateTTL(c.server(p), data, flags, acl, ttl)
	return c.client(created), err
}

// CreateContainer implements zk.Conn.CreateContainer through the chroot.
func (c chrootConn) CreateContainer(p string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	created, err := c.Conn.CreateContainer(c.server(p), data, flags, acl)
	return c.client(created), err
}

// Delete implements zk.Conn.Delete through the chroot.
func (c chrootConn) Delete(p string, version int32) error { return c.Conn.Delete(c.server(p), version) }

// Exists implements zk.Conn.Exists through the chroot.
func (c chrootConn) Exists(p string) (bool, *zk.Stat, error) { return c.Conn.Exists(c.server(p)) }

// ExistsW implements zk.Conn.ExistsW through the chroot.
func (c chrootConn) ExistsW(p string) (bool, *zk.Stat, <-chan zk.Event, error) {
	return c.Conn.ExistsW(c.server(p))
}

// Children implements zk.Conn.Children through the chroot.
func (c chrootConn) Children(p string) ([]string, *zk.Stat, error) {
	return c.Conn.Children(c.server(p))
}

// ChildrenW implements zk.Conn.ChildrenW through the chroot.
func (c chrootConn) ChildrenW(p string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	return c.Conn.ChildrenW(c.server(p))
}

// GetACL implements zk.Conn.GetACL through the chroot.
func (c chrootConn) GetACL(p string) ([]zk.ACL, *zk.Stat, error) { return c.Conn.GetACL(c.server(p)) }

// SetACL implements zk.Conn.SetACL through the chroot.
func (c chrootConn) SetACL(p string, acl []zk.ACL, version int32) (*zk.Stat, error) {
	return c.Conn.SetACL(c.server(p), acl, version)
}

// Sync implements zk.Conn.Sync through the chroot.
func (c chrootConn) Sync(p string) (string, error) {
	synced, err := c.Conn.Sync(c.server(p))
	return c.client(synced), err
}

// deleteMulti deletes paths (version -1) in one multi transaction.
func (c chrootConn) deleteMulti(paths []string) error {
	ops := make([]any, len(paths))
	for i, p := range paths {
		ops[i] = &zk.DeleteRequest{Path: c.server(p), Version: -1}
	}
	_, err := c.Conn.Multi(ops...)
	return err
}
