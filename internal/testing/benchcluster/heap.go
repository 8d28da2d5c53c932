package benchcluster

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Heap asks a zkraft member started with Config.Pprof for its heap in
// use and goroutine stacks right after a collection (the heap profile's
// gc=1): what the process holds, apart from garbage not yet collected
// and freed pages not yet returned to the OS.
func (m *Member) Heap() (int64, error) {
	if m.PprofAddr == "" {
		return 0, fmt.Errorf("benchcluster: member %d serves no profiles", m.ID)
	}
	cl := http.Client{Timeout: 30 * time.Second}
	resp, err := cl.Get("http://" + m.PprofAddr + "/debug/pprof/heap?debug=1&gc=1")
	if err != nil {
		return 0, fmt.Errorf("benchcluster: heap profile: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("benchcluster: heap profile: %w", err)
	}
	return parseHeapProfile(string(b))
}

// parseHeapProfile sums HeapInuse and Stack from the comment lines at the
// end of a debug=1 heap profile.
func parseHeapProfile(profile string) (int64, error) {
	var heap, stack int64
	for _, line := range strings.Split(profile, "\n") {
		switch {
		case strings.HasPrefix(line, "# HeapInuse = "):
			heap, _ = strconv.ParseInt(strings.TrimPrefix(line, "# HeapInuse = "), 10, 64)
		case strings.HasPrefix(line, "# Stack = "):
			if f := strings.Fields(strings.TrimPrefix(line, "# Stack = ")); len(f) > 0 {
				stack, _ = strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	if heap == 0 {
		return 0, fmt.Errorf("benchcluster: no HeapInuse in the heap profile")
	}
	return heap + stack, nil
}

// CPUProfile takes a CPU profile of a zkraft member started with
// Config.Pprof over d and writes it to w.
func (m *Member) CPUProfile(d time.Duration, w io.Writer) error {
	if m.PprofAddr == "" {
		return fmt.Errorf("benchcluster: member %d serves no profiles", m.ID)
	}
	cl := http.Client{Timeout: d + 30*time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", m.PprofAddr, int(d.Round(time.Second)/time.Second)))
	if err != nil {
		return fmt.Errorf("benchcluster: CPU profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("benchcluster: CPU profile: %s", resp.Status)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("benchcluster: CPU profile: %w", err)
	}
	return nil
}
