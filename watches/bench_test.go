package watches

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// countWatcher counts notifications without allocating.
type countWatcher struct {
	n   int
	ids []jute.Id
}

func (w *countWatcher) Notify(string, jute.EventType, int64) { w.n++ }
func (w *countWatcher) Ids() []jute.Id                       { return w.ids }

// BenchmarkTriggerFanout: one trigger reaching 10k watchers on one path.
func BenchmarkTriggerFanout(b *testing.B) {
	const n = 10000
	ws := make([]*countWatcher, n)
	for i := range ws {
		ws[i] = &countWatcher{ids: []jute.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: fmt.Sprintf("u%d:x", i%10)}}}
	}
	b.Run("persistent/open-acl", func(b *testing.B) {
		r := New()
		for _, w := range ws {
			r.AddPersistent("/hot", w, false)
		}
		b.ReportAllocs()
		for b.Loop() {
			r.Trigger("/hot", jute.EventNodeDataChanged, 1, nil)
		}
	})
	b.Run("persistent/read-filter", func(b *testing.B) {
		r := New()
		for _, w := range ws {
			r.AddPersistent("/hot", w, false)
		}
		acl := []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "digest", ID: "u3:x"}}}
		b.ReportAllocs()
		for b.Loop() {
			r.Trigger("/hot", jute.EventNodeDataChanged, 1, acl)
		}
	})
	b.Run("oneshot/readd", func(b *testing.B) {
		r := New()
		b.ReportAllocs()
		for b.Loop() {
			for _, w := range ws {
				r.AddData("/hot", w)
			}
			r.Trigger("/hot", jute.EventNodeDataChanged, 1, nil)
		}
	})
	b.Run("recursive-ancestor", func(b *testing.B) {
		r := New()
		for _, w := range ws {
			r.AddPersistent("/", w, true)
		}
		b.ReportAllocs()
		for b.Loop() {
			r.Trigger("/a/b/c/d", jute.EventNodeCreated, 1, nil)
		}
	})
}
