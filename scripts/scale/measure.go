package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/fourletter"
	"github.com/zkraft/zkraft/internal/testing/benchcluster"
)

// snapTimes are a member's snapshottime counters from mntr: how many
// snapshots it wrote and their total milliseconds.
type snapTimes struct{ count, sumMs int64 }

func mntrSnapTimes(m *benchcluster.Member) snapTimes {
	out := fourletter.Ask(m.ClientAddr, "mntr")
	n, _ := strconv.ParseInt(fourletter.Field(out, "zk_cnt_snapshottime\t"), 10, 64)
	s, _ := strconv.ParseInt(fourletter.Field(out, "zk_sum_snapshottime\t"), 10, 64)
	return snapTimes{n, s}
}

// zxid is the member's last zxid (srvr), -1 when it does not answer.
func zxid(m *benchcluster.Member) int64 {
	z, err := strconv.ParseInt(fourletter.Field(fourletter.Ask(m.ClientAddr, "srvr"), "Zxid: "), 0, 64)
	if err != nil {
		return -1
	}
	return z
}

// snapshotSize is the size of the newest snapshot file in the member's
// data directory: ZooKeeper's version-2/snapshot.<zxid>, zkraft's
// Raft snapshots (snapshots/<id>/state.bin).
func snapshotSize(m *benchcluster.Member, zookeeper bool) int64 {
	var files []string
	if zookeeper {
		files, _ = filepath.Glob(filepath.Join(m.Dir, "version-2", "snapshot.*"))
	} else {
		_ = filepath.Walk(m.Dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && strings.Contains(p, "snapshot") && !strings.HasSuffix(p, ".json") {
				files = append(files, p)
			}
			return nil
		})
	}
	var newest time.Time
	var size int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(newest) {
			newest, size = st.ModTime(), st.Size()
		}
	}
	return size
}

// forceSnapshots has every zkraft member take a snapshot now, all at once
// (the AdminServer's snapshot command with streaming=false).
func forceSnapshots(e *benchcluster.Ensemble) error {
	var wg sync.WaitGroup
	errs := make([]error, len(e.Members))
	for i, m := range e.Members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, "http://"+m.AdminAddr+"/commands/snapshot?streaming=false", nil)
			req.Header.Set("Authorization", "ip")
			resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req)
			if err != nil {
				errs[i] = fmt.Errorf("member %d snapshot: %w", m.ID, err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs[i] = fmt.Errorf("member %d snapshot: %s", m.ID, resp.Status)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// pump drives setData from 32 goroutines on a second session until stop
// is closed: enough writes for ZooKeeper to reach its snapCount soon.
func pump(addr string, stop <-chan struct{}) error {
	c, _, err := zk.Connect([]string{addr}, 40*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		return fmt.Errorf("pump: %w", err)
	}
	defer c.Close()
	data := make([]byte, 100)
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		p := fmt.Sprintf("/scale-pump-%02d", i)
		if _, err := c.Create(p, data, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			return fmt.Errorf("pump: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Set(p, data, -1); err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

// getChildren lists path n times from a session of its own and returns
// the median and the longest call, and the children counted.
func getChildren(addr, path string, n int) (median, longest time.Duration, children int, err error) {
	c, _, err := zk.Connect([]string{addr}, 40*time.Second, zk.WithLogger(quiet{}), zk.WithMaxBufferSize(64<<20))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("getChildren: %w", err)
	}
	defer c.Close()
	var took []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		kids, _, err := c.Children(path)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("getChildren %s: %w", path, err)
		}
		took = append(took, time.Since(start))
		children = len(kids)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	return took[len(took)/2], took[len(took)-1], children, nil
}

// wipe removes everything in a member's directory but its myid and
// zoo.cfg (and its log, kept for reading): a member with a new disk.
func wipe(m *benchcluster.Member) error {
	entries, err := os.ReadDir(m.Dir)
	if err != nil {
		return fmt.Errorf("wipe: %w", err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "myid", "zoo.cfg", "server.log":
			continue
		}
		if err := os.RemoveAll(filepath.Join(m.Dir, e.Name())); err != nil {
			return fmt.Errorf("wipe: %w", err)
		}
	}
	return nil
}

// catchUp kills follower f, wipes its data and starts it again, and
// returns how long it took until it served with at least minNodes znodes
// and the zxid the leader had when f was started.
func catchUp(e *benchcluster.Ensemble, f *benchcluster.Member, minNodes int, limit time.Duration) (time.Duration, error) {
	f.Kill()
	if err := wipe(f); err != nil {
		return 0, err
	}
	l := e.Leader()
	if l == nil {
		return 0, fmt.Errorf("%s: no leader", e.Name)
	}
	target := zxid(l)
	start := time.Now()
	if err := f.Start(); err != nil {
		return 0, err
	}
	for time.Since(start) < limit {
		if ok, _, _ := f.Serving(minNodes); ok && zxid(f) >= target {
			return time.Since(start), nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("%s member %d not caught up after %v; its log ends:\n%s", e.Name, f.ID, limit, benchcluster.LogTail(f.LogPath(), 20))
}

// timed runs bin with args and returns its wall time (also when it
// fails).
func timed(bin string, args ...string) (time.Duration, error) {
	start := time.Now()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		return time.Since(start), fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, out)
	}
	return time.Since(start), nil
}

// fileSize is the size of the file at path (0 if absent).
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// memAvailable is the machine's MemAvailable in bytes (/proc/meminfo).
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	f := strings.Fields(fourletter.Field(string(b), "MemAvailable:"))
	if len(f) == 0 {
		return -1
	}
	kb, _ := strconv.ParseInt(f[0], 10, 64)
	return kb << 10
}

// guardMemory ends the run (cleanups kill the members) when the machine
// has less than floor bytes available, before it swaps or kills.
func guardMemory(floor int64) {
	go func() {
		for range time.Tick(500 * time.Millisecond) {
			if a := memAvailable(); a >= 0 && a < floor {
				benchcluster.Fail("scale", fmt.Errorf("only %d MiB of memory left (-min-available %d MiB): stopped", a>>20, floor>>20))
			}
		}
	}()
}
