package saslgssapi

import (
	"errors"
	"testing"
)

// TestServicePrincipal resolves quorum.auth.kerberos.servicePrincipal
// as ZooKeeper's SecurityUtils.getServerPrincipal does: only
// "service/_HOST" takes the host, lower-cased.
func TestServicePrincipal(t *testing.T) {
	for _, tc := range []struct{ principal, host, svc, h string }{
		{"zkquorum/_HOST", "ZK1.Example.COM", "zkquorum", "zk1.example.com"},
		{"zkquorum/localhost", "zk1", "zkquorum", "localhost"},
		{"zkquorum/zk2.example.com@EXAMPLE.COM", "zk1", "zkquorum", "zk2.example.com"},
		{"zkquorum/_HOST@EXAMPLE.COM", "zk1", "zkquorum", "_HOST"}, // ZooKeeper replaces _HOST only without a realm
	} {
		svc, h, err := ServicePrincipal(tc.principal, tc.host)
		if err != nil || svc != tc.svc || h != tc.h {
			t.Errorf("ServicePrincipal(%q, %q) = %q, %q, %v; want %q, %q", tc.principal, tc.host, svc, h, err, tc.svc, tc.h)
		}
	}
	for _, bad := range []string{"zkquorum", "", "/host", "zkquorum/", "a/b/c"} {
		if _, _, err := ServicePrincipal(bad, "zk1"); !errors.Is(err, ErrGSSAPI) {
			t.Errorf("ServicePrincipal(%q): %v, want ErrGSSAPI", bad, err)
		}
	}
}

// TestNextOutOfOrder: a challenge before Start, or after the last token,
// is an error, not a panic.
func TestNextOutOfOrder(t *testing.T) {
	c := NewClient(nil, "zkquorum", "localhost", "")
	if _, err := c.Next([]byte{1}); !errors.Is(err, ErrGSSAPI) {
		t.Errorf("Next before Start: %v", err)
	}
	c.step = 3
	if _, err := c.Next([]byte{1}); !errors.Is(err, ErrGSSAPI) {
		t.Errorf("Next after the end: %v", err)
	}
	c.step = 2
	if _, err := c.Next([]byte{0x05, 0x04, 0x01}); !errors.Is(err, ErrGSSAPI) {
		t.Errorf("a short wrap token: %v", err)
	}
	c = NewClient(nil, "zkquorum", "localhost", "")
	c.step = 1
	if _, err := c.Next([]byte{0x60, 0x01}); !errors.Is(err, ErrGSSAPI) {
		t.Errorf("a malformed AP-REP: %v", err)
	}
}
