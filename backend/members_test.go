package backend

import (
	"reflect"
	"strings"
	"testing"
)

// TestServerLinesRoundTrip parses zoo.cfg member lines, renders them as
// /zookeeper/config shows them and reads that back.
func TestServerLinesRoundTrip(t *testing.T) {
	lines := []struct{ key, value string }{
		{"server.1", "10.0.0.1:2888:3888"},
		{"server.2", "[fe80::1]:2889:3889:participant;2182"},
		{"server.3", "host3:2890:3890:observer;10.0.0.3:2183"},
	}
	var peers []Peer
	for _, l := range lines {
		p, err := ParseServerLine(l.key, l.value)
		if err != nil {
			t.Fatalf("%s=%s: %v", l.key, l.value, err)
		}
		peers = append(peers, p)
	}
	want := []Peer{
		{ID: 1, Addr: "10.0.0.1:2888", ElectionPort: 3888},
		{ID: 2, Addr: "[fe80::1]:2889", ElectionPort: 3889, ClientAddr: "0.0.0.0:2182"},
		{ID: 3, Addr: "host3:2890", ElectionPort: 3890, Observer: true, ClientAddr: "10.0.0.3:2183"},
	}
	if !reflect.DeepEqual(peers, want) {
		t.Fatalf("parsed %+v\nwant %+v", peers, want)
	}
	text := RenderMembers([]Peer{peers[2], peers[0], peers[1]}) + "version=10000000a\n"
	back, version, err := ParseMembers(text)
	if err != nil || version != 0x10000000a || !reflect.DeepEqual(back, want) {
		t.Fatalf("ParseMembers(%q) = %+v, %#x, %v", text, back, version, err)
	}
}

// TestServerLineErrors checks the lines refused.
func TestServerLineErrors(t *testing.T) {
	for _, l := range []struct{ key, value string }{
		{"server.x", "h:1:2"},
		{"srv.1", "h:1:2"},
		{"server.1", "h"},
		{"server.1", "h:notaport:2"},
		{"server.1", "h:1:x"},
		{"server.1", "h:1:2:voter"},
		{"server.1", "[fe80::1:1:2"},
	} {
		if p, err := ParseServerLine(l.key, l.value); err == nil {
			t.Errorf("%s=%s accepted: %+v", l.key, l.value, p)
		}
	}
}

// TestServerIDsAsZooKeeper: a server id is what ZooKeeper's
// Long.parseLong takes (QuorumMaj): 0, 300, negative and the largest long
// are ids, and the line round-trips through /zookeeper/config; what it
// throws NumberFormatException for is refused, naming the key.
func TestServerIDsAsZooKeeper(t *testing.T) {
	for _, c := range []struct {
		key  string
		want int64
	}{
		{"server.0", 0}, {"server.255", 255}, {"server.256", 256}, {"server.300", 300}, {"server.999", 999},
		{"server.-5", -5}, {"server.+7", 7}, {"server.007", 7},
		{"server.9223372036854775807", 9223372036854775807}, {"server.-9223372036854775808", -9223372036854775808},
	} {
		p, err := ParseServerLine(c.key, "h:1:2:observer;3")
		if err != nil || p.ID != c.want {
			t.Errorf("%s: id %d, %v; want %d", c.key, p.ID, err, c.want)
			continue
		}
		back, _, err := ParseMembers(RenderMembers([]Peer{p}))
		if err != nil || len(back) != 1 || back[0] != p {
			t.Errorf("%s: round trip %+v, %v", c.key, back, err)
		}
	}
	for _, key := range []string{
		"server.", "server.x", "server.1.5", "server.0x10", "server. 5", "server.1_000",
		"server.9223372036854775808", "server.99999999999999999999", "server.-9223372036854775809",
	} {
		if p, err := ParseServerLine(key, "h:1:2"); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %+v, %v; want an error naming the key", key, p, err)
		}
	}
}

// TestRenderMembersOrdersWideIDs: members are listed by numeric id, as
// ZooKeeper's QuorumMaj.toString does.
func TestRenderMembersOrdersWideIDs(t *testing.T) {
	text := RenderMembers([]Peer{{ID: 300, Addr: "h:1"}, {ID: -5, Addr: "h:2"}, {ID: 44, Addr: "h:3"}})
	want := "server.-5=h:2:0:participant\nserver.44=h:3:0:participant\nserver.300=h:1:0:participant\n"
	if text != want {
		t.Fatalf("RenderMembers = %q, want %q", text, want)
	}
}
