package benchplot

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// polylines parses svg as XML and returns each polyline's data-series
// name and its number of points, failing t if it is not well formed.
func polylines(t *testing.T, svg []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	got := map[string]int{}
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = el.Name.Space + " " + el.Name.Local
		}
		if el.Name.Local != "polyline" {
			continue
		}
		name, points := "", ""
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "data-series":
				name = a.Value
			case "points":
				points = a.Value
			}
		}
		got[name] = len(strings.Fields(points))
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Fatalf("root element %q, want svg in the SVG namespace", root)
	}
	return got
}

// TestFigureHasEverySeries: the document is well-formed SVG with one
// polyline per series, named as given (escaped where it must be), with
// every drawable point; points a log axis cannot show are left out.
func TestFigureHasEverySeries(t *testing.T) {
	f := Figure{Title: "write <setData> & co", Panels: []Panel{
		{Title: "latency over time", XLabel: "s", YLabel: "ms", LogY: true, Series: []Series{
			{Name: "ZooKeeper p99", X: []float64{1, 2, 3}, Y: []float64{30, 31, 0}},
			{Name: "zkraft p99", X: []float64{1, 2, 3}, Y: []float64{3, 2.5, 4}, Dashed: true},
		}},
		{Title: "by percentile", XTicks: PercentileTicks(), Series: []Series{
			{Name: "ZooKeeper", X: []float64{PercentileX(0.5), PercentileX(0.99), PercentileX(1)}, Y: []float64{10, 30, 60}},
			{Name: "zkraft <&>", X: []float64{PercentileX(0.5), PercentileX(0.99), PercentileX(1)}, Y: []float64{1, 3, 9}},
		}},
	}}
	var b bytes.Buffer
	if err := f.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	got := polylines(t, b.Bytes())
	want := map[string]int{"ZooKeeper p99": 2, "zkraft p99": 3, "ZooKeeper": 3, "zkraft <&>": 3}
	if len(got) != len(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("series %q has %d points, want %d (all: %v)", name, got[name], n, got)
		}
	}
	for _, label := range []string{"99.9%", "max", "write &lt;setData&gt; &amp; co"} {
		if !bytes.Contains(b.Bytes(), []byte(label)) {
			t.Errorf("no %q in the figure", label)
		}
	}
}

// TestOnePointIsMarked: a series of one point (a run of one second) is
// drawn as a dot, since a polyline of one point shows nothing.
func TestOnePointIsMarked(t *testing.T) {
	var b bytes.Buffer
	f := Figure{Panels: []Panel{{Series: []Series{{Name: "one", Color: "red", X: []float64{1}, Y: []float64{2}}}}}}
	if err := f.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	if got := polylines(t, b.Bytes()); got["one"] != 1 || !bytes.Contains(b.Bytes(), []byte(`<circle `)) {
		t.Fatalf("series %v, no dot in:\n%s", got, b.String())
	}
}

// TestEmptyPanelStillDraws: a panel without data (a run that measured
// nothing) is still a valid document, with no polyline points.
func TestEmptyPanelStillDraws(t *testing.T) {
	var b bytes.Buffer
	if err := (Figure{Panels: []Panel{{LogY: true, Series: []Series{{Name: "none"}}}}}).WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	if got := polylines(t, b.Bytes()); len(got) != 1 || got["none"] != 0 {
		t.Fatalf("series %v", got)
	}
}

func TestPercentileXSpacesTheNines(t *testing.T) {
	for _, c := range []struct{ q, x float64 }{{0, 0}, {0.9, 1}, {0.99, 2}, {0.999, 3}, {1, maxNines}} {
		if got := PercentileX(c.q); got < c.x-1e-9 || got > c.x+1e-9 {
			t.Errorf("PercentileX(%v) = %v, want %v", c.q, got, c.x)
		}
	}
}

func TestLinearTicksAreRound(t *testing.T) {
	lo, hi := 0.0, 9.3
	ts := linearTicks(&lo, &hi)
	if lo != 0 || hi != 10 || len(ts) != 6 || ts[1].Label != "2" {
		t.Fatalf("ticks %v over [%v, %v]", ts, lo, hi)
	}
}
