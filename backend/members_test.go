package backend

import (
	"reflect"
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
		{"server.0", "h:1:2"},
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
