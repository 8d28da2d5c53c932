package server

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/backend"
)

// parsePeersFlag reads --peers: "1=host:port[:observer],2=host:port,...".
func parsePeersFlag(v string) ([]backend.Peer, error) {
	var out []backend.Peer
	for _, item := range splitList(v) {
		k, addr, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("--peers item %q: want id=host:port", item)
		}
		observer := strings.HasSuffix(addr, ":observer")
		addr = strings.TrimSuffix(addr, ":observer")
		sl, err := backend.ParseServerLine("server."+k, addr+":0")
		if err != nil {
			return nil, err
		}
		sl.Observer = observer
		out = append(out, sl)
	}
	return out, nil
}

// readMyID reads dataDir/myid as ZooKeeper does.
func readMyID(dataDir string) (uint8, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "myid"))
	if err != nil {
		return 0, fmt.Errorf("myid: %w", err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 8)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("myid %q: want 1..255", strings.TrimSpace(string(b)))
	}
	return uint8(id), nil
}

// sortPeers orders members by id for the ensemble configuration.
func sortPeers(peers []backend.Peer) []backend.Peer {
	sort.Slice(peers, func(i, j int) bool { return peers[i].ID < peers[j].ID })
	return peers
}
