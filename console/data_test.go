package console

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestDataBytesExact: create and set take the data as base64 and store
// exactly those bytes (256 random bytes, Latin-1 text, bytes that are not
// UTF-8 and that a JSON string would have mangled); a plain data string
// still works as before; data and dataBase64 together, or base64 that is
// not, are refused and write nothing.
func TestDataBytesExact(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr)
	b := newBrowser(t, startConsole(t, addr, true))
	b.login("alice", "pw")
	random := make([]byte, 256)
	for i := range random {
		random[i] = byte(rand.IntN(256))
	}
	random[0], random[1] = 0xff, 0xfe // never valid UTF-8
	latin1 := []byte("caf\xe9 cr\xe8me br\xfbl\xe9e")
	b64 := base64.StdEncoding.EncodeToString
	if st, out := b.post("/api/create", map[string]any{"path": "/bin", "dataBase64": b64(random), "mode": "persistent"}); st != http.StatusOK {
		t.Fatalf("create with dataBase64: %d %v", st, out)
	}
	if data, _, _ := other.Get("/bin"); !bytes.Equal(data, random) {
		t.Fatalf("created %x, want %x", data, random)
	}
	_, node := b.get("/api/node?path=/bin")
	if node["data"] != b64(random) || node["utf8"] != false || node["size"] != 256.0 || node["partial"] != nil {
		t.Fatalf("node: utf8 %v size %v partial %v", node["utf8"], node["size"], node["partial"])
	}
	if st, out := b.post("/api/set", map[string]any{"path": "/bin", "dataBase64": b64(latin1), "version": 0}); st != http.StatusOK {
		t.Fatalf("set with dataBase64: %d %v", st, out)
	}
	if data, _, _ := other.Get("/bin"); !bytes.Equal(data, latin1) {
		t.Fatalf("set %q, want %q", data, latin1)
	}
	for _, bad := range []map[string]any{
		{"path": "/bin", "data": "x", "dataBase64": b64([]byte("y")), "version": 1},
		{"path": "/bin", "dataBase64": "not base64!", "version": 1},
	} {
		if st, out := b.post("/api/set", bad); st != http.StatusBadRequest {
			t.Fatalf("set %v: %d %v, want 400", bad, st, out)
		}
	}
	if st, _ := b.post("/api/create", map[string]any{"path": "/bad", "dataBase64": "%%%", "mode": "persistent"}); st != http.StatusBadRequest {
		t.Fatalf("create with bad base64: %d, want 400", st)
	}
	if ok, _, _ := other.Exists("/bad"); ok {
		t.Fatal("a refused create made /bad")
	}
	if data, st, _ := other.Get("/bin"); !bytes.Equal(data, latin1) || st.Version != 1 {
		t.Fatalf("a refused set wrote: %q version %d", data, st.Version)
	}
	if st, out := b.post("/api/set", map[string]any{"path": "/bin", "data": "plain", "version": 1}); st != http.StatusOK {
		t.Fatalf("set with data: %d %v", st, out)
	}
	if data, _, _ := other.Get("/bin"); string(data) != "plain" {
		t.Fatalf("set with data wrote %q", data)
	}
}

// TestNodeBoundedSlice: api/node?max= answers at most max bytes of a
// large node with its whole size, and offset the next slice; without max
// the whole data comes, as before.
func TestNodeBoundedSlice(t *testing.T) {
	addr := startZK(t)
	other := dialZK(t, addr)
	big := bytes.Repeat([]byte("0123456789"), 100_000) // 1 MB, below jute.maxbuffer
	big[len(big)-1] = 0xc3                             // a cut multi-byte sequence: not UTF-8
	if _, err := other.Create("/big", big, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, startConsole(t, addr, false))
	b.login("alice", "pw")
	st, node := b.get("/api/node?path=/big&max=65536")
	if st != http.StatusOK || node["size"] != float64(len(big)) || node["partial"] != true || node["utf8"] != false {
		t.Fatalf("bounded node: %d size %v partial %v utf8 %v", st, node["size"], node["partial"], node["utf8"])
	}
	if node["data"] != base64.StdEncoding.EncodeToString(big[:65536]) {
		t.Fatalf("bounded data: %d base64 chars, want the first 64 KiB", len(node["data"].(string)))
	}
	_, next := b.get("/api/node?path=/big&offset=960000&max=65536")
	if next["offset"] != 960000.0 || next["data"] != base64.StdEncoding.EncodeToString(big[960000:]) {
		t.Fatalf("last slice: offset %v, %d base64 chars", next["offset"], len(next["data"].(string)))
	}
	_, all := b.get("/api/node?path=/big")
	if all["partial"] != nil || all["data"] != base64.StdEncoding.EncodeToString(big) {
		t.Fatalf("whole node: partial %v", all["partial"])
	}
}

// TestSliceDataHugeMax: a max near MaxInt with an offset (a client's
// query) made offset+max overflow to a negative end and the slice panic;
// it means "the rest of the data".
func TestSliceDataHugeMax(t *testing.T) {
	data := []byte("0123456789")
	for _, q := range []string{
		"offset=1&max=9223372036854775807",
		"offset=9&max=9223372036854775800",
		"offset=10&max=9223372036854775807",
		"offset=99&max=9223372036854775807",
	} {
		var out nodeJSON
		sliceData(&out, httptest.NewRequest(http.MethodGet, "/api/node?path=/x&"+q, nil), data)
		if want := data[out.Offset:]; !bytes.Equal(out.Data, want) || out.Partial != (out.Offset > 0) {
			t.Errorf("%s: data %q partial %v, want %q", q, out.Data, out.Partial, want)
		}
	}
}
