package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// liveBytes asks a zkraft started with --pprof-addr addr for its heap in
// use and goroutine stacks right after a collection (the heap profile's
// gc=1): what the process holds, apart from garbage it has not collected
// yet and freed pages not yet returned to the OS.
func liveBytes(addr string) (int64, error) {
	cl := http.Client{Timeout: 30 * time.Second}
	resp, err := cl.Get("http://" + addr + "/debug/pprof/heap?debug=1&gc=1")
	if err != nil {
		return 0, fmt.Errorf("memprobe: heap profile: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("memprobe: heap profile: %w", err)
	}
	var heap, stack int64
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "# HeapInuse = "):
			heap, _ = strconv.ParseInt(strings.TrimPrefix(line, "# HeapInuse = "), 10, 64)
		case strings.HasPrefix(line, "# Stack = "):
			f := strings.Fields(strings.TrimPrefix(line, "# Stack = "))
			if len(f) > 0 {
				stack, _ = strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	if heap == 0 {
		return 0, fmt.Errorf("memprobe: no HeapInuse in the heap profile")
	}
	return heap + stack, nil
}
