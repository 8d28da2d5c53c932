package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/zkraft/zkraft/backend"
	"github.com/zkraft/zkraft/ensemble"
	"github.com/zkraft/zkraft/internal/zookeeper/datadir"
	"github.com/zkraft/zkraft/internal/zookeeper/importer"
	"github.com/zkraft/zkraft/internal/zookeeper/snapfile"
	"github.com/zkraft/zkraft/server"
	"github.com/zkraft/zkraft/znode"
)

func snapshotRestoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "start a member of a new ensemble from a snapshot FILE (into an empty data directory)",
		ArgsUsage: "FILE",
		Description: "Writes the snapshot's tree as this member's starting state, as import-zookeeper does. Run it on every\n" +
			"member of the new ensemble with the same FILE and the same --peers (or the zoo.cfg each will serve\n" +
			"with), then start them. The old ensemble's membership is not restored: /zookeeper/config starts\n" +
			"empty and the new ensemble writes its own. Every znode keeps its data, ACL and Stat; zxids go on\n" +
			"from the snapshot's. Sessions are kept, with their ephemerals, until they time out (a fresh timeout\n" +
			"from the new ensemble's first leader), as when ZooKeeper restarts from a snapshot; their old\n" +
			"clients cannot resume them, so they expire and their ephemerals are deleted, with the usual events.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "the zoo.cfg the member will serve with (dataDir, dataLogDir, server.N, myid, extendedTypesEnabled)"},
			&cli.StringFlag{Name: "data-dir", Value: "./zkraft-data", Usage: "the member's data directory: new or empty (a myid and zoo.cfg files may be there)"},
			&cli.StringFlag{Name: "data-log-dir", Usage: "the member's log directory, when not the data directory (new or empty too)"},
			&cli.BoolFlag{Name: "extended-types", Usage: "restore TTL nodes (extendedTypesEnabled), as the server will run"},
			&cli.StringFlag{Name: "id", Usage: "this member's server id (else dataDir/myid when there are peers)"},
			&cli.StringFlag{Name: "peers", Usage: "the new ensemble's members: 1=host:port,2=host:port[:observer],... (zoo.cfg server.N); none: standalone"},
		},
		Action: snapshotRestore,
	}
}

func snapshotRestore(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("snapshot restore: want one FILE, got %d arguments", c.NArg())
	}
	path := c.Args().First()
	st := server.DefaultConfig()
	if cfgPath := c.String("config"); cfgPath != "" {
		if _, err := st.ApplyZooFile(cfgPath, nil); err != nil {
			return err
		}
	}
	if err := st.ApplyFlags(c); err != nil {
		return err
	}
	if err := st.ResolveMembers(c); err != nil {
		return err
	}
	fi, err := os.Stat(path) // before a directory is made for nothing
	if err != nil {
		return fmt.Errorf("snapshot restore: %w", err)
	}
	// A zkraft serving (or another restore writing) these directories
	// must not have them written under it: it is named by its pid.
	unlock, err := server.LockDirs(st)
	if err != nil {
		return fmt.Errorf("snapshot restore: %w", err)
	}
	defer unlock()
	for _, dir := range []string{st.DataDir, st.DataLogDir} {
		if err := checkNewDir(dir); err != nil {
			return err
		}
	}
	errw := c.App.ErrWriter
	large := fi.Size() > 32<<20
	stage(errw, large, "reading and checking %s (%s)", path, mib(fi.Size()))
	f, err := snapfile.Read(path)
	if err != nil {
		return err
	}
	if f.Kind != snapfile.KindZkraft {
		return fmt.Errorf("snapshot restore: %s is an Apache ZooKeeper snapshot, which is fuzzy without its logs: "+
			"use zkraft import-zookeeper on its data directory", path)
	}
	opts := znode.Options{ExtendedTypes: st.ExtendedTypes}
	if p := ttlNode(f.Snapshot); p != "" && !opts.ExtendedTypes {
		return fmt.Errorf("snapshot restore: the snapshot holds TTL nodes (%s): restore with --extended-types "+
			"(extendedTypesEnabled=true) and serve with it", p)
	}
	stage(errw, large, "building the tree of %d znodes", f.Meta.Znodes)
	tree, err := importer.FromSnapshot(f.Snapshot, opts, restoredPasswd(f.Digest))
	if err != nil {
		return fmt.Errorf("snapshot restore: %w", err)
	}
	tree.ResetConfig()
	stage(errw, large, "writing %s", st.DataDir)
	log, err := newLogger("warn", "console")
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	peers := st.Peers()
	err = ensemble.Seed(ensemble.Config{ID: st.ServerID, DataDir: st.DataDir, LogDir: st.DataLogDir, Peers: peers, Logger: log},
		tree, uint64(max(int64(f.Meta.Zxid), 1)))
	if err != nil {
		return err
	}
	out := c.App.Writer
	fmt.Fprintf(out, "restored        %s\n", path)
	fmt.Fprintf(out, "zxid            %s (the new ensemble goes on from %s)\n", f.Meta.Zxid, f.Meta.Zxid+1)
	fmt.Fprintf(out, "znodes          %d\n", len(f.Snapshot.Nodes))
	fmt.Fprintf(out, "sessions        %d (kept until they time out)\n", len(f.Snapshot.Sessions))
	fmt.Fprintf(out, "members         %s\n", describeMembers(peers, st.ServerID))
	fmt.Fprintf(out, "written to      %s\n", st.DataDir)
	return nil
}

// checkNewDir refuses a directory that holds anything but what an
// operator prepares for a new member (myid, zoo.cfg and its dynamic
// files) and the lock file restore holds: restore starts a new member, it
// never adds to or replaces one.
func checkNewDir(dir string) error {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshot restore: %w", err)
	}
	var found []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && (name == "myid" || name == server.PidFile || strings.HasSuffix(name, ".cfg") || strings.Contains(name, ".cfg.dynamic")) {
			continue
		}
		found = append(found, name)
	}
	if len(found) == 0 {
		return nil
	}
	if len(found) > 5 {
		found = append(found[:5], "...")
	}
	return fmt.Errorf("snapshot restore: %s is not empty (%s): restore starts a new member; give it a new or empty directory",
		filepath.Clean(dir), strings.Join(found, ", "))
}

// ttlNode is the path of a TTL node in s, "" if it has none: without
// extended types its owner field would read as an unknown session's.
func ttlNode(s *datadir.Snapshot) string {
	known := map[int64]bool{}
	for _, ss := range s.Sessions {
		known[ss.ID] = true
	}
	for _, n := range s.Nodes {
		if o := n.Stat.EphemeralOwner; znode.IsTTLOwner(o) && !known[o] {
			return n.Path
		}
	}
	return ""
}

// restoredPasswd gives each restored session a password derived from the
// snapshot file's digest: the same on every member restoring the file
// (their trees must be equal), known to no client.
func restoredPasswd(digest [sha256.Size]byte) func(int64) []byte {
	return func(id int64) []byte {
		h := sha256.New()
		_, _ = io.WriteString(h, "zkraft snapshot restore session password\x00")
		h.Write(digest[:])
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(id)))
		return h.Sum(nil)[:16]
	}
}

// describeMembers is the restored membership, for the report.
func describeMembers(peers []backend.Peer, self int64) string {
	if len(peers) == 0 {
		return "standalone"
	}
	ids := make([]string, len(peers))
	for i, p := range peers {
		ids[i] = fmt.Sprint(p.ID)
	}
	return fmt.Sprintf("%d (%s), this member is %d", len(peers), strings.Join(ids, ", "), self)
}
