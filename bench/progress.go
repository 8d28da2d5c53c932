package bench

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Progress prints a live line once a second while a benchmark runs: on a
// terminal one line rewritten in place, otherwise one line per second.
type Progress struct {
	w    io.Writer
	tty  bool
	stop chan struct{}
	done chan struct{}
}

// NewProgress returns a Progress writing to w; tty selects in-place updates.
func NewProgress(w io.Writer, tty bool) *Progress { return &Progress{w: w, tty: tty} }

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// start begins printing for r.
func (p *Progress) start(r *run) {
	p.stop = make(chan struct{})
	p.done = make(chan struct{})
	go p.loop(r)
}

// finish stops printing and ends the line.
func (p *Progress) finish() {
	close(p.stop)
	<-p.done
}

func (p *Progress) loop(r *run) {
	defer close(p.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	began := time.Now()
	var lastLive int64
	var prev HistSnapshot
	lastAt := began
	for {
		select {
		case <-p.stop:
			if p.tty {
				fmt.Fprintln(p.w)
			}
			return
		case now := <-tick.C:
			var live, nerr int64
			var cur HistSnapshot
			for _, rec := range r.recorders() {
				live += rec.live.Load()
				nerr += rec.nerr.Load()
				for c := range numClasses {
					rec.snapshot(c, &cur)
				}
			}
			rate := float64(live-lastLive) / now.Sub(lastAt).Seconds()
			d := cur.Sub(&prev)
			phase := "measure"
			if r.win.start.Load() > nowNanos() {
				phase = "warm-up"
			}
			lat := "p50 -  p99 -"
			if d.Total > 0 {
				lat = fmt.Sprintf("p50 %.3fms  p99 %.3fms", ms(float64(d.Quantile(0.5))), ms(float64(d.Quantile(0.99))))
			}
			line := fmt.Sprintf("%6.0fs %-7s %10.0f ops/s  measured %d  %s  errors %d",
				now.Sub(began).Seconds(), phase, rate, cur.Total, lat, nerr)
			if p.tty {
				fmt.Fprintf(p.w, "\r\033[K%s", line)
			} else {
				fmt.Fprintln(p.w, line)
			}
			lastLive, lastAt, prev = live, now, cur
		}
	}
}
