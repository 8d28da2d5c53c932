package operator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/internal/cli/jsonshape"
	"github.com/zkraft/zkraft/internal/testing/rawclient"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// zkAdminDir holds real ZooKeeper 3.8 AdminServer responses.
const zkAdminDir = "../testdata/admin/zookeeper-3.8"

// decodeOrdered parses JSON into the values writeJackson takes, keeping
// object field order and numbers' text.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case json.Delim:
		switch x {
		case '{':
			obj := jsonObj{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				obj = obj.add(k.(string), v)
			}
			_, err := dec.Token()
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", x)
	case json.Number:
		return jsonNumber(x), nil
	default: // string, bool, nil
		return x, nil
	}
}

func parseOrdered(t *testing.T, b []byte) jsonObj {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("trailing data after the object: %v", err)
	}
	obj, ok := v.(jsonObj)
	if !ok {
		t.Fatalf("not an object:\n%s", b)
	}
	return obj
}

// TestJacksonLayoutMatchesZooKeeper re-encodes every captured ZooKeeper
// AdminServer response and expects the same bytes: the writer lays out
// objects, nested objects in arrays, empty containers, numbers and
// escaped strings as Jackson's default pretty printer does.
func TestJacksonLayoutMatchesZooKeeper(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(zkAdminDir, "*.json"))
	if len(files) < 20 {
		t.Fatalf("%d captured responses in %s", len(files), zkAdminDir)
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		writeJackson(&b, parseOrdered(t, want))
		if b.String() != string(want) {
			t.Errorf("%s: re-encoded differs\n got: %q\nwant: %q", filepath.Base(f), b.String(), want)
		}
	}
}

func TestJacksonStrings(t *testing.T) {
	var b strings.Builder
	writeJackson(&b, jsonObj{}.add("s", "a\"b\\c\n\t\x01é/<>\xff").add("e", jsonObj{}).add("l", []int64{}).add("n", nil))
	want := "{\n  \"s\" : \"a\\\"b\\\\c\\n\\t\\u0001é/<>\uFFFD\",\n  \"e\" : { },\n  \"l\" : [ ],\n  \"n\" : null\n}"
	if b.String() != want {
		t.Fatalf("got  %q\nwant %q", b.String(), want)
	}
	var check map[string]any
	if err := json.Unmarshal([]byte(b.String()), &check); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
}

// shapeOf is doc's jsonshape.
func shapeOf(t *testing.T, doc string) string {
	t.Helper()
	s, err := jsonshape.OfTopOrdered([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return s
}

// valueShape is the jsonshape of one decoded value.
func valueShape(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	writeJackson(&b, v)
	return shapeOf(t, b.String())
}

// adminClientState gives the server what the captured responses were
// taken with: one session holding an ephemeral /a/e, a data and a child
// watch on /a and an exists watch on /a/b.
func adminClientState(t *testing.T, ts *testServer) *rawclient.Client {
	t.Helper()
	c := rawclient.Dial(t, ts.addr)
	c.Connect(false)
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	reqs := []struct {
		op   jute.Op
		body jute.Record
	}{
		{jute.OpCreate, &jute.CreateRequest{Path: "/a", ACL: acl}},
		{jute.OpCreate, &jute.CreateRequest{Path: "/a/b", ACL: acl}},
		{jute.OpCreate, &jute.CreateRequest{Path: "/a/e", Data: []byte("x"), ACL: acl, Flags: 1}},
		{jute.OpGetData, &jute.PathWatchRequest{Path: "/a", Watch: true}},
		{jute.OpGetChildren, &jute.PathWatchRequest{Path: "/a", Watch: true}},
		{jute.OpExists, &jute.PathWatchRequest{Path: "/a/b", Watch: true}},
	}
	for i, r := range reqs {
		c.Request(int32(i+1), r.op, r.body)
		if h := c.Reply(nil); h.Err != jute.OK {
			t.Fatalf("request %d: %v", i+1, h.Err)
		}
	}
	return c
}

// TestAdminResponsesShapedAsZooKeepers runs every command against a
// standalone zkraft holding the captured responses' state and compares
// each response's shape (fields, top-level order, types) with ZooKeeper's. The
// commands that describe the JVM (environment, system properties, trace
// masks) and monitor,
// whose ZooKeeper form adds hundreds of internal metrics, are checked
// separately.
func TestAdminResponsesShapedAsZooKeepers(t *testing.T) {
	ts := startServer(t)
	adminClientState(t, ts)
	skip := map[string]bool{"environment": true, "get_trace_mask": true, "set_trace_mask": true, "monitor": true,
		"system_properties": true}
	for _, name := range adminCommandNames() {
		if skip[name] {
			continue
		}
		want, err := os.ReadFile(filepath.Join(zkAdminDir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		got := NewAdmin(ts.srv).Response(name)
		if g, w := shapeOf(t, got), shapeOf(t, string(want)); g != w {
			t.Errorf("%s:\n got shape %s\nwant shape %s\nresponse:\n%s", name, g, w, got)
		}
	}
	for _, alias := range []string{"mntr", "srvr", "cons", "wchc", "wchp", "wchs", "isro", "conf", "config", "envi", "env", "lead", "lsnp", "icfg", "obsr", "orst", "crst", "srst", "stat"} {
		c, ok := adminCommandByName(alias)
		if !ok {
			t.Fatalf("alias %s unknown", alias)
		}
		if got := NewAdmin(ts.srv).Response(alias); !strings.Contains(got, `"command" : "`+c.names[0]+`"`) {
			t.Errorf("alias %s answered as\n%s", alias, got)
		}
	}
	unknown, _ := os.ReadFile(filepath.Join(zkAdminDir, "unknown-nosuch.json"))
	if got := NewAdmin(ts.srv).Response("nosuch"); got != string(unknown) {
		t.Errorf("unknown command:\n%s\nwant\n%s", got, unknown)
	}
}

// TestAdminMonitorFieldsAreZooKeepers: every monitor field zkraft reports
// is one ZooKeeper's monitor has, with the same JSON type, and the figures
// agree with the state.
func TestAdminMonitorFieldsAreZooKeepers(t *testing.T) {
	ts := startServer(t)
	adminClientState(t, ts)
	want, err := os.ReadFile(filepath.Join(zkAdminDir, "monitor.json"))
	if err != nil {
		t.Fatal(err)
	}
	zk := map[string]string{}
	for _, f := range parseOrdered(t, want) {
		zk[f.key] = valueShape(t, f.val)
	}
	got := parseOrdered(t, []byte(NewAdmin(ts.srv).Response("monitor")))
	values := map[string]any{}
	for _, f := range got {
		if s, ok := zk[f.key]; !ok || s != valueShape(t, f.val) {
			t.Errorf("monitor field %s (%s): ZooKeeper has %q", f.key, valueShape(t, f.val), s)
		}
		values[f.key] = f.val
	}
	for k, v := range map[string]any{"server_state": "standalone", "ephemerals_count": jsonNumber("1"),
		"watch_count": jsonNumber("3"), "num_alive_connections": jsonNumber("1"), "znode_count": jsonNumber("8")} {
		if values[k] != v {
			t.Errorf("monitor %s = %v, want %v", k, values[k], v)
		}
	}
}

// TestAdminHandler covers the HTTP surface: the listing, JSON with its
// content type and length, unknown names (200 with the error, as
// ZooKeeper 3.8), other methods and paths outside the command URL.
func TestAdminHandler(t *testing.T) {
	ts := startServer(t)
	hs := httptest.NewServer(NewAdmin(ts.srv).Handler("/commands"))
	defer hs.Close()
	get := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	listing, _ := os.ReadFile(filepath.Join(zkAdminDir, "listing.html"))
	if resp, body := get("GET", "/commands"); resp.StatusCode != 200 || body != string(listing) {
		t.Errorf("listing: %s\n%s", resp.Status, body)
	}
	if resp, body := get("GET", "/commands/"); resp.StatusCode != 200 || body != string(listing) {
		t.Errorf("listing with a slash: %s", resp.Status)
	}
	resp, body := get("GET", "/commands/ruok?x=1")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" ||
		body != "{\n  \"command\" : \"ruok\",\n  \"error\" : null\n}" {
		t.Errorf("ruok: %s %q %q", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	if resp, body := get("GET", "/commands/RUOK"); resp.StatusCode != 200 || !strings.Contains(body, `"error" : "Unknown command: RUOK"`) {
		t.Errorf("command names are case sensitive: %s %s", resp.Status, body)
	}
	if resp, _ := get("POST", "/commands/ruok"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %s", resp.Status)
	}
	for _, p := range []string{"/", "/command", "/commandsx/ruok", "/metrics"} {
		if resp, _ := get("GET", p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s", p, resp.Status)
		}
	}
	hs2 := httptest.NewServer(NewAdmin(ts.srv).Handler("zk/"))
	defer hs2.Close()
	r2, err := http.Get(hs2.URL + "/zk/isro")
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if !strings.Contains(string(b2), `"read_only" : false`) {
		t.Errorf("admin.commandURL=zk/: %s", b2)
	}
}

// TestAdminStatefulCommands: the reset commands reset, dump and the watch
// listings name the session, and auth failures are counted.
func TestAdminStatefulCommands(t *testing.T) {
	ts := startServer(t)
	c := adminClientState(t, ts)
	if s := shapeOf(t, NewAdmin(ts.srv).Response("server_stats")); !strings.Contains(s, "packets_received:number") {
		t.Fatalf("server_stats shape %s", s)
	}
	if ts.srv.Stats().PacketsReceived == 0 {
		t.Fatal("no packets counted")
	}
	NewAdmin(ts.srv).Response("stat_reset")
	if n := ts.srv.Stats().PacketsReceived; n != 0 {
		t.Fatalf("stat_reset left %d packets", n)
	}
	sid := fmt.Sprint(ts.srv.Connections()[0].SessionID)
	for cmd, want := range map[string][]string{
		"dump":            {`"` + sid + `" : [ "/a/e" ]`, `[ ` + sid + ` ]`},
		"watches":         {`"` + sid + `" : [ `},
		"watches_by_path": {`"/a" : [ ` + sid + ` ]`, `"/a/b" : [ ` + sid + ` ]`},
		"connections":     {`"session_id" : ` + sid, `"last_operation" : "EXIS"`},
	} {
		got := NewAdmin(ts.srv).Response(cmd)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %s:\n%s", cmd, w, got)
			}
		}
	}
	NewAdmin(ts.srv).Response("crst")
	for _, cn := range ts.srv.Connections() {
		if cn.Received != 0 {
			t.Fatal("connection_stat_reset left counts")
		}
	}
	c.Request(100, jute.OpAuth, &jute.AuthPacket{Scheme: "nosuchscheme", Auth: []byte("x")})
	c.Reply(nil)
	for _, cmd := range []string{"srvr", "mntr"} {
		if got := NewAdmin(ts.srv).Response(cmd); !strings.Contains(got, `"auth_failed_count" : 1`) {
			t.Errorf("%s: auth failure not counted:\n%s", cmd, got)
		}
	}
	keys := []string{}
	for _, f := range parseOrdered(t, []byte(NewAdmin(ts.srv).Response("environment"))) {
		keys = append(keys, f.key)
	}
	sort.Strings(keys)
	if !strings.Contains(strings.Join(keys, ","), "zookeeper.version") {
		t.Errorf("environment keys %v", keys)
	}
}

// TestAdminServerStatsDirSizes: server_stats reports the data directory's
// size and the log directory's (dataLogDir) each of its own, as dirs does.
func TestAdminServerStatsDirSizes(t *testing.T) {
	dataDir, logDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "snap"), make([]byte, 10), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "log"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *session.Config) {
		c.Env = map[string]string{"dataDir": dataDir, "dataLogDir": logDir}
	})
	var stats jsonObj
	for _, f := range parseOrdered(t, []byte(NewAdmin(ts.srv).Response("server_stats"))) {
		if f.key == "server_stats" {
			stats = f.val.(jsonObj)
		}
	}
	got := map[string]any{}
	for _, f := range stats {
		got[f.key] = f.val
	}
	if got["data_dir_size"] != jsonNumber("10") || got["log_dir_size"] != jsonNumber("1000") {
		t.Fatalf("data_dir_size %v, log_dir_size %v; want 10 and 1000", got["data_dir_size"], got["log_dir_size"])
	}
}
