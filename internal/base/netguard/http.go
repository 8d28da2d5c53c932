package netguard

import (
	"io"
	stdlog "log"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// MaxHeaderBytes bounds an HTTP request's line and headers.
const MaxHeaderBytes = 64 << 10

// maxHeaderTimeout bounds HTTPTimeouts.Header in IdleTimeouts: a browser
// or a scraper sends its headers at once.
const maxHeaderTimeout = 10 * time.Second

// HTTPTimeouts are the deadlines of an HTTP listener's connections. With
// them a connection is dropped when its request's headers or body do not
// come in time, when it sits idle between requests, or when its client
// stops reading the response; none of them cuts a response that streams
// for as long as it makes progress. Zero fields are no deadline.
type HTTPTimeouts struct {
	// Header bounds the request line and headers, from the first byte
	// of the request (http.Server.ReadHeaderTimeout), and a TLS
	// handshake.
	Header time.Duration
	// Request bounds the whole request, body included
	// (http.Server.ReadTimeout): a request that declares a body and never
	// sends it is dropped. A request without a body has its read
	// deadline lifted once its handler starts, so that a response that
	// streams (server-sent events) is not cut, and the server still hears
	// its client go.
	Request time.Duration
	// Idle bounds the wait for the next request on a kept-alive
	// connection (http.Server.IdleTimeout).
	Idle time.Duration
	// Write bounds each write of a response to a client that does not
	// read it: every write and flush moves the deadline Write ahead (a
	// rolling deadline, rather than http.Server.WriteTimeout, which would
	// end a stream or a long download after that time whatever its
	// progress).
	Write time.Duration
}

// IdleTimeouts are the deadlines of a Jetty connector with idle timeout d
// (ZooKeeper's AdminServer, admin.idleTimeout; Jetty's default is 30 s):
// Jetty drops a connection on which nothing moves for d, whether it waits
// for headers, a body, the next request or a reader. The headers get at
// most 10 s.
func IdleTimeouts(d time.Duration) HTTPTimeouts {
	return HTTPTimeouts{Header: min(d, maxHeaderTimeout), Request: d, Idle: d, Write: d}
}

// Server returns an http.Server for h with these deadlines and
// MaxHeaderBytes. net/http's own messages (a failed TLS handshake, a
// malformed request: one per bad connection) go to log at debug level.
// Serve it on a Listener for the connection caps and an accept loop that
// does not stop.
func (t HTTPTimeouts) Server(h http.Handler, log *zap.Logger) *http.Server {
	errLog := stdlog.New(io.Discard, "", 0)
	if log != nil {
		if l, err := zap.NewStdLogAt(log, zap.DebugLevel); err == nil {
			errLog = l
		}
	}
	return &http.Server{
		Handler:           t.Handler(h),
		ReadHeaderTimeout: t.Header,
		ReadTimeout:       t.Request,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          errLog,
	}
}

// Handler wraps h with the per-request deadlines: the read deadline lifted
// for a request without a body, and the rolling write deadline.
func (t HTTPTimeouts) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body == nil || r.Body == http.NoBody {
			_ = rc.SetReadDeadline(time.Time{})
		}
		if t.Write <= 0 {
			h.ServeHTTP(w, r)
			return
		}
		dw := &deadlineWriter{ResponseWriter: w, rc: rc, d: t.Write}
		dw.extend()
		h.ServeHTTP(dw, r)
	})
}

// deadlineWriter moves the connection's write deadline d ahead before each
// write and flush.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

// Write implements http.ResponseWriter.
func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher (server-sent events flush each event).
func (w *deadlineWriter) Flush() {
	w.extend()
	_ = w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
