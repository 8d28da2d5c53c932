package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/go-zookeeper/zk"
)

// maxBody bounds a request body: a znode's data (jute.maxbuffer, 1 MiB by
// default) as JSON text with room to spare.
const maxBody = 8 << 20

// apiError is the body of every failed API request.
type apiError struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"` // ZooKeeper's error name, when it said no
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers a plain error.
func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// zkCodes names go-zookeeper's errors as ZooKeeper does and gives each an
// HTTP status.
var zkCodes = []struct {
	err    error
	code   string
	status int
}{
	{zk.ErrNoNode, "NoNode", http.StatusNotFound},
	{zk.ErrNoAuth, "NoAuth", http.StatusForbidden},
	{zk.ErrBadVersion, "BadVersion", http.StatusConflict},
	{zk.ErrNodeExists, "NodeExists", http.StatusConflict},
	{zk.ErrNotEmpty, "NotEmpty", http.StatusConflict},
	{zk.ErrNoChildrenForEphemerals, "NoChildrenForEphemerals", http.StatusBadRequest},
	{zk.ErrInvalidACL, "InvalidACL", http.StatusBadRequest},
	{zk.ErrBadArguments, "BadArguments", http.StatusBadRequest},
	{zk.ErrInvalidPath, "BadArguments", http.StatusBadRequest},
	{zk.ErrSessionExpired, "SessionExpired", http.StatusUnauthorized},
	{zk.ErrAuthFailed, "AuthFailed", http.StatusUnauthorized},
	{zk.ErrConnectionClosed, "ConnectionLoss", http.StatusServiceUnavailable},
	{zk.ErrNoServer, "ConnectionLoss", http.StatusServiceUnavailable},
	{zk.ErrClosing, "ConnectionLoss", http.StatusServiceUnavailable},
}

// failZK answers an error from a ZooKeeper call with its ZooKeeper name.
func failZK(w http.ResponseWriter, err error) {
	writeJSON(w, statusOf(err), apiError{Error: err.Error(), Code: codeOf(err)})
}

// statusOf is the HTTP status answering a ZooKeeper call's error.
func statusOf(err error) int {
	for _, c := range zkCodes {
		if errors.Is(err, c.err) {
			return c.status
		}
	}
	return http.StatusInternalServerError
}

// codeOf is ZooKeeper's name for a call's error, "" if it has none.
func codeOf(err error) string {
	for _, c := range zkCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// decodeBody reads a JSON request body into v; it answers and returns
// false when it cannot (413 for a body over maxBody).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	return decodeLimited(w, r, v, maxBody)
}

// sameOrigin refuses a request whose Origin header names another host
// than the one it was sent to (browsers send Origin on every POST).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}
