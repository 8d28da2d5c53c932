// Package benchplot draws the latency plots of `make bench` as SVG
// written with fmt alone (no dependency, viewable in a browser or on
// GitHub): a Figure is a row of Panels side by side, each a line chart of
// named Series, with axes, ticks and a legend. Each series is one
// <polyline> whose data-series attribute is its name, so a test (or a
// reader of the file) can find it.
package benchplot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is one line: points (X[i], Y[i]).
type Series struct {
	Name   string
	Color  string // any SVG colour; "" picks one from the palette
	Dashed bool
	X, Y   []float64
}

// Tick is one labelled position on an axis.
type Tick struct {
	At    float64
	Label string
}

// Panel is one chart.
type Panel struct {
	Title, XLabel, YLabel string
	// XTicks replaces the automatic ticks of the x axis (e.g. percentile
	// labels on a transformed axis); its first and last give the range.
	XTicks []Tick
	// LogY draws the y axis on a log scale (points at or below 0 are
	// left out): latencies of two servers an order of magnitude apart
	// stay readable.
	LogY   bool
	Series []Series
}

// Figure is panels side by side under a title.
type Figure struct {
	Title  string
	Panels []Panel
}

// Geometry of one panel, in SVG user units.
const (
	panelW, panelH = 520, 340
	marginL        = 64
	marginR        = 16
	marginT        = 48 // the panel's title and legend
	marginB        = 44
	titleH         = 28
)

// palette colours series that name none.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"}

// WriteSVG writes f as a standalone SVG document.
func (f Figure) WriteSVG(w io.Writer) error {
	var b bytes.Buffer
	width, height := panelW*max(len(f.Panels), 1), panelH+titleH
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="19" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`+"\n", width/2, esc(f.Title))
	for i, p := range f.Panels {
		fmt.Fprintf(&b, `<g transform="translate(%d,%d)">`+"\n", i*panelW, titleH)
		p.write(&b)
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("benchplot: %w", err)
	}
	return nil
}

// scale maps data to the plot area.
type scale struct {
	x0, x1, y0, y1 float64 // data range (y in log10 if logY)
	logY           bool
}

func (s scale) px(x float64) float64 {
	return marginL + (x-s.x0)/(s.x1-s.x0)*(panelW-marginL-marginR)
}

func (s scale) py(y float64) float64 {
	if s.logY {
		y = math.Log10(y)
	}
	return panelH - marginB - (y-s.y0)/(s.y1-s.y0)*(panelH-marginT-marginB)
}

// usable reports whether (x, y) can be drawn.
func (s scale) usable(x, y float64) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0) && !math.IsNaN(y) && !math.IsInf(y, 0) && (!s.logY || y > 0)
}

// ranges finds the panel's data range and ticks.
func (p *Panel) ranges() (scale, []Tick, []Tick) {
	s := scale{x0: math.Inf(1), x1: math.Inf(-1), y0: math.Inf(1), y1: math.Inf(-1), logY: p.LogY}
	for _, se := range p.Series {
		for i := range min(len(se.X), len(se.Y)) {
			x, y := se.X[i], se.Y[i]
			if !s.usable(x, y) {
				continue
			}
			if p.LogY {
				y = math.Log10(y)
			}
			s.x0, s.x1 = math.Min(s.x0, x), math.Max(s.x1, x)
			s.y0, s.y1 = math.Min(s.y0, y), math.Max(s.y1, y)
		}
	}
	if math.IsInf(s.x0, 1) { // no data
		s.x0, s.x1, s.y0, s.y1 = 0, 1, 0, 1
	}
	xt := p.XTicks
	if len(xt) > 0 {
		s.x0, s.x1 = math.Min(s.x0, xt[0].At), math.Max(s.x1, xt[len(xt)-1].At)
	} else {
		xt = linearTicks(&s.x0, &s.x1)
	}
	var yt []Tick
	if p.LogY {
		s.y0, s.y1 = math.Floor(s.y0), math.Ceil(s.y1)
		if s.y1 == s.y0 {
			s.y1++
		}
		for e := s.y0; e <= s.y1; e++ {
			yt = append(yt, Tick{At: math.Pow(10, e), Label: num(math.Pow(10, e))})
		}
	} else {
		s.y0 = math.Min(s.y0, 0)
		yt = linearTicks(&s.y0, &s.y1)
	}
	if s.x1 == s.x0 {
		s.x1 = s.x0 + 1
	}
	return s, xt, yt
}

// linearTicks widens [lo, hi] to round numbers and returns about five
// ticks across it.
func linearTicks(lo, hi *float64) []Tick {
	if *hi <= *lo {
		*hi = *lo + 1
	}
	step := math.Pow(10, math.Floor(math.Log10((*hi-*lo)/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (*hi-*lo)/(step*m) <= 6 {
			step *= m
			break
		}
	}
	*lo, *hi = math.Floor(*lo/step)*step, math.Ceil(*hi/step)*step
	var ts []Tick
	for v := *lo; v <= *hi+step/2; v += step {
		ts = append(ts, Tick{At: v, Label: num(v)})
	}
	return ts
}

// num formats a tick value briefly.
func num(v float64) string {
	if math.Abs(v) < 1e-9 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func (p *Panel) write(b *bytes.Buffer) {
	s, xt, yt := p.ranges()
	left, right, top, bottom := float64(marginL), float64(panelW-marginR), float64(marginT), float64(panelH-marginB)
	fmt.Fprintf(b, `<text x="%d" y="14" text-anchor="middle" font-size="12" font-weight="bold">%s</text>`+"\n", panelW/2, esc(p.Title))
	for _, t := range yt {
		y := s.py(t.At)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, right, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-4, y+4, esc(t.Label))
	}
	for _, t := range xt {
		x := s.px(t.At)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", x, top, x, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, bottom+14, esc(t.Label))
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#444"/>`+"\n", left, top, right-left, bottom-top)
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", (left+right)/2, panelH-8, esc(p.XLabel))
	fmt.Fprintf(b, `<text transform="translate(14,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (top+bottom)/2, esc(p.YLabel))
	for i, se := range p.Series {
		color := se.Color
		if color == "" {
			color = palette[i%len(palette)]
		}
		dash := ""
		if se.Dashed {
			dash = ` stroke-dasharray="5,3"`
		}
		var pts []string
		for j := range min(len(se.X), len(se.Y)) {
			if s.usable(se.X[j], se.Y[j]) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", s.px(se.X[j]), s.py(se.Y[j])))
			}
		}
		fmt.Fprintf(b, `<polyline data-series="%s" points="%s" fill="none" stroke="%s" stroke-width="1.6"%s><title>%s</title></polyline>`+"\n",
			esc(se.Name), strings.Join(pts, " "), esc(color), dash, esc(se.Name))
		if len(pts) == 1 { // a line of one point draws nothing: mark it
			x, y, _ := strings.Cut(pts[0], ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", x, y, esc(color))
		}
		// The legend: a row of samples above the plot area.
		lx, ly := left+float64(i%3)*150, 26+float64(i/3)*13
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", lx, ly, lx+18, ly, esc(color), dash)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", lx+22, ly+4, esc(se.Name))
	}
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
