package znode

import "testing"

func TestValidatePath(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{"/", true},
		{"/a", true},
		{"/a/b/c", true},
		{"/a.b", true},
		{"/...", true},
		{"/a..", true},
		{"/.a", true},
		{"/a/.b/..c", true},
		{"/zookeeper", true},
		{"/ä/日本", true},
		{"/a b", true},
		{"/\u00a0", true},
		{"/\ufffd", false},
		{"/\uffef", true},
		{"/\ufff0", false},
		{"/\ud7ff", true},
		{"/\ue000", false},
		{"/\uf8ff", false},
		{"/\uf900", true},
		{"/😀", false},
		{"/a\x7f", false},
		{"/a\u0085", false},
		{"/a\u00a0", true},
		{"/a\x1f", false},
		{"/a\tb", false},
		{"/a\x00", false},
		{"/a\xff", false},
		{"", false},
		{"a", false},
		{"a/b", false},
		{"//", false},
		{"/a/", false},
		{"/a//b", false},
		{"/.", false},
		{"/..", false},
		{"/a/./b", false},
		{"/a/../b", false},
		{"/a/..", false},
	}
	for _, c := range cases {
		if err := ValidatePath(c.path); (err == nil) != c.ok {
			t.Errorf("ValidatePath(%q) = %v", c.path, err)
		}
	}
}
