// Package buildinfo reads what the Go toolchain stamped into the binary:
// the module version and the VCS revision it was built from
// (runtime/debug.ReadBuildInfo), for `zkraft version` and the version
// ZooKeeper's four-letter words report.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// ZooKeeperRelease is the ZooKeeper release whose client protocol and
// four-letter words zkraft speaks; tools parse it from "Zookeeper
// version: X.Y.Z-...".
const ZooKeeperRelease = "3.9.3"

// Version, when set at link time (make release: -ldflags "-X
// github.com/zkraft/zkraft/internal/base/buildinfo.Version=$(git describe
// --tags --always --dirty)"), is the version Read reports in place of the
// module version the toolchain stamped, which is "(devel)" wherever the go
// command finds no VCS (a git worktree, a source tarball, -buildvcs=false).
var Version string

// Revision, CommitTime (RFC 3339) and Dirty ("true") are the commit a
// binary was built from when set at link time (make build and make
// release: git rev-parse HEAD, git log -1 --format=%cI, describe's
// -dirty). Read uses them where the toolchain stamped no VCS settings
// (-buildvcs=false, a git worktree without .git as a directory).
var Revision, CommitTime, Dirty string

// Info is one binary's build stamp.
type Info struct {
	Module   string    // the module's version: a tag (v1.2.0), a pseudo-version, or "(devel)"
	Revision string    // the VCS commit; "" when not stamped (go test, -buildvcs=false)
	Time     time.Time // the commit's time; zero when not stamped
	Modified bool      // built from a work tree with uncommitted changes
	Go       string    // the toolchain, runtime.Version()
}

// Read returns this binary's build stamp.
func Read() Info {
	info := Info{Module: "(devel)", Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.stamp(bi)
	}
	if Version != "" {
		info.Module = Version
	}
	if info.Revision == "" && Revision != "" {
		info.Revision = Revision
		info.Time, _ = time.Parse(time.RFC3339, CommitTime)
		info.Modified = Dirty == "true"
	}
	return info
}

// stamp copies what the toolchain recorded in bi.
func (i *Info) stamp(bi *debug.BuildInfo) {
	if v := bi.Main.Version; v != "" {
		i.Module = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.time":
			i.Time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
}

// String is the `zkraft version` line: module version, revision (with
// "-dirty" for a modified tree), commit time and toolchain.
func (i Info) String() string {
	rev := i.Revision
	if rev == "" {
		rev = "unknown"
	}
	if i.Modified {
		rev += "-dirty"
	}
	when := "unknown"
	if !i.Time.IsZero() {
		when = i.Time.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("zkraft %s (revision %s, %s, %s, ZooKeeper %s protocol)", i.Module, rev, when, i.Go, ZooKeeperRelease)
}

// ZooKeeperVersion is the version in ZooKeeper's format, as srvr, stat,
// mntr, envi and the AdminServer show it: "3.9.3-<build>, built on
// <yyyy-MM-dd HH:mm> UTC". ZooKeeper's <build> is its commit; here it is
// zkraft-<module version>-<revision>, with no spaces or commas, so a tool
// reading the release from the front, or the whole up to the comma,
// keeps working.
func (i Info) ZooKeeperVersion() string {
	build := "zkraft-" + strings.NewReplacer("(", "", ")", "", " ", "", ",", "").Replace(i.Module)
	if i.Revision != "" {
		if !strings.HasSuffix(build, shortRev(i.Revision)) { // a pseudo-version ends with it
			build += "-" + shortRev(i.Revision)
		}
		if i.Modified {
			build += "-dirty"
		}
	}
	when := "unknown"
	if !i.Time.IsZero() {
		when = i.Time.UTC().Format("2006-01-02 15:04") + " UTC"
	}
	return fmt.Sprintf("%s-%s, built on %s", ZooKeeperRelease, build, when)
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
