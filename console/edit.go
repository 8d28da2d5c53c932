package console

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// createModes are the page's names for create's modes. "ephemeral" nodes
// belong to the login's ZooKeeper session: they go when it logs out or
// its login idles out.
var createModes = map[string]int32{
	"persistent":                zk.FlagPersistent,
	"ephemeral":                 zk.FlagEphemeral,
	"sequential":                zk.FlagSequence,
	"ephemeral-sequential":      zk.FlagEphemeral | zk.FlagSequence,
	"container":                 zk.FlagContainer,
	"ttl":                       zk.FlagTTL,
	"persistent-sequential-ttl": zk.FlagPersistentSequentialWithTTL,
}

// createRequest is the body of POST api/create.
type createRequest struct {
	Path       string    `json:"path"`
	Data       string    `json:"data"`       // written as its UTF-8 bytes
	DataBase64 *string   `json:"dataBase64"` // or: the bytes, base64
	Mode       string    `json:"mode"`
	TTLMs      int64     `json:"ttl"`
	ACL        []aclJSON `json:"acl"` // empty: world:anyone:cdrwa
}

// maxTTL is the largest TTL a TTL node may have, in ms
// (EphemeralType.TTL.maxValue(): 40 bits).
const maxTTL = 1<<40 - 1

// handleCreate creates a node in the chosen mode.
func (c *Console) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if !decodeBody(w, r, &req) || dataTooLarge(w, req.Data) {
		return
	}
	data, err := requestData(req.Data, req.DataBase64)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	flags, ok := createModes[req.Mode]
	if !ok {
		fail(w, http.StatusBadRequest, "unknown mode "+req.Mode)
		return
	}
	acl := zk.WorldACL(zk.PermAll)
	if len(req.ACL) > 0 {
		if acl, err = fromACL(req.ACL, nil); err != nil {
			fail(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	conn := current(r).zk
	var created string
	switch flags {
	case zk.FlagContainer:
		created, err = conn.CreateContainer(req.Path, data, flags, acl)
	case zk.FlagTTL, zk.FlagPersistentSequentialWithTTL:
		if req.TTLMs <= 0 || req.TTLMs > maxTTL {
			// Checked here: as a time.Duration, a TTL past 2^63 ns wraps,
			// maybe into one the server would accept.
			writeJSON(w, http.StatusBadRequest, apiError{
				Error: fmt.Sprintf("ttl must be positive and cannot be larger than: %d", int64(maxTTL)),
				Code:  "BadArguments",
			})
			return
		}
		created, err = conn.CreateTTL(req.Path, data, flags, acl, time.Duration(req.TTLMs)*time.Millisecond)
	default:
		created, err = conn.Create(req.Path, data, flags, acl)
	}
	if err != nil {
		failZK(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Path string `json:"path"`
	}{created})
}

// setRequest is the body of POST api/set: the data and the version the
// page showed, so a change made meanwhile is not overwritten. The page
// sends dataBase64 (every byte as it is); data is written as its UTF-8
// bytes.
type setRequest struct {
	Path       string  `json:"path"`
	Data       string  `json:"data"`
	DataBase64 *string `json:"dataBase64"`
	Version    *int32  `json:"version"`
}

// conflictJSON answers a write that lost to another: the node as it is now.
type conflictJSON struct {
	apiError
	Current *nodeJSON `json:"current,omitempty"`
}

// handleSet sets a node's data at the version the page showed. A version
// that no longer matches answers 409 with the node as it is now.
func (c *Console) handleSet(w http.ResponseWriter, r *http.Request) {
	var req setRequest
	if !decodeBody(w, r, &req) || dataTooLarge(w, req.Data) {
		return
	}
	if req.Version == nil {
		fail(w, http.StatusBadRequest, "version is required (-1 would overwrite any change)")
		return
	}
	data, err := requestData(req.Data, req.DataBase64)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	conn := current(r).zk
	st, err := conn.Set(req.Path, data, *req.Version)
	if err == zk.ErrBadVersion {
		out := conflictJSON{apiError: apiError{Error: "the node changed since it was loaded", Code: "BadVersion"}}
		if data, st, err := conn.Get(req.Path); err == nil {
			out.Current = &nodeJSON{Path: req.Path, Stat: zkjson.StatOf(st)}
			sliceData(out.Current, r, data)
		}
		writeJSON(w, http.StatusConflict, out)
		return
	}
	if err != nil {
		failZK(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Stat *zkjson.Stat `json:"stat"`
	}{zkjson.StatOf(st)})
}

// deleteRequest is the body of POST api/delete. A recursive delete names
// the paths the confirmation listed; if the subtree is not those paths any
// more, nothing is deleted.
type deleteRequest struct {
	Path      string   `json:"path"`
	Version   *int32   `json:"version"`
	Recursive bool     `json:"recursive"`
	Expect    []string `json:"expect"`
}

// handleDelete deletes a node, or a subtree children first once the
// caller has confirmed exactly what goes.
func (c *Console) handleDelete(w http.ResponseWriter, r *http.Request) {
	var req deleteRequest
	if !decodeBody(w, r, &req) {
		return
	}
	conn := current(r).zk
	if !req.Recursive {
		v := int32(-1)
		if req.Version != nil {
			v = *req.Version
		}
		if err := conn.Delete(req.Path, v); err != nil {
			failZK(w, err)
			return
		}
		writeJSON(w, http.StatusOK, struct {
			Deleted []string `json:"deleted"`
		}{[]string{req.Path}})
		return
	}
	t := &turn{c: c}
	defer t.end()
	paths, truncated, err := subtree(r.Context(), conn, req.Path, t)
	if err != nil {
		failTurnOrZK(w, err)
		return
	}
	t.end()
	if truncated || !slices.Equal(paths, req.Expect) {
		writeJSON(w, http.StatusConflict, struct {
			apiError
			Paths     []string `json:"paths"`
			Truncated bool     `json:"truncated"`
		}{apiError{Error: "the subtree changed since it was listed; confirm again", Code: "Changed"}, paths, truncated})
		return
	}
	deleted := make([]string, 0, len(paths))
	for _, p := range paths {
		if err := conn.Delete(p, -1); err != nil && err != zk.ErrNoNode {
			writeJSON(w, statusOf(err), struct {
				apiError
				Deleted []string `json:"deleted"`
			}{apiError{Error: p + ": " + err.Error(), Code: codeOf(err)}, deleted})
			return
		}
		deleted = append(deleted, p)
	}
	writeJSON(w, http.StatusOK, struct {
		Deleted []string `json:"deleted"`
	}{deleted})
}

// setACLRequest is the body of POST api/setacl.
type setACLRequest struct {
	Path    string    `json:"path"`
	ACL     []aclJSON `json:"acl"`
	Version *int32    `json:"version"` // the node's aversion the page showed
}

// handleSetACL replaces a node's ACL at the ACL version the page showed.
func (c *Console) handleSetACL(w http.ResponseWriter, r *http.Request) {
	var req setACLRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if req.Version == nil {
		fail(w, http.StatusBadRequest, "version (the ACL version) is required")
		return
	}
	conn := current(r).zk
	now, _, err := conn.GetACL(req.Path)
	if err != nil {
		failZK(w, err)
		return
	}
	acl, err := fromACL(req.ACL, now)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	st, err := conn.SetACL(req.Path, acl, *req.Version)
	if err != nil {
		failZK(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Stat *zkjson.Stat `json:"stat"`
	}{zkjson.StatOf(st)})
}
