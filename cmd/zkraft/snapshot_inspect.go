package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/internal/cli/cliflags"
	"github.com/zkraft/zkraft/internal/zookeeper/snapfile"
)

func snapshotInspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show what a snapshot FILE holds: counts, sizes, the largest subtrees, ephemerals by session",
		ArgsUsage: "FILE",
		Description: "Reads a file of zkraft snapshot save, or an Apache ZooKeeper snapshot (snapshot.<zxid>, .gz,\n" +
			".snappy), checking it whole first. Bytes are those of paths and data together, as mntr's\n" +
			"zk_approximate_data_size. A subtree is a znode at depth 1 to --depth (/a is 1, /a/b is 2) with\n" +
			"everything under it. Snapshots hold no watches: they live with a member's connections.",
		Flags: append(cliflags.Output("text, or json: one object instead of tables"),
			&cli.IntFlag{Name: "top", Value: 10, Usage: "how many of the largest subtrees (and sessions, in the table) to list"},
			&cli.IntFlag{Name: "depth", Value: 2, Usage: "how deep subtrees are looked for"},
		),
		Action: snapshotInspect,
	}
}

func snapshotInspect(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("snapshot inspect: want one FILE, got %d arguments", c.NArg())
	}
	if c.Int("top") < 1 || c.Int("depth") < 1 {
		return fmt.Errorf("snapshot inspect: --top and --depth must be at least 1")
	}
	asJSON, err := cliflags.JSON(c)
	if err != nil {
		return err
	}
	path := c.Args().First()
	if fi, err := os.Stat(path); err == nil {
		stage(c.App.ErrWriter, fi.Size() > 32<<20, "reading and checking %s (%s)", path, mib(fi.Size()))
	}
	f, err := snapfile.Read(path)
	if err != nil {
		return err
	}
	r := snapfile.Inspect(f, c.Int("depth"), c.Int("top"))
	if asJSON {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return writeInspectTable(c.App.Writer, path, r, c.Int("top"))
}

// writeInspectTable prints r for people.
func writeInspectTable(out io.Writer, path string, r *snapfile.Report, top int) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	origin := string(r.Kind)
	if r.Source != "" {
		origin += ", saved from " + r.Source + " at " + r.SavedAt
	}
	fmt.Fprintf(w, "file\t%s (%s)\n", path, origin)
	fmt.Fprintf(w, "zxid\t%s\n", r.Zxid)
	fmt.Fprintf(w, "znodes\t%d (%d ephemeral, %d container, %d TTL)\n", r.Znodes, r.Ephemerals, r.Containers, r.TTLs)
	fmt.Fprintf(w, "sessions\t%d\n", r.Sessions)
	fmt.Fprintf(w, "bytes\t%d of paths and data (%d of data; largest znode %s, %d bytes)\n", r.Bytes, r.DataBytes, printable(r.Largest.Path), r.Largest.Bytes)
	fmt.Fprintf(w, "acl lists\t%d\n", r.ACLs)
	fmt.Fprintf(w, "snapshot size\t%s\n", bytesAndMiB(r.FileBytes))
	fmt.Fprintf(w, "watches\tnone: a snapshot holds none (they live with a member's connections)\n")
	for _, t := range []struct {
		title string
		rows  []snapfile.Subtree
	}{{"LARGEST SUBTREES BY BYTES", r.ByBytes}, {"LARGEST SUBTREES BY ZNODES", r.ByZnodes}} {
		fmt.Fprintf(w, "\n%s (depth 1-%d)\nPATH\tZNODES\tBYTES\n", t.title, r.Depth)
		for _, s := range t.rows {
			fmt.Fprintf(w, "%s\t%d\t%d\n", printable(s.Path), s.Znodes, s.Bytes)
		}
	}
	if len(r.EphemeralsBySession) == 0 {
		fmt.Fprintf(w, "\nEPHEMERALS BY SESSION\nnone\n")
		return w.Flush()
	}
	fmt.Fprintf(w, "\nEPHEMERALS BY SESSION\nSESSION\tTIMEOUT\tEPHEMERALS\tPATHS\n")
	for i, s := range r.EphemeralsBySession {
		if i == top {
			fmt.Fprintf(w, "(%d more sessions; -o json lists them all)\n", len(r.EphemeralsBySession)-top)
			break
		}
		timeout := "(no session)"
		if s.TimeoutMs > 0 {
			timeout = fmt.Sprintf("%dms", s.TimeoutMs)
		}
		var paths []string
		for _, p := range s.Paths {
			paths = append(paths, printable(p))
		}
		more := ""
		if len(paths) > 3 {
			paths, more = paths[:3], fmt.Sprintf(" and %d more", len(s.Paths)-3)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s%s\n", s.Session, timeout, s.Count, strings.Join(paths, " "), more)
	}
	return w.Flush()
}

// printable is a znode path as the table shows it: as it is, or quoted
// with Go's escapes when it holds control characters (a snapshot's paths
// are any bytes, and a crafted one must not drive the terminal).
func printable(path string) string {
	for _, r := range path {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return strconv.Quote(path)
		}
	}
	return path
}
