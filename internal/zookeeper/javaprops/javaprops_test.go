package javaprops

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	p, err := Parse(strings.NewReader("# comment\n! also\n a = 1 \nb:2\n\na=3\n"))
	if err != nil || strings.Join(p.Keys, ",") != "a,b" || p.Values["a"] != "3" || p.Values["b"] != "2" {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := Parse(strings.NewReader("novalue\n")); err == nil {
		t.Fatal("a line without = was accepted")
	}
	if _, err := Load("/nonexistent/zoo.cfg"); err == nil {
		t.Fatal("a missing file was accepted")
	}
}
