package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// TestSnapshotSaveStopsAtTheSizeTold: a member whose body runs past the
// snapshot_size it announced is refused as soon as one byte too many
// arrives, instead of being written to the disk to its end (a body
// without end filled it); nothing is left beside FILE.
func TestSnapshotSaveStopsAtTheSizeTold(t *testing.T) {
	const most = 256 << 20 // what the member would send
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("last_zxid", "0x5")
		w.Header().Set("snapshot_size", "100")
		chunk := make([]byte, 64<<10)
		for sent.Load() < most && r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "backup.snap")
	var out, errw bytes.Buffer
	app := &cli.App{Commands: []*cli.Command{snapshotSaveCommand()}, Writer: &out, ErrWriter: &errw}
	done := make(chan error, 1)
	go func() {
		done <- app.Run([]string{"zkraft", "save", "--admin-addr", strings.TrimPrefix(srv.URL, "http://"), file})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the member said 100") {
			t.Errorf("save of an overlong body: %v, want a size mismatch", err)
		}
	case <-time.After(time.Minute):
		srv.CloseClientConnections()
		t.Fatal("save of an overlong body still receiving after a minute")
	}
	// Loopback buffers hold a few MiB the member got rid of; the rest it
	// could not send, as save stopped reading.
	if n := sent.Load(); n >= most/2 {
		t.Errorf("save read %d MiB of a body announced as 100 bytes", n>>20)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in the directory: %v", left)
	}
}

// TestSnapshotSaveStalledMember: a member that stops sending in the
// middle of a snapshot fails save once --timeout passes without a byte,
// instead of hanging it; nothing is left beside FILE.
func TestSnapshotSaveStalledMember(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("last_zxid", "0x5")
		w.Header().Set("snapshot_size", "100")
		_, _ = w.Write([]byte("ZKSN"))
		w.(http.Flusher).Flush()
		select { // stalled
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	var out, errw bytes.Buffer
	app := &cli.App{Commands: []*cli.Command{snapshotSaveCommand()}, Writer: &out, ErrWriter: &errw}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- app.Run([]string{"zkraft", "save", "--admin-addr", strings.TrimPrefix(srv.URL, "http://"),
			"--timeout", "500ms", filepath.Join(dir, "backup.snap")})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no data for 500ms") {
			t.Errorf("save from a stalled member: %v, want no data for 500ms", err)
		}
		t.Logf("failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(20 * time.Second):
		t.Fatal("save from a stalled member still waiting after 20s (--timeout 500ms)")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in the directory: %v", left)
	}
}
