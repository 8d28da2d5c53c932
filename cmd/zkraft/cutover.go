package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/server"
)

// cutoverCommand moves the zkraft observers of a ZooKeeper ensemble to
// an ensemble of their own (issue 32, Part 3).
func cutoverCommand() *cli.Command {
	return &cli.Command{
		Name:      "cutover",
		Usage:     "make the zkraft observers of a ZooKeeper ensemble a zkraft ensemble of their own, keeping every session",
		ArgsUsage: " ",
		Description: "Talks to the AdminServer of every zkraft server following the ZooKeeper ensemble\n" +
			"(migration.followZooKeeper). It checks that each is up to date and that every session is connected to one\n" +
			"of them; holds writes on all of them and waits for those in flight; stops them all at the same zxid, the\n" +
			"last any of them applied; then each seeds its data directory with that tree and its sessions (ids,\n" +
			"timeouts, passwords, ephemerals) and becomes a member of a new zkraft ensemble of exactly these servers,\n" +
			"keeping its clients' connections and watches, and answering the writes it held. zxids go on above\n" +
			"ZooKeeper's. If a step before the last fails, the cutover is called off and the servers follow ZooKeeper\n" +
			"again. Afterwards ZooKeeper's servers no longer reach zkraft and may be stopped.",
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "admin-addr", Required: true,
				Usage: "the AdminServer of each zkraft observer (host:port or URL; repeat or comma-separate)"},
			cliflags.Auth("credentials holding every permission on /: digest:user:password (user:password alone is digest) or ip:"),
			&cli.BoolFlag{Name: "force", Usage: "cut over although some sessions are not connected to a zkraft observer (their clients may still be on ZooKeeper, whose later writes zkraft will not see)"},
		}, cliflags.Timeout(60*time.Second, "limit on each step on each server")...),
		Action: runCutover,
	}
}

// observerClient talks to one zkraft observer's migration commands.
type observerClient struct {
	url, auth string
	http      *http.Client
}

func (o *observerClient) call(ctx context.Context, method, name string, q string, out any) error {
	u := o.url + "/" + name
	if q != "" {
		u += "?" + q
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	if o.auth != "" {
		req.Header.Set("Authorization", o.auth)
	}
	resp, err := o.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		switch {
		case resp.StatusCode == http.StatusUnauthorized && o.auth == "":
			return fmt.Errorf("%s: no credentials; give the super user's with --auth digest:user:password or $%s", resp.Status, cliflags.AuthEnv)
		case resp.StatusCode == http.StatusNotFound:
			return fmt.Errorf("%s: no %s command (is it a zkraft server with migration.followZooKeeper?)", resp.Status, name)
		case e.Error != "":
			return fmt.Errorf("%s: %s", resp.Status, e.Error)
		}
		return fmt.Errorf("%s", resp.Status)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// eachObserver runs fn on every observer at once and joins their errors,
// each named by its address.
func eachObserver(obs []*observerClient, fn func(i int, o *observerClient) error) error {
	errs := make([]error, len(obs))
	var wg sync.WaitGroup
	for i, o := range obs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(i, o); err != nil {
				errs[i] = fmt.Errorf("%s: %w", o.url, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func runCutover(c *cli.Context) error {
	auth, err := adminAuth(c)
	if err != nil {
		return err
	}
	timeout := cliflags.TimeoutValue(c)
	// No proxy: the requests carry the super user's credentials.
	hc := &http.Client{Transport: &http.Transport{}, Timeout: timeout}
	var obs []*observerClient
	for _, a := range c.StringSlice("admin-addr") {
		for _, addr := range strings.Split(a, ",") {
			if addr = strings.TrimSpace(addr); addr != "" {
				obs = append(obs, &observerClient{url: adminURL(addr), auth: auth, http: hc})
			}
		}
	}
	ctx := c.Context
	w := c.App.Writer

	// 1. Every observer is following, up to date, a distinct server, and
	// holds what ZooKeeper committed; every session is connected to one.
	status := make([]server.MigrationStatus, len(obs))
	if err := eachObserver(obs, func(i int, o *observerClient) error {
		return o.call(ctx, http.MethodGet, "migration", "", &status[i])
	}); err != nil {
		return fmt.Errorf("cutover: %w", err)
	}
	var ids, clients []string
	held := map[int64]bool{}
	for i, st := range status {
		switch {
		case st.State != string(server.StateFollowing):
			return fmt.Errorf("cutover: %s is %s, not following ZooKeeper", obs[i].url, st.State)
		case !st.Synced:
			return fmt.Errorf("cutover: %s is not up to date with ZooKeeper's leader", obs[i].url)
		case slices.Contains(ids, strconv.FormatInt(st.ServerID, 10)):
			return fmt.Errorf("cutover: server id %d twice", st.ServerID)
		case st.Diverged() != nil:
			return fmt.Errorf("cutover: %s: %w", obs[i].url, st.Diverged())
		}
		ids = append(ids, strconv.FormatInt(st.ServerID, 10))
		if st.ClientAddr != "" {
			clients = append(clients, fmt.Sprintf("%d=%s", st.ServerID, st.ClientAddr))
		}
		for _, s := range st.ClientSessions {
			held[s] = true
		}
	}
	var elsewhere []string
	for _, s := range status[0].TreeSessions {
		if !held[s] {
			elsewhere = append(elsewhere, fmt.Sprintf("0x%x", s))
		}
	}
	if len(elsewhere) > 0 {
		shown := elsewhere[:min(len(elsewhere), 10)]
		msg := fmt.Sprintf("%d sessions are not connected to a zkraft observer: %s", len(elsewhere), strings.Join(shown, " "))
		if !c.Bool("force") {
			return fmt.Errorf("cutover: %s. Move their clients to the zkraft observers first (their connect strings), "+
				"or give --force: the sessions are kept, but what their clients write on ZooKeeper after the cutover is lost", msg)
		}
		fmt.Fprintf(c.App.ErrWriter, "warning: %s (--force)\n", msg)
	}
	fmt.Fprintf(w, "%d observers up to date at zxid 0x%x; %d sessions\n", len(obs), status[0].LastZxid, len(status[0].TreeSessions))

	// 2. Hold writes everywhere; 3. stop all at the last zxid any holds.
	// A failure calls the cutover off.
	paused := time.Now()
	thawAll := func(cause error) error {
		_ = eachObserver(obs, func(_ int, o *observerClient) error {
			return o.call(context.WithoutCancel(ctx), http.MethodPost, "migration_thaw", "", nil)
		})
		return fmt.Errorf("cutover called off; the observers follow ZooKeeper again: %w", cause)
	}
	zxids := make([]int64, len(obs))
	if err := eachObserver(obs, func(i int, o *observerClient) error {
		var r struct {
			LastZxid int64 `json:"last_zxid"`
		}
		err := o.call(ctx, http.MethodPost, "migration_freeze", "", &r)
		zxids[i] = r.LastZxid
		return err
	}); err != nil {
		return thawAll(err)
	}
	target := slices.Max(zxids)
	if err := eachObserver(obs, func(_ int, o *observerClient) error {
		return o.call(ctx, http.MethodPost, "migration_stop", fmt.Sprintf("zxid=%d", target), nil)
	}); err != nil {
		return thawAll(fmt.Errorf("stopping at 0x%x (is a client still writing on ZooKeeper?): %w", target, err))
	}
	fmt.Fprintf(w, "stopped following ZooKeeper at zxid 0x%x\n", target)

	// 4. Become the new ensemble: no way back from here.
	modes := make([]string, len(obs))
	err = eachObserver(obs, func(i int, o *observerClient) error {
		var r struct {
			Mode string `json:"mode"`
		}
		err := o.call(ctx, http.MethodPost, "migration_cutover", fmt.Sprintf("zxid=%d&members=%s&clients=%s", target, strings.Join(ids, ","), url.QueryEscape(strings.Join(clients, ","))), &r)
		modes[i] = r.Mode
		return err
	})
	pause := time.Since(paused)
	if err != nil {
		return fmt.Errorf("cutover at zxid 0x%x failed on some servers; those listed need their logs read (the others are members of the new ensemble): %w", target, err)
	}
	fmt.Fprintf(w, "zkraft ensemble of servers %s formed at zxid 0x%x (%s); writes were held for %s\n",
		strings.Join(ids, ","), target, strings.Join(modes, ","), pause.Round(time.Millisecond))
	fmt.Fprintf(w, "ZooKeeper's servers no longer reach zkraft: stop them now. In each zkraft server's zoo.cfg, remove\n"+
		"migration.followZooKeeper and ZooKeeper's server.N lines, and make its own lines participants (drop :observer).\n")
	return nil
}
