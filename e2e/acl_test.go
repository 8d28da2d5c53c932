package e2e

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkraft/zkraft/jute"
)

// acl builds a one-entry ACL list.
func acl(perms int32, scheme, id string) zk.ACL { return zk.ACL{Perms: perms, Scheme: scheme, ID: id} }

// digestID is the digest scheme id of user:password.
func digestID(user, password string) string { return zk.DigestACL(0, user, password)[0].ID }

// TestGetSetACL covers getACL/setACL, aversion, versions and NoNode.
func TestGetSetACL(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	p := root + "/n"
	mustCreate(t, c, p, nil, 0)

	got, st, err := c.GetACL(p)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(openACL) || st.Aversion != 0 {
		t.Fatalf("getACL = %v %+v %v", got, st, err)
	}
	if st0 := mustStat(t, c, p); *st != st0 {
		t.Errorf("getACL stat %+v != exists stat %+v", *st, st0)
	}
	readOnly := []zk.ACL{acl(zk.PermRead|zk.PermAdmin, "world", "anyone")}
	_, err = c.SetACL(p, readOnly, 3)
	wantErr(t, "setACL wrong version", err, zk.ErrBadVersion)
	st, err = c.SetACL(p, readOnly, 0)
	if err != nil || st.Aversion != 1 || st.Version != 0 {
		t.Fatalf("setACL = %+v %v", st, err)
	}
	st, err = c.SetACL(p, readOnly, -1)
	if err != nil || st.Aversion != 2 {
		t.Fatalf("setACL any version = %+v %v", st, err)
	}
	got, _, _ = c.GetACL(p)
	if fmt.Sprint(got) != fmt.Sprint(readOnly) {
		t.Errorf("getACL after setACL = %v", got)
	}
	_, err = c.SetACL(root+"/nope", openACL, -1)
	wantErr(t, "setACL missing", err, zk.ErrNoNode)
	_, _, err = c.GetACL(root + "/nope")
	wantErr(t, "getACL missing", err, zk.ErrNoNode)

	// Duplicates are removed.
	dup := []zk.ACL{acl(zk.PermAll, "world", "anyone"), acl(zk.PermAll, "world", "anyone")}
	if _, err := c.SetACL(p, dup, -1); err != nil {
		t.Fatal(err)
	}
	if got, _, _ = c.GetACL(p); fmt.Sprint(got) != fmt.Sprint(openACL) {
		t.Errorf("duplicate entries not removed: %v", got)
	}
}

// TestInvalidACL covers InvalidACL on create and setACL.
func TestInvalidACL(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	mustCreate(t, c, root+"/n", nil, 0)
	for _, tc := range []struct {
		name string
		acl  []zk.ACL
	}{
		{"empty", []zk.ACL{}},
		{"unknown scheme", []zk.ACL{acl(zk.PermAll, "nosuchscheme", "x")}},
		{"world with other id", []zk.ACL{acl(zk.PermAll, "world", "someone")}},
		{"digest without colon", []zk.ACL{acl(zk.PermAll, "digest", "nocolon")}},
		{"ip garbage", []zk.ACL{acl(zk.PermAll, "ip", "not-an-ip")}},
		{"auth with no identities", zk.AuthACL(zk.PermAll)},
	} {
		_, err := c.Create(root+"/x", nil, 0, tc.acl)
		wantErr(t, "create with "+tc.name, err, zk.ErrInvalidACL)
		_, err = c.SetACL(root+"/n", tc.acl, -1)
		wantErr(t, "setACL with "+tc.name, err, zk.ErrInvalidACL)
	}
	mustNotExist(t, c, root+"/x")
	if st := mustStat(t, c, root+"/n"); st.Aversion != 0 {
		t.Errorf("failed setACLs bumped aversion to %d", st.Aversion)
	}
	// Valid non-world schemes are accepted.
	ok := []zk.ACL{acl(zk.PermRead, "ip", "127.0.0.1"), acl(zk.PermRead, "ip", "10.0.0.0/8"),
		acl(zk.PermAll, "digest", digestID("u", "p"))}
	if _, err := c.Create(root+"/ok", nil, 0, ok); err != nil {
		t.Errorf("create with ip and digest ACL: %v", err)
	}
}

// TestPermissions checks each permission bit against the op that needs it.
func TestPermissions(t *testing.T) {
	t.Parallel()
	c := connect(t, shared, sessionTimeout)
	root := testRoot(t, c)
	all := int32(zk.PermAll)
	mk := func(name string, perms int32) string {
		p := root + "/" + name
		if _, err := c.Create(p, []byte("d"), 0, []zk.ACL{acl(perms, "world", "anyone")}); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		return p
	}
	// Children are created before the parent's ACL is narrowed.
	noRead := mk("noread", all&^zk.PermRead)
	mustCreate(t, c, noRead+"/child", nil, 0)
	noWrite := mk("nowrite", all&^zk.PermWrite)
	noCreate := mk("nocreate", all&^zk.PermCreate)
	noDelete := mk("nodelete", all&^zk.PermDelete)
	mustCreate(t, c, noDelete+"/child", nil, 0)
	noAdmin := mk("noadmin", all&^zk.PermAdmin)
	none := mk("none", 0)

	_, _, err := c.Get(noRead)
	wantErr(t, "getData without READ", err, zk.ErrNoAuth)
	_, _, err = c.Children(noRead)
	wantErr(t, "getChildren without READ", err, zk.ErrNoAuth)
	_, _, err = c.Get(noRead + "/child")
	if err != nil {
		t.Errorf("READ is not inherited: get child: %v", err)
	}
	_, err = c.Set(noRead, nil, -1)
	if err != nil {
		t.Errorf("setData with WRITE: %v", err)
	}
	// exists needs READ on an existing node since ZooKeeper 3.8.4/3.9.2;
	// the 3.8.0 oracle does not check it.
	ok, _, err := c.Exists(noRead)
	if target == targetZookeeper {
		if err != nil || !ok {
			t.Errorf("exists without READ (3.8.0) = %v, %v", ok, err)
		}
	} else {
		wantErr(t, "exists without READ (3.9)", err, zk.ErrNoAuth)
	}

	_, err = c.Set(noWrite, []byte("x"), -1)
	wantErr(t, "setData without WRITE", err, zk.ErrNoAuth)
	_, err = c.Create(noCreate+"/c", nil, 0, openACL)
	wantErr(t, "create without CREATE on parent", err, zk.ErrNoAuth)
	wantErr(t, "delete without DELETE on parent", c.Delete(noDelete+"/child", -1), zk.ErrNoAuth)
	// DELETE is checked on the parent, not on the node itself.
	if err := c.Delete(none, -1); err != nil {
		t.Errorf("delete a node with no permissions from a permissive parent: %v", err)
	}
	_, err = c.SetACL(noAdmin, openACL, -1)
	wantErr(t, "setACL without ADMIN", err, zk.ErrNoAuth)
	// getACL works with READ alone.
	if _, _, err := c.GetACL(noAdmin); err != nil {
		t.Errorf("getACL with READ and no ADMIN: %v", err)
	}
	// Failed ops change nothing.
	if data, st, err := c.Get(noWrite); err != nil || string(data) != "d" || st.Version != 0 {
		t.Errorf("noWrite after refused set = %q %+v %v", data, st, err)
	}
}

// TestDigestAuth covers digest ACLs, AddAuth, the auth scheme and getACL
// masking of digests for callers without ADMIN.
func TestDigestAuth(t *testing.T) {
	t.Parallel()
	owner := connect(t, shared, sessionTimeout)
	root := testRoot(t, owner)
	if err := owner.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatalf("addAuth: %v", err)
	}
	p := root + "/private"
	aliceACL := zk.DigestACL(zk.PermAll, "alice", "secret")
	if _, err := owner.Create(p, []byte("s"), 0, aliceACL); err != nil {
		t.Fatal(err)
	}
	if _, _, err := owner.Get(p); err != nil {
		t.Errorf("owner get: %v", err)
	}

	other := connect(t, shared, sessionTimeout)
	_, _, err := other.Get(p)
	wantErr(t, "unauthenticated get", err, zk.ErrNoAuth)
	_, _, err = other.GetACL(p)
	wantErr(t, "unauthenticated getACL", err, zk.ErrNoAuth)
	if err := other.AddAuth("digest", []byte("alice:wrong")); err != nil {
		t.Fatalf("addAuth with a wrong password still succeeds: %v", err)
	}
	_, _, err = other.Get(p)
	wantErr(t, "wrong password get", err, zk.ErrNoAuth)
	if err := other.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := other.Get(p); err != nil || string(data) != "s" {
		t.Errorf("authenticated get = %q %v", data, err)
	}

	// auth scheme: expands to every digest identity of the creator.
	q := root + "/auth"
	if _, err := owner.Create(q, nil, 0, zk.AuthACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	got, _, err := owner.GetACL(q)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(aliceACL) {
		t.Errorf("auth ACL expanded to %v, %v; want %v", got, err, aliceACL)
	}

	// A reader without ADMIN sees digests masked.
	r := root + "/masked"
	mixed := []zk.ACL{acl(zk.PermAll, "digest", digestID("alice", "secret")), acl(zk.PermRead, "world", "anyone")}
	if _, err := owner.Create(r, nil, 0, mixed); err != nil {
		t.Fatal(err)
	}
	anon := connect(t, shared, sessionTimeout)
	got, _, err = anon.GetACL(r)
	want := []zk.ACL{acl(zk.PermAll, "digest", "alice:x"), acl(zk.PermRead, "world", "anyone")}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("getACL without ADMIN = %v, %v; want %v", got, err, want)
	}
	if got, _, _ = owner.GetACL(r); fmt.Sprint(got) != fmt.Sprint(mixed) {
		t.Errorf("getACL with ADMIN = %v, want %v", got, mixed)
	}
}

// TestSuperDigest checks that the super user passes every ACL check.
func TestSuperDigest(t *testing.T) {
	t.Parallel()
	owner := connect(t, shared, sessionTimeout)
	root := testRoot(t, owner)
	p := root + "/locked"
	if _, err := owner.Create(p, []byte("x"), 0, zk.DigestACL(zk.PermAll, "bob", "pw")); err != nil {
		t.Fatal(err)
	}
	su := connect(t, shared, sessionTimeout)
	if _, _, err := su.Get(p); err != zk.ErrNoAuth {
		t.Fatalf("before auth: %v", err)
	}
	if err := su.AddAuth("digest", []byte(superUser+":"+superPassword)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := su.Get(p); err != nil {
		t.Errorf("super get: %v", err)
	}
	if _, err := su.Set(p, []byte("y"), -1); err != nil {
		t.Errorf("super set: %v", err)
	}
	if _, err := su.Create(p+"/c", nil, 0, openACL); err != nil {
		t.Errorf("super create: %v", err)
	}
	got, _, err := su.GetACL(p)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(zk.DigestACL(zk.PermAll, "bob", "pw")) {
		t.Errorf("super getACL = %v %v (digest must not be masked)", got, err)
	}
	if _, err := su.SetACL(p, openACL, -1); err != nil {
		t.Errorf("super setACL: %v", err)
	}
	if _, _, err := owner.Get(p); err != nil {
		t.Errorf("after super opened the ACL: %v", err)
	}
	// A wrong super password is just another digest identity.
	wrong := connect(t, shared, sessionTimeout)
	if err := wrong.AddAuth("digest", []byte(superUser+":nope")); err != nil {
		t.Fatal(err)
	}
	q := root + "/locked2"
	if _, err := owner.Create(q, nil, 0, zk.DigestACL(zk.PermAll, "bob", "pw")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := wrong.Get(q); err != zk.ErrNoAuth {
		t.Errorf("wrong super password: %v, want no auth", err)
	}
}

// TestAuthFailed sends an auth packet of an unknown scheme: the reply is
// xid -4 err AuthFailed and the connection is closed.
func TestAuthFailed(t *testing.T) {
	t.Parallel()
	c := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	pkt := &jute.AuthPacket{Scheme: "nosuchscheme", Auth: []byte("x")}
	if err := c.writeRaw(encodeRequest(jute.XidAuth, jute.OpAuth, pkt)); err != nil {
		t.Fatal(err)
	}
	got := c.expectClosed()
	if len(got) != 1 || got[0].Hdr.Xid != jute.XidAuth || got[0].Hdr.Err != jute.ErrAuthFailed {
		t.Errorf("replies before close = %+v, want one xid -4 err %d", got, jute.ErrAuthFailed)
	}

	// A good auth packet gets a reply with xid -4 and err 0 and no body.
	c2 := newRawSession(t, shared, int32(sessionTimeout.Milliseconds()))
	if err := c2.writeRaw(encodeRequest(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("u:p")})); err != nil {
		t.Fatal(err)
	}
	r := c2.recv()
	if r.Hdr.Xid != jute.XidAuth || r.Hdr.Err != jute.OK || len(r.Body) != 0 {
		t.Errorf("auth reply = %+v body %x", r.Hdr, r.Body)
	}
	c2.ping()
}
