package shell

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestSplitLine(t *testing.T) {
	cases := map[string][]string{
		`create /a "two words" world:anyone:r`: {"create", "/a", "two words", "world:anyone:r"},
		`  ls   /  `:                           {"ls", "/"},
		`set /a 'it is'`:                       {"set", "/a", "it is"},
		`set /a ""`:                            {"set", "/a", ""},
		`get /a"b`:                             {"get", `/a"b`},
	}
	for in, want := range cases {
		if got := splitLine(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	specs := []optSpec{{name: "s"}, {name: "w"}, {name: "v", hasArg: true}}
	p, err := parseArgs([]string{"set", "/a", "-v5", "data", "-sw"}, specs, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.args, []string{"set", "/a", "data"}) || p.value("v") != "5" || !p.has("s") || !p.has("w") {
		t.Errorf("got args %q opts %v", p.args, p.opts)
	}
	for in, want := range map[string]string{
		"get -z /a":    "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -z",
		"delete -v":    "org.apache.commons.cli.MissingArgumentException: Missing argument for option: v",
		"delete -v -s": "org.apache.commons.cli.MissingArgumentException: Missing argument for option: v",
	} {
		if _, err := parseArgs(strings.Fields(in), specs, false); err == nil || err.Error() != want {
			t.Errorf("%s: err %v, want %s", in, err, want)
		}
	}
	p, err = parseArgs([]string{"get", "--output", "json", "/a"}, specs, true)
	if err != nil || p.value(outputFlag) != "json" || !reflect.DeepEqual(p.args, []string{"get", "/a"}) {
		t.Errorf("--output: %v %v", p, err)
	}
	// -o is --output, as zkraft shell's own flag (no zkCli command has -o).
	for _, toks := range [][]string{{"get", "/a", "-o", "json"}, {"get", "-o=json", "/a"}, {"get", "--output=json", "/a"}} {
		p, err = parseArgs(toks, specs, true)
		if err != nil || p.value(outputFlag) != "json" || !reflect.DeepEqual(p.args, []string{"get", "/a"}) {
			t.Errorf("%q: %v %v", toks, p, err)
		}
	}
	if _, err := parseArgs([]string{"set", "/a", "-o", "json"}, specs, false); err == nil {
		t.Error("-o accepted by a command without JSON output")
	}
	p, err = parseArgs([]string{"get", "--", "-x"}, specs, false)
	if err != nil || !reflect.DeepEqual(p.args, []string{"get", "-x"}) {
		t.Errorf("--: %v %v", p, err)
	}
}

func TestUsage39(t *testing.T) {
	cmds := commandTable()
	want := "get [-s] [-w] [-b] [-x] path\n" +
		" -b   Output data in base64 format\n" +
		" -s   Print znode stats additionally\n" +
		" -w   Watch for changes on the znode\n" +
		" -x   Output data in hexdump format\n"
	if got := cmds["get"].usageStr(); got != want {
		t.Errorf("get usage:\n%q\nwant\n%q", got, want)
	}
	want = "set path data [-s] [-v version] [-b]\n" +
		" -b         Supply data in base64 format\n" +
		" -s         Print znode stats additionally\n" +
		" -v <arg>   Set with an expected version\n"
	if got := cmds["set"].usageStr(); got != want {
		t.Errorf("set usage:\n%q\nwant\n%q", got, want)
	}
}

func TestHexDump(t *testing.T) {
	// The layout of Netty's ByteBufUtil.prettyHexDump.
	want := "" +
		"         +-------------------------------------------------+\n" +
		"         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n" +
		"+--------+-------------------------------------------------+----------------+\n" +
		"|00000000| 68 65 6c 6c 6f 00 01 7f 20 77 6f 72 6c 64 21 21 |hello... world!!|\n" +
		"|00000010| 41                                              |A               |\n" +
		"+--------+-------------------------------------------------+----------------+"
	if got := hexDump([]byte("hello\x00\x01\x7f world!!A")); got != want {
		t.Errorf("hexDump:\n%s\nwant\n%s", got, want)
	}
}

func TestPlainData(t *testing.T) {
	in := []byte("ok\x1b[31m\xff\n")
	if got, want := plainData(in, false), "ok\x1b[31m\uFFFD\n"; got != want {
		t.Errorf("raw: %q want %q", got, want)
	}
	if got, want := plainData(in, true), "ok\\x1b[31m\uFFFD\n"; got != want {
		t.Errorf("safe: %q want %q", got, want)
	}
}

func TestACLFormat(t *testing.T) {
	var errs bytes.Buffer
	acl := parseACL("digest:bob:K9kB/Lq+=:cdr,ip:10.0.0.0/8:r,bad,world:anyone:rq", &errs)
	want := []zk.ACL{
		{Perms: zk.PermCreate | zk.PermDelete | zk.PermRead, Scheme: "digest", ID: "bob:K9kB/Lq+="},
		{Perms: zk.PermRead, Scheme: "ip", ID: "10.0.0.0/8"},
		{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
	}
	if !reflect.DeepEqual(acl, want) {
		t.Errorf("parseACL = %+v", acl)
	}
	if errs.String() != "bad does not have the form scheme:id:perm\nUnknown perm type: q\n" {
		t.Errorf("errors: %q", errs.String())
	}
	if got := aclText(zk.ACL{Perms: zk.PermAll, Scheme: "x", ID: "a,b%}"}); got != "'x,'a%2Cb%25%7D\n: cdrwa" {
		t.Errorf("aclText = %q", got)
	}
}

func TestValidatePath(t *testing.T) {
	for p, want := range map[string]string{
		"/":      "",
		"/a/b":   "",
		"a":      "Path must start with / character",
		"/a/":    "Path must not end with / character",
		"/a//b":  `Invalid path string "/a//b" caused by empty node name specified @3`,
		"/a/../": "Path must not end with / character",
		"/a/..":  `Invalid path string "/a/.." caused by relative paths not allowed @4`,
		"/a\x01": `Invalid path string "/a` + "\x01" + `" caused by invalid character @2`,
		"":       "Path length must be > 0",
	} {
		err := validatePath(p, false)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("validatePath(%q) = %q, want %q", p, got, want)
		}
	}
	if err := validatePath("/a/", true); err != nil {
		t.Errorf("sequential /a/: %v", err)
	}
}

func TestStatsTrack(t *testing.T) {
	st := parseStatsTrack([]byte("count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=10"))
	if got, want := st.String(), "count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=10"; got != want {
		t.Errorf("round trip %q, want %q", got, want)
	}
	if got := (statsTrack{"count": 0, "bytes": 0}).String(); got != "count=0,bytes=0" {
		t.Errorf("stats %q", got)
	}
}

func TestJavaDate(t *testing.T) {
	// Not by setting time.Local: other goroutines (timers left by earlier
	// tests) read it, a data race under -race.
	if got := javaDateIn(0, time.UTC); got != "Thu Jan 01 00:00:00 UTC 1970" {
		t.Errorf("javaDate(0) = %q", got)
	}
}

func TestNormalizeEvents(t *testing.T) {
	// Interleavings zkCli produces from its two threads normalize alike.
	a := "x\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeCreated path:/a\nCreated /a\n"
	b := "x\nCreated /a\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeCreated path:/a zxid: 7\n"
	c := "x\n\nWATCHER::\nCreated /a\n\nWatchedEvent state:SyncConnected type:NodeCreated path:/a\n"
	if normalize(a, "S") != normalize(b, "S") || normalize(a, "S") != normalize(c, "S") {
		t.Errorf("normalize differs:\n%q\n%q\n%q", normalize(a, "S"), normalize(b, "S"), normalize(c, "S"))
	}
	// An event inside ls's "[a, b]" (printed in pieces) and one after it.
	d := "[a, b\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeCreated path:/a\n]\n"
	e := "[a, b]\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeCreated path:/a\n"
	if normalize(d, "S") != normalize(e, "S") {
		t.Errorf("split line: %q vs %q", normalize(d, "S"), normalize(e, "S"))
	}
}
