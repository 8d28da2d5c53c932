package buildinfo

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	i := Info{Module: "v1.2.0", Revision: "0123456789abcdef0123", Time: time.Date(2026, 11, 21, 9, 5, 0, 0, time.UTC),
		Modified: true, Go: "go1.26.8"}
	if got, want := i.String(), "zkraft v1.2.0 (revision 0123456789abcdef0123-dirty, 2026-11-21T09:05:00Z, go1.26.8, ZooKeeper 3.9.3 protocol)"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	if got, want := i.ZooKeeperVersion(), "3.9.3-zkraft-v1.2.0-0123456789ab-dirty, built on 2026-11-21 09:05 UTC"; got != want {
		t.Errorf("ZooKeeperVersion %q, want %q", got, want)
	}
	pseudo := Info{Module: "v0.0.0-20261127133133-a37c3c191cae", Revision: "a37c3c191caec8dc35d9b11893a6ea963a2d9ceb"}
	if got, want := pseudo.ZooKeeperVersion(), "3.9.3-zkraft-v0.0.0-20261127133133-a37c3c191cae, built on unknown"; got != want {
		t.Errorf("a pseudo-version's revision is not repeated: %q, want %q", got, want)
	}
	// What session/protocol_test.go and tools parsing srvr expect.
	zk := regexp.MustCompile(`^3\.\d+\.\d+-\S*, built on .*$`)
	for _, i := range []Info{i, {Module: "(devel)"}, Read()} {
		if v := i.ZooKeeperVersion(); !zk.MatchString(v) {
			t.Errorf("%q is not in ZooKeeper's version format", v)
		}
	}
}

// TestLinkTimeVersion: a Version set at link time (make release's -X) is
// the module version Read reports, whatever the toolchain stamped.
func TestLinkTimeVersion(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	Version = "v1.4.0-2-gabcdef0-dirty"
	if got := Read().Module; got != Version {
		t.Errorf("Read().Module = %q with Version %q", got, Version)
	}
	Version = ""
	if got := Read().Module; got == "" {
		t.Error("Read().Module is empty without Version")
	}
}

// TestLinkTimeRevision: a revision set at link time (make build with
// -buildvcs=false) is the revision Read reports when the toolchain
// stamped none.
func TestLinkTimeRevision(t *testing.T) {
	defer func(r, c, d string) { Revision, CommitTime, Dirty = r, c, d }(Revision, CommitTime, Dirty)
	Revision, CommitTime, Dirty = "0123456789abcdef0123456789abcdef01234567", "2026-12-07T01:59:24+00:00", "true"
	i := Read() // go test stamps no VCS settings
	if i.Revision != Revision || !i.Time.Equal(time.Date(2026, 12, 7, 1, 59, 24, 0, time.UTC)) || !i.Modified {
		t.Fatalf("Read() = %+v", i)
	}
	if s := i.String(); !strings.Contains(s, "(revision 0123456789abcdef0123456789abcdef01234567-dirty, 2026-12-07T01:59:24Z,") {
		t.Fatalf("String() = %q", s)
	}
}
