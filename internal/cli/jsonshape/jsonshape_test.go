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
	top, err := OfTopOrdered([]byte(`{"z" : {"b" : 1, "a" : [ {"d" : 1, "c" : 2} ]}, "y" : 1}`))
	if want := `{z:{a:[{c:number,d:number}],b:number},y:number}`; err != nil || top != want {
		t.Errorf("OfTopOrdered = %q, %v; want %q", top, err, want)
	}
	for _, bad := range []string{`{"a" : }`, `{} {}`, `[1, 2`} {
		if _, err := Of([]byte(bad)); err == nil {
			t.Errorf("Of(%s) accepted", bad)
		}
	}
}
