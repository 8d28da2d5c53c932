package soak

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// znodeState is one znode as a member serves it.
type znodeState struct {
	data string
	stat zk.Stat
}

// readTree reads every znode a member serves, over a session on that
// member alone, after a sync (so the member has applied everything the
// leader had committed when the sync arrived).
func readTree(addr string) (map[string]znodeState, error) {
	conn, err := connect([]string{addr})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.Sync("/"); err != nil {
		return nil, fmt.Errorf("sync on %s: %w", addr, err)
	}
	var (
		mu    sync.Mutex
		tree  = map[string]znodeState{}
		errs  []error
		wg    sync.WaitGroup
		slots = make(chan struct{}, 16)
	)
	var visit func(p string)
	visit = func(p string) {
		defer wg.Done()
		slots <- struct{}{}
		data, st, err := conn.Get(p)
		var children []string
		if err == nil && st.NumChildren > 0 {
			children, _, err = conn.Children(p)
		}
		<-slots
		mu.Lock()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s on %s: %w", p, addr, err))
		} else {
			tree[p] = znodeState{data: string(data), stat: *st}
		}
		mu.Unlock()
		for _, c := range children {
			wg.Add(1)
			go visit(path.Join(p, c))
		}
	}
	wg.Add(1)
	visit("/")
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return tree, nil
}

// compareTrees returns the differences between each tree and the first
// one's (at most a few per member), or nothing if they are all the same.
func compareTrees(ids []int, trees []map[string]znodeState) []string {
	var diffs []string
	ref := trees[0]
	for i := 1; i < len(trees); i++ {
		var d []string
		for p, a := range ref {
			b, ok := trees[i][p]
			switch {
			case !ok:
				d = append(d, fmt.Sprintf("%s: on member %d, not on member %d", p, ids[0], ids[i]))
			case a != b:
				d = append(d, fmt.Sprintf("%s: member %d has %q %+v, member %d %q %+v", p, ids[0], a.data, a.stat, ids[i], b.data, b.stat))
			}
		}
		for p := range trees[i] {
			if _, ok := ref[p]; !ok {
				d = append(d, fmt.Sprintf("%s: on member %d, not on member %d", p, ids[i], ids[0]))
			}
		}
		sort.Strings(d)
		if len(d) > 5 {
			d = append(d[:5], fmt.Sprintf("(%d more)", len(d)-5))
		}
		diffs = append(diffs, d...)
	}
	return diffs
}

// finalReads reads every register once more, linearizably (sync, then
// getData), through addrs, once everything has healed. The operations go
// to the end of each register's history.
func finalReads(w *workload, addrs []string, keys []string) ([]*op, error) {
	conn, err := connect(addrs)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var res []*op
	for _, k := range keys {
		o := &op{client: -1, kind: opSyncRead, key: k, version: -1}
		deadline := time.Now().Add(time.Minute)
		for {
			o.call = w.now()
			_, err = conn.Sync(k)
			if err == nil {
				err = o.read(conn)
			}
			o.ret = w.now()
			if err == nil || errors.Is(err, zk.ErrNoNode) {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("final read of %s: %w", k, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		o.out = outOK
		res = append(res, o)
	}
	return res, nil
}
