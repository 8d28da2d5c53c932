package procs

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// SuperDigest is the superDigest of super:secret, the super user the
// trees DumpTree reads are written for.
const SuperDigest = "super:lK75jTNcA+U9vtVEw5vB51mj/w4="

// DumpTree lists every znode under root as the super user (super:secret)
// sees it: path, data, ACL and Stat, one line each, skipping the paths in
// skip.
func DumpTree(t testing.TB, addr string, skip ...string) string {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.AddAuth("digest", []byte("super:secret")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sync("/"); err != nil {
		t.Fatalf("%s: sync: %v", addr, err)
	}
	var b strings.Builder
	var walk func(p string)
	walk = func(p string) {
		if slices.Contains(skip, p) {
			return
		}
		data, st, err := c.Get(p)
		if err != nil {
			t.Fatalf("%s: get %s: %v", addr, p, err)
		}
		acl, _, err := c.GetACL(p)
		if err != nil {
			t.Fatalf("%s: getACL %s: %v", addr, p, err)
		}
		fmt.Fprintf(&b, "%s %q %v %+v\n", p, data, acl, *st)
		kids, _, err := c.Children(p)
		if err != nil {
			t.Fatalf("%s: children %s: %v", addr, p, err)
		}
		slices.Sort(kids)
		for _, k := range kids {
			walk(path.Join(p, k))
		}
	}
	walk("/")
	return b.String()
}

// WriteAppTree writes the small application tree the snapshot tests
// carry between systems: /app, /app/cfg, /app/jobs and /svc, /app/cfg
// set three times and three sequential jobs of jobData under /app/jobs.
func WriteAppTree(t testing.TB, c *zk.Conn, jobData []byte) {
	t.Helper()
	open := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/app", "/app/cfg", "/app/jobs", "/svc"} {
		if _, err := c.Create(p, []byte("v-"+p), 0, open); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if _, err := c.Set("/app/cfg", []byte(fmt.Sprint("version ", i)), -1); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Create("/app/jobs/job-", jobData, zk.FlagSequence, open); err != nil {
			t.Fatal(err)
		}
	}
}
