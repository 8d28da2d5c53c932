package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resolveWithMyID applies zoo.cfg text over the defaults with a data
// directory whose myid holds myid, and resolves the members.
func resolveWithMyID(t *testing.T, text, myid string) (Config, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(myid), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := apply(t, "dataDir="+dir+"\n"+text)
	if err != nil {
		return st, err
	}
	return st, st.resolveMembers(noFlags{})
}

// TestServerIDsAsZooKeeper: zoo.cfg's server.N and myid take every id
// ZooKeeper 3.9 does (Long.parseLong: 300, 0, negative, the largest long),
// and refuse what it refuses: not a long, myid -1 (its unset id), and with
// extended types an id above 254 (EphemeralType.validateServerId).
func TestServerIDsAsZooKeeper(t *testing.T) {
	members := func(ids ...string) string {
		var b strings.Builder
		for i, id := range ids {
			b.WriteString("server." + id + "=127.0.0.1:" + string(rune('1'+i)) + "888:3888\n")
		}
		return b.String()
	}
	for _, c := range []struct {
		ids  []string
		myid string
		want int64
	}{
		{[]string{"1", "2", "300"}, "300\n", 300},
		{[]string{"1", "300", "999"}, "999", 999},
		{[]string{"0", "1", "2"}, "0\n", 0},
		{[]string{"-5", "1", "2"}, " -5 \n", -5},
		{[]string{"1", "9223372036854775807"}, "9223372036854775807\n", 9223372036854775807},
		{[]string{"1", "2", "257"}, "257\nignored second line\n", 257},
	} {
		st, err := resolveWithMyID(t, members(c.ids...), c.myid)
		if err != nil || st.ServerID != c.want {
			t.Errorf("servers %v, myid %q: id %d, %v; want %d", c.ids, c.myid, st.ServerID, err, c.want)
		}
	}
	for _, c := range []struct {
		text, myid, want string
	}{
		{members("1", "x"), "1", "server.x"},
		{members("1", "99999999999999999999"), "1", "server.99999999999999999999"},
		{members("1", "2"), "x", "myid: not a server id \"x\": want a whole number"},
		{members("1", "2"), "1.5", "want a whole number"},
		{members("1", "2"), "99999999999999999999", "want a whole number"},
		{members("1", "-1"), "-1", "unset id"},
		{members("1", "2"), "", "want a whole number"},
		{members("1", "300"), "3", "server id 3 has no server.3 line"},
		{"extendedTypesEnabled=true\n" + members("1", "255"), "255", "at most 254"},
		{"extendedTypesEnabled=true\n" + members("1", "300"), "300", "at most 254"},
	} {
		if _, err := resolveWithMyID(t, c.text, c.myid); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q, myid %q: %v; want an error with %q", c.text, c.myid, err, c.want)
		}
	}
	if st, err := resolveWithMyID(t, "extendedTypesEnabled=true\n"+members("1", "254"), "254"); err != nil || st.ServerID != 254 {
		t.Errorf("extended types, id 254: %d, %v", st.ServerID, err)
	}
}
