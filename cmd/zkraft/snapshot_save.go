package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/internal/zookeeper/snapfile"
)

func snapshotSaveCommand() *cli.Command {
	return &cli.Command{
		Name:      "save",
		Usage:     "save a consistent snapshot of a running member's tree to FILE",
		ArgsUsage: "FILE",
		Description: "Asks the member's AdminServer for its snapshot command (ZooKeeper 3.9's): a copy of the whole\n" +
			"tree at one zxid, taken while writes go on. The credentials need every permission on / (the\n" +
			"super user has them). The file is written beside FILE, read back and checked, synced and then\n" +
			"renamed to FILE. A member answers one snapshot per admin.rateLimiterIntervalInMS (5 minutes\n" +
			"unless set).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "admin-addr", Value: "127.0.0.1:8080", Usage: "the member's AdminServer: host:port, or a URL up to the command prefix (http://host:8080/commands)"},
			cliflags.Auth("credentials holding every permission on /: digest:user:password (user:password alone is digest) or ip:"),
		}, cliflags.Timeout(5*time.Minute, "limit on the member's answer (it writes the snapshot before it sends it), and on a pause in the transfer")...),
		Action: snapshotSave,
	}
}

func snapshotSave(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("snapshot save: want one FILE, got %d arguments", c.NArg())
	}
	path := c.Args().First()
	url := adminURL(c.String("admin-addr")) + "/snapshot"
	auth, err := adminAuth(c)
	if err != nil {
		return err
	}
	timeout := cliflags.TimeoutValue(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := requestSnapshot(ctx, url, auth, timeout)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := newIdleBody(resp.Body, timeout, cancel)
	defer body.stop()
	zxid, err := strconv.ParseInt(resp.Header.Get("last_zxid"), 0, 64)
	if err != nil {
		return fmt.Errorf("snapshot save: %s sent last_zxid %q: %w", url, resp.Header.Get("last_zxid"), err)
	}
	size, err := strconv.ParseInt(resp.Header.Get("snapshot_size"), 10, 64)
	if err != nil {
		return fmt.Errorf("snapshot save: %s sent snapshot_size %q: %w", url, resp.Header.Get("snapshot_size"), err)
	}
	w, err := snapfile.Create(path)
	if err != nil {
		return err
	}
	prog := newProgress(c.App.ErrWriter, "received", size)
	// One byte past the size told is enough to know the member sent too
	// much: a body that never ends must not fill the disk.
	_, err = io.Copy(w, io.TeeReader(io.LimitReader(body, size+1), prog))
	prog.finish()
	if err != nil {
		w.Abort()
		return fmt.Errorf("snapshot save: receiving from %s: %w", url, err)
	}
	if w.SnapshotBytes() != size {
		w.Abort()
		return fmt.Errorf("snapshot save: received %d bytes, the member said %d", w.SnapshotBytes(), size)
	}
	snap, err := w.Verify(zxid)
	if err != nil {
		w.Abort()
		return fmt.Errorf("snapshot save: the snapshot received does not check: %w", err)
	}
	meta := snapfile.Meta{Zxid: snapfile.Zxid(zxid), Znodes: len(snap.Nodes), Sessions: len(snap.Sessions),
		Source: url, SavedAt: time.Now().UTC().Format(time.RFC3339)}
	if err := w.Finish(meta); err != nil {
		return err
	}
	out := c.App.Writer
	fmt.Fprintf(out, "saved           %s\n", path)
	fmt.Fprintf(out, "zxid            %s\n", meta.Zxid)
	fmt.Fprintf(out, "znodes          %d\n", meta.Znodes)
	fmt.Fprintf(out, "sessions        %d\n", meta.Sessions)
	fmt.Fprintf(out, "size            %s\n", bytesAndMiB(size))
	return nil
}

// adminURL is the AdminServer's command prefix for addr: host:port, or
// a URL up to the prefix.
func adminURL(addr string) string {
	base := strings.TrimSuffix(addr, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base + "/commands"
	}
	return base
}

// adminAuth is the Authorization header for the credentials given
// ($ZKRAFT_AUTH, then --auth): the AdminServer takes one, digest or ip;
// "" for none.
func adminAuth(c *cli.Context) (string, error) {
	creds, err := cliflags.Credentials(c)
	if err != nil || len(creds) == 0 {
		return "", err
	}
	cr := creds[len(creds)-1] // --auth overrides the environment
	switch cr.Scheme {
	case "digest":
		return "digest " + cr.Cred, nil
	case "ip":
		return "ip", nil
	}
	return "", fmt.Errorf("--auth: the AdminServer takes digest (or ip) credentials, not %s", cr)
}

// errSnapshotRefused wraps the AdminServer's refusals.
var errSnapshotRefused = errors.New("the AdminServer refused the snapshot")

// requestSnapshot asks url for a snapshot with digest credentials auth;
// cancelling ctx ends the transfer.
func requestSnapshot(ctx context.Context, url, auth string, timeout time.Duration) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("snapshot save: %w", err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	// No proxy: the request carries the super user's credentials, which
	// a proxy of the environment's would see in the clear.
	client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: timeout}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("snapshot save: %w", err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	why := strings.TrimSpace(string(body))
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		if auth == "" {
			return nil, fmt.Errorf("%w (%s): no credentials; give the super user's with --auth digest:user:password or $%s", errSnapshotRefused, resp.Status, cliflags.AuthEnv)
		}
		return nil, fmt.Errorf("%w (%s): the credentials were not accepted", errSnapshotRefused, resp.Status)
	case http.StatusForbidden:
		return nil, fmt.Errorf("%w (%s): these credentials lack a permission on / (the super user has them all)", errSnapshotRefused, resp.Status)
	case http.StatusTooManyRequests:
		return nil, fmt.Errorf("%w (%s): the member takes one snapshot per admin.rateLimiterIntervalInMS (5 minutes unless set); try again later or ask another member", errSnapshotRefused, resp.Status)
	case http.StatusNotFound:
		return nil, fmt.Errorf("%w (%s): no snapshot command at %s (is it an AdminServer, and the command prefix right?)", errSnapshotRefused, resp.Status, url)
	}
	return nil, fmt.Errorf("%w (%s): %s", errSnapshotRefused, resp.Status, why)
}

// idleBody reads a snapshot's body and cancels its request when no byte
// of it arrives for timeout (0: never): a member that stalls in the
// middle of a transfer must not hang save.
type idleBody struct {
	r       io.Reader
	timeout time.Duration
	timer   *time.Timer
	stalled atomic.Bool
}

func newIdleBody(r io.Reader, timeout time.Duration, cancel context.CancelFunc) *idleBody {
	b := &idleBody{r: r, timeout: timeout}
	if timeout > 0 {
		b.timer = time.AfterFunc(timeout, func() { b.stalled.Store(true); cancel() })
	}
	return b
}

// Read reads from the body and restarts the idle limit on data.
func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 && b.timer != nil {
		b.timer.Reset(b.timeout)
	}
	if err != nil && b.stalled.Load() {
		err = fmt.Errorf("no data for %v (--timeout): %w", b.timeout, err)
	}
	return n, err
}

// stop ends the idle limit.
func (b *idleBody) stop() {
	if b.timer != nil {
		b.timer.Stop()
	}
}
