package netguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveHTTP serves h with t on a guarded loopback listener; it returns
// the address.
func serveHTTP(t *testing.T, tm HTTPTimeouts, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := tm.Server(h, nil)
	go func() {
		_ = srv.Serve(Wrap(ln, Config{Name: "admin", Limits: Limits{MaxConns: 100, MaxConnsPerIP: 100}}))
	}()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// closedWithin reports whether the server closes c within d (whatever it
// answers first).
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func dial(t *testing.T, addr, send string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, send); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHTTPDropsStalledRequests: a request whose body never comes (whether
// or not the handler reads it), headers that never end, and a connection
// that says nothing are all closed by the deadlines.
func TestHTTPDropsStalledRequests(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/commands/ruok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "imok") })
	mux.HandleFunc("/console/api/login", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, "ok")
	})
	addr := serveHTTP(t, IdleTimeouts(300*time.Millisecond), mux)
	for name, send := range map[string]string{
		"body never comes, handler ignores it": "GET /commands/ruok HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
		"body never comes, handler reads it":   "POST /console/api/login HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
		"headers never end":                    "GET /commands/ruok HTTP/1.1\r\nHost: x\r\n",
		"nothing sent":                         "",
		"idle after a request":                 "GET /commands/ruok HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if c := dial(t, addr, send); !closedWithin(c, 20*time.Second) {
				t.Error("the connection is still open after 20 s")
			}
		})
	}
}

// TestHTTPStreamOutlivesDeadlines: a response that keeps writing (the
// console's server-sent events) runs well past every deadline.
func TestHTTPStreamOutlivesDeadlines(t *testing.T) {
	const events = 8
	addr := serveHTTP(t, IdleTimeouts(200*time.Millisecond), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "no Flusher", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range events {
			fmt.Fprintf(w, "data: %d\n\n", i)
			flusher.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}))
	resp, err := http.Get("http://" + addr + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			n++
		}
	}
	if n != events {
		t.Errorf("read %d events over %v, want %d (the stream was cut)", n, time.Since(start), events)
	}
}

// TestHTTPDropsStalledReader: a client that stops reading a response is
// dropped once a write has waited the write deadline.
func TestHTTPDropsStalledReader(t *testing.T) {
	failed := make(chan error, 1)
	addr := serveHTTP(t, IdleTimeouts(200*time.Millisecond), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for range 1 << 12 {
			if _, err := w.Write(chunk); err != nil {
				failed <- err
				return
			}
		}
		failed <- nil
	}))
	dial(t, addr, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	select {
	case err := <-failed:
		if err == nil {
			t.Fatal("4 GiB written to a client that reads nothing")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write to a client that stopped reading still blocks after 30 s")
	}
}
