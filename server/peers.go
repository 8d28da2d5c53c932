package server

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zkraft/zkraft/backend"
)

// parsePeersFlag reads --peers: "1=host:port[:observer][;client],...",
// where client is the member's client address (host:port, or a port on
// the member's host) as in a zoo.cfg server line: the console's ensemble
// page reaches the members there.
func parsePeersFlag(v string) ([]backend.Peer, error) {
	var out []backend.Peer
	for _, item := range splitList(v) {
		k, addr, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("--peers item %q: want id=host:port", item)
		}
		addr, client, hasClient := strings.Cut(addr, ";")
		observer := strings.HasSuffix(addr, ":observer")
		addr = strings.TrimSuffix(addr, ":observer")
		line := addr + ":0"
		if hasClient {
			if client == "" {
				return nil, fmt.Errorf("--peers item %q: an empty client address after ;", item)
			}
			line += ";" + client
		}
		sl, err := backend.ParseServerLine("server."+k, line)
		if err != nil {
			return nil, err
		}
		sl.Observer = observer
		out = append(out, sl)
	}
	return out, nil
}

// readMyID reads dataDir/myid as ZooKeeper does (setupMyId): its first
// line is the id, any Java long (backend.ParseServerID), blanks around it
// allowed. -1 is refused: it is ZooKeeper's unset id, which it reports as
// a missing myid file.
func readMyID(dataDir string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "myid"))
	if err != nil {
		return 0, fmt.Errorf("myid: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	id, err := ParseMyID(strings.TrimSpace(line))
	if err != nil {
		return 0, fmt.Errorf("myid: %w", err)
	}
	return id, nil
}

// ParseMyID reads a member's own id (myid, --id): a server id other than
// ZooKeeper's unset -1.
func ParseMyID(text string) (int64, error) {
	id, err := backend.ParseServerID(text)
	if err != nil {
		return 0, err
	}
	if id == -1 {
		return 0, fmt.Errorf("server id -1 is ZooKeeper's unset id (it reports a missing myid); pick another")
	}
	return id, nil
}

// sortPeers orders members by id for the ensemble configuration.
func sortPeers(peers []backend.Peer) []backend.Peer {
	sort.Slice(peers, func(i, j int) bool { return peers[i].ID < peers[j].ID })
	return peers
}
