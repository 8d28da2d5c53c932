package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

func TestResultTableAndJSON(t *testing.T) {
	cfg := &Config{Workload: "mixed", Servers: []string{"127.0.0.1:1"}, Sessions: 2, Inflight: 4, Keys: 10, ReadRatio: 0.5}
	r := &run{cfg: cfg, win: newWindow()}
	r.win.start.Store(100)
	a, b := r.newRecorder(), r.newRecorder()
	for i := range int64(1000) {
		a.done(classGet, 100+i, 100+i+1_000_000, jute.OK) // 1 ms
		b.done(classSet, 100+i, 100+i+5_000_000, jute.OK) // 5 ms
	}
	b.done(classSet, 200, 300, jute.ErrNoNode)
	b.done(classSet, 200, 300, jute.ErrNoNode)
	a.failIn(classGet, 200, jute.OK, "timeout")
	a.done(classGet, 50, 60, jute.ErrBadVersion) // before the window: ignored
	res := r.result(2 * time.Second)

	if len(res.Ops) != 2 || res.Ops[0].Op != "getData" || res.Ops[1].Op != "setData" {
		t.Fatalf("rows %+v", res.Ops)
	}
	get, set := res.Ops[0], res.Ops[1]
	if get.Ops != 1000 || get.OpsPerSec != 500 || set.Ops != 1000 {
		t.Fatalf("counts: %+v %+v", get, set)
	}
	if get.P50Ms < 0.98 || get.P50Ms > 1.02 || set.P99Ms < 4.9 || set.P99Ms > 5.1 {
		t.Fatalf("latencies: get p50 %v, set p99 %v", get.P50Ms, set.P99Ms)
	}
	if res.Errors["-101 no node"] != 2 || res.Errors["timeout"] != 1 || res.TotalErrors() != 3 {
		t.Fatalf("errors %v", res.Errors)
	}
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"getData", "setData", "-101 no node×2", "timeout×1", "p99.9 ms"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"workload", "ops", "errors", "seconds", "read_ratio", "keys"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, js.String())
		}
	}
}
