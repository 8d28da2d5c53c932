package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/internal/cli/zkjson"
)

// Bounds on subtree operations (copy, move, recursive delete, import).
const (
	// maxJobNodes bounds the subtree a survey (and so a job) takes on.
	maxJobNodes = 1_000_000
	// A subtree of at most maxAtomicNodes nodes and maxAtomicBytes bytes
	// (data plus paths, estimated) is changed in one multi: all or
	// nothing. The multi must fit jute.maxbuffer (1 MiB by default).
	maxAtomicNodes = 1000
	maxAtomicBytes = 512 << 10
	// A larger one goes in multis of at most batchOps operations and
	// batchBytes bytes, one after another: not atomic.
	batchOps   = 200
	batchBytes = 256 << 10
	// nodeOverhead estimates what a node costs a multi besides its data
	// and path (headers, ACL, version).
	nodeOverhead = 64
)

// surveyJSON answers GET api/survey: what a copy, move or delete of Path
// would take on, for its confirmation. Count and Fingerprint go back with
// the job, which refuses if the subtree is not that any more.
type surveyJSON struct {
	Path           string   `json:"path"`
	Count          int      `json:"count"`
	Bytes          int64    `json:"bytes"`
	Fingerprint    string   `json:"fingerprint"`
	Atomic         bool     `json:"atomic"` // small enough for one multi
	Ephemerals     []string `json:"ephemerals"`
	EphemeralCount int      `json:"ephemeralCount"`
}

// errTooBig is a subtree past maxJobNodes.
var errTooBig = fmt.Errorf("more than %d nodes: too large for the console (use zkraft shell deleteall or a client)", maxJobNodes)

// survey walks root and sums it.
func survey(ctx context.Context, conn *zkc, root string) (surveyJSON, error) {
	out := surveyJSON{Path: root, Ephemerals: []string{}}
	fp := newFingerprint()
	var estimate int64
	err := walk(ctx, conn, root, func(p string, st *zk.Stat) error {
		if fp.count >= maxJobNodes {
			return errTooBig
		}
		fp.add(p, st)
		estimate += int64(st.DataLength) + int64(2*len(p)) + nodeOverhead
		if st.EphemeralOwner != 0 {
			if len(out.Ephemerals) < maxListed {
				out.Ephemerals = append(out.Ephemerals, p)
			}
			out.EphemeralCount++
		}
		return nil
	}, nil)
	if err != nil {
		return out, err
	}
	out.Count, out.Bytes, out.Fingerprint = fp.count, fp.bytes, fp.sum()
	out.Atomic = fp.count <= maxAtomicNodes && estimate <= maxAtomicBytes
	return out, nil
}

// handleSurvey answers what an operation on a subtree would take on.
func (c *Console) handleSurvey(w http.ResponseWriter, r *http.Request) {
	t := &turn{c: c}
	defer t.end()
	if err := t.take(r.Context()); err != nil {
		failBusy(w, err)
		return
	}
	out, err := survey(r.Context(), current(r).zk, queryPath(r))
	t.end()
	if errors.Is(err, errTooBig) {
		fail(w, http.StatusRequestEntityTooLarge, err.Error())
		return
	}
	if err != nil {
		failZK(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// expectJSON is what the confirmation showed of a subtree.
type expectJSON struct {
	Count       int    `json:"count"`
	Fingerprint string `json:"fingerprint"`
}

// jobRequest is the body of POST api/jobs.
type jobRequest struct {
	Kind   string       `json:"kind"` // delete, copy, move, import
	From   string       `json:"from"`
	To     string       `json:"to"`
	Expect *expectJSON  `json:"expect"`
	Tree   *zkjson.Tree `json:"tree"` // import
}

// errChanged is a subtree that is not the one the confirmation showed.
var errChanged = errors.New("the subtree changed since it was listed; confirm again")

// errEphemeralMove refuses to move a subtree holding ephemeral nodes:
// they belong to other sessions, and the source cannot go without them.
var errEphemeralMove = errors.New("the subtree holds ephemeral nodes, which cannot be moved (they belong to their sessions); copy it instead, which leaves them out")

// handleStartJob checks a subtree operation and starts it as a job of the
// login. What it can refuse before writing anything it refuses here: a
// bad request, a source that is "/" or holds the target, a target that
// exists, a login that already runs a job.
func (c *Console) handleStartJob(w http.ResponseWriter, r *http.Request) {
	var req jobRequest
	if !decodeLimited(w, r, &req, maxImportBody) {
		return
	}
	l := current(r)
	j := &job{kind: req.Kind, from: req.From, to: req.To, phase: "checking"}
	var work func(ctx context.Context, j *job) error
	switch req.Kind {
	case "delete", "copy", "move":
		if req.From == "" || req.From == "/" || !strings.HasPrefix(req.From, "/") {
			fail(w, http.StatusBadRequest, "from must be a path below /")
			return
		}
		if req.Expect == nil {
			fail(w, http.StatusBadRequest, "expect (the survey the confirmation showed) is required")
			return
		}
		if req.Kind == "delete" {
			j.to = ""
			work = func(ctx context.Context, j *job) error { return runDelete(ctx, l.zk, j, req.From, *req.Expect) }
			break
		}
		if !c.targetFree(w, l, req.To) {
			return
		}
		if req.To == req.From || strings.HasPrefix(req.To, req.From+"/") {
			fail(w, http.StatusBadRequest, "the target is inside the source")
			return
		}
		move := req.Kind == "move"
		work = func(ctx context.Context, j *job) error {
			return runCopy(ctx, l.zk, j, req.From, req.To, *req.Expect, move)
		}
	case "import":
		if req.Tree == nil {
			fail(w, http.StatusBadRequest, "tree (the subtree file) is required")
			return
		}
		if err := req.Tree.Check(maxImportNodes); err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, zkjson.ErrTreeTooLarge) {
				status = http.StatusRequestEntityTooLarge
			}
			fail(w, status, "import: "+err.Error())
			return
		}
		if user := hiddenDigest(req.Tree); user != "" {
			fail(w, http.StatusBadRequest, "import: the file hides the digest hash of "+user+
				" (exported without digest hashes): export it again with them, or edit that ACL entry")
			return
		}
		if !c.targetFree(w, l, req.To) {
			return
		}
		j.from = req.Tree.Root
		tree := req.Tree
		work = func(ctx context.Context, j *job) error { return runImport(ctx, l.zk, j, tree, req.To) }
	default:
		fail(w, http.StatusBadRequest, "kind must be delete, copy, move or import")
		return
	}
	if err := c.jobs.start(l, j, work); err != nil {
		fail(w, http.StatusConflict, err.Error())
		return
	}
	c.cfg.Logger.Sugar().Infow("console job", "user", l.user, "kind", j.kind, "from", j.from, "to", j.to, "job", j.id)
	writeJSON(w, http.StatusAccepted, j.json())
}

// targetFree answers (and returns false) unless to is an absolute path
// that does not exist.
func (c *Console) targetFree(w http.ResponseWriter, l *login, to string) bool {
	if to == "" || to == "/" || !strings.HasPrefix(to, "/") || strings.HasSuffix(to, "/") {
		fail(w, http.StatusBadRequest, "to must be a path below /")
		return false
	}
	ok, _, err := l.zk.Exists(to)
	if err != nil {
		failZK(w, err)
		return false
	}
	if ok {
		writeJSON(w, http.StatusConflict, apiError{Error: to + " exists: choose a path that does not", Code: "NodeExists"})
		return false
	}
	return true
}

// handleJobs lists the login's jobs.
func (c *Console) handleJobs(w http.ResponseWriter, r *http.Request) {
	out := []jobJSON{}
	for _, j := range c.jobs.list(current(r)) {
		out = append(out, j.json())
	}
	writeJSON(w, http.StatusOK, struct {
		Jobs []jobJSON `json:"jobs"`
	}{out})
}

// handleJob answers one job's progress.
func (c *Console) handleJob(w http.ResponseWriter, r *http.Request) {
	j, ok := c.jobs.get(current(r), r.PathValue("id"))
	if !ok {
		fail(w, http.StatusNotFound, "no such job")
		return
	}
	writeJSON(w, http.StatusOK, j.json())
}

// handleCancelJob cancels a job: it stops before its next write (a multi
// already sent completes).
func (c *Console) handleCancelJob(w http.ResponseWriter, r *http.Request) {
	j, ok := c.jobs.get(current(r), r.PathValue("id"))
	if !ok {
		fail(w, http.StatusNotFound, "no such job")
		return
	}
	j.cancel()
	writeJSON(w, http.StatusOK, j.json())
}

// subtreeRoutes adds the subtree operations to the console's routes.
func (c *Console) subtreeRoutes(mux *http.ServeMux, p string) {
	mux.HandleFunc("GET "+p+"/api/survey", c.read(c.handleSurvey))
	mux.HandleFunc("GET "+p+"/api/export", c.read(c.handleExport))
	mux.HandleFunc("GET "+p+"/api/jobs", c.read(c.handleJobs))
	mux.HandleFunc("GET "+p+"/api/jobs/{id}", c.read(c.handleJob))
	mux.HandleFunc("POST "+p+"/api/jobs", c.write(c.handleStartJob, true))
	mux.HandleFunc("POST "+p+"/api/jobs/{id}/cancel", c.write(c.handleCancelJob, false))
}

// hiddenDigest is the user of the first digest entry in t whose hash the
// export hid, "" if none.
func hiddenDigest(t *zkjson.Tree) string {
	for _, n := range t.Nodes {
		for _, a := range n.ACL {
			if user, hash, _ := strings.Cut(a.ID, ":"); a.Scheme == "digest" && hash == hiddenHash {
				return user
			}
		}
	}
	return ""
}
