package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
)

// upgradeCommand reports and finishes a rolling upgrade (the AdminServer's
// upgrade commands, operator/adminupgrade.go).
func upgradeCommand() *cli.Command {
	addr := &cli.StringSliceFlag{Name: "admin-addr", Required: true,
		Usage: "the AdminServer of each member (host:port or URL; repeat or comma-separate)"}
	return &cli.Command{
		Name:  "upgrade",
		Usage: "a rolling upgrade's state, and its last step",
		Subcommands: []*cli.Command{
			{
				Name:   "status",
				Usage:  "print the ensemble's id and level, and each member's build level",
				Flags:  append([]cli.Flag{addr}, cliflags.Timeout(10*time.Second, "limit on each request")...),
				Action: func(c *cli.Context) error { return runUpgrade(c, false) },
			},
			{
				Name: "finish",
				Usage: "raise the ensemble to this release's level once every member runs it " +
					"(after it, members of the previous release are refused and a downgrade is no longer possible)",
				Flags: append([]cli.Flag{addr, cliflags.Auth("credentials holding every permission on /: digest:user:password or ip:")},
					cliflags.Timeout(10*time.Second, "limit on each request")...),
				Action: func(c *cli.Context) error { return runUpgrade(c, true) },
			},
		},
	}
}

// upgradeReply is the AdminServer's answer to upgrade and upgrade_finish.
type upgradeReply struct {
	EnsembleID string `json:"ensemble_id"`
	Level      int    `json:"level"`
	BuildLevel int    `json:"build_level"`
	Leader     bool   `json:"leader"`
	Members    []struct {
		ServerID    int64  `json:"server_id"`
		Addr        string `json:"addr"`
		BuildLevel  int    `json:"build_level"`
		Unreachable string `json:"unreachable"`
	} `json:"members"`
	Error *string `json:"error"`
}

// runUpgrade asks each member in turn; finish goes to the leader (the
// others answer 409).
func runUpgrade(c *cli.Context, finish bool) error {
	auth, err := adminAuth(c)
	if err != nil {
		return err
	}
	timeout := cliflags.TimeoutValue(c)
	var errs []error
	for _, a := range c.StringSlice("admin-addr") {
		for _, one := range strings.Split(a, ",") {
			rep, err := askUpgrade(c.Context, adminURL(strings.TrimSpace(one)), auth, finish, timeout)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", one, err))
				continue
			}
			if finish && !rep.Leader {
				continue
			}
			printUpgrade(c.App.Writer, one, rep, finish)
			return nil
		}
	}
	if finish && len(errs) == 0 {
		return errors.New("upgrade finish: none of these members leads; give the leader's AdminServer too")
	}
	return errors.Join(errs...)
}

func askUpgrade(ctx context.Context, base, auth string, finish bool, timeout time.Duration) (upgradeReply, error) {
	var rep upgradeReply
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	method, name := http.MethodGet, "/upgrade"
	if finish {
		method, name = http.MethodPost, "/upgrade_finish"
	}
	req, err := http.NewRequestWithContext(ctx, method, base+name, nil)
	if err != nil {
		return rep, err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(body, &rep); err != nil {
		return rep, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	if resp.StatusCode == http.StatusConflict && finish && !rep.Leader {
		return rep, nil // a follower: the caller goes on to the next member
	}
	if rep.Error != nil {
		return rep, errors.New(*rep.Error)
	}
	if resp.StatusCode != http.StatusOK {
		return rep, errors.New(resp.Status)
	}
	return rep, nil
}

func printUpgrade(w io.Writer, addr string, rep upgradeReply, finished bool) {
	if finished {
		fmt.Fprintf(w, "ensemble %s now runs at level %d\n", rep.EnsembleID, rep.Level)
		return
	}
	fmt.Fprintf(w, "ensemble %s: level %d (asked %s: build level %d, leader %v)\n", rep.EnsembleID, rep.Level, addr, rep.BuildLevel, rep.Leader)
	fmt.Fprintln(w, "SERVER\tADDRESS\tBUILD LEVEL")
	for _, m := range rep.Members {
		level := fmt.Sprint(m.BuildLevel)
		if m.Unreachable != "" {
			level = "unreachable: " + m.Unreachable
		}
		fmt.Fprintf(w, "%d\t%s\t%s\n", m.ServerID, m.Addr, level)
	}
}
