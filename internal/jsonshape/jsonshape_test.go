package jsonshape

import "testing"

func TestOf(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a" : 1, "b" : [ {"c" : "x"} ], "d" : null, "e" : true}`:     `{a:number,b:[{c:string}],d:null,e:bool}`,
		`{"m" : {"7205" : [ ], "7206" : [ 1 ]}, "p" : {"/a" : [ 2 ]}}`: `{m:{*:[number]},p:{*:[number]}}`,
		`{ }`: `{}`,
		`[ ]`: `[]`,
	} {
		got, err := Of([]byte(doc))
		if err != nil || got != want {
			t.Errorf("Of(%s) = %q, %v; want %q", doc, got, err, want)
		}
	}
	for _, bad := range []string{`{"a" : }`, `{} {}`, `[1, 2`} {
		if _, err := Of([]byte(bad)); err == nil {
			t.Errorf("Of(%s) accepted", bad)
		}
	}
}
