package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// Bounds on export and import. An export holds the subtree in memory, so
// it is refused past maxExportNodes nodes or maxExportBytes of data; an
// import's body (the file, base64 data and all) is at most maxImportBody
// bytes and maxImportNodes nodes, so every export imports.
const (
	maxExportNodes = 50_000
	maxExportBytes = 16 << 20
	maxImportNodes = maxExportNodes
	maxImportBody  = 32 << 20
)

// errExportTooBig is a subtree past the export bounds.
var errExportTooBig = fmt.Errorf("more than %d nodes or %d MiB of data: too large to export from the console (export a part)",
	maxExportNodes, maxExportBytes>>20)

// handleExport answers a subtree as a zkjson.Tree file to download: each
// node's data and ACL as the login reads them, parents first; ephemeral
// nodes are left out and listed in Skipped. Digest ACL entries have their
// hash hidden, as on the page, unless the request asks for digests=keep
// (a file to import elsewhere with the same digest ACLs).
func (c *Console) handleExport(w http.ResponseWriter, r *http.Request) {
	root := queryPath(r)
	slot := &turn{c: c}
	defer slot.end()
	if err := slot.take(r.Context()); err != nil {
		failBusy(w, err)
		return
	}
	t, err := exportTree(r.Context(), current(r).zk, root, r.URL.Query().Get("digests") == "keep")
	if errors.Is(err, errExportTooBig) {
		fail(w, http.StatusRequestEntityTooLarge, err.Error())
		return
	}
	if err != nil {
		failZK(w, err)
		return
	}
	// The turn lasts until the answer is written, so that clients slow
	// to read do not each hold one: it is written in one call, which the
	// AdminServer's write deadline bounds. The tree goes once encoded.
	body, err := json.Marshal(t)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	name := path.Base(root)
	if root == "/" {
		name = "root"
	}
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "zk-" + name + ".json"}))
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(body); err == nil {
		_, _ = w.Write([]byte{'\n'}) // as writeJSON ends it
	}
}

// exportTree reads root's subtree as a file; digest entries keep their
// hash only with keepDigests.
func exportTree(ctx context.Context, conn *zkc, root string, keepDigests bool) (*zkjson.Tree, error) {
	t := &zkjson.Tree{Format: zkjson.TreeFormat, Root: root, Nodes: []zkjson.TreeNode{}}
	var bytes int
	err := walk(ctx, conn, root, func(p string, st *zk.Stat) error {
		if st.EphemeralOwner != 0 {
			t.Skipped = append(t.Skipped, p)
			return nil
		}
		if len(t.Nodes) >= maxExportNodes {
			return errExportTooBig
		}
		data, _, err := conn.Get(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if bytes += len(data); bytes > maxExportBytes {
			return errExportTooBig
		}
		acl, _, err := conn.GetACL(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rel := ""
		if p != root {
			rel = p[len(root):]
			if root != "/" {
				rel = rel[1:]
			}
		}
		list := zkjson.ACLOf(acl)
		if !keepDigests {
			for i, a := range list {
				if a.Scheme == "digest" {
					user, _, _ := strings.Cut(a.ID, ":")
					list[i].ID = user + ":" + hiddenHash
				}
			}
		}
		t.Nodes = append(t.Nodes, zkjson.TreeNode{Path: rel, Data: data, ACL: list})
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	if len(t.Skipped) > maxListed {
		t.Skipped = t.Skipped[:maxListed]
	}
	return t, nil
}

// decodeLimited is decodeBody for a body of up to limit bytes; a larger
// one answers 413.
func decodeLimited(w http.ResponseWriter, r *http.Request, v any, limit int64) bool {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		fail(w, http.StatusUnsupportedMediaType, "send application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d MiB", limit>>20))
			return false
		}
		fail(w, http.StatusBadRequest, "bad request body: "+err.Error())
		return false
	}
	return true
}
