package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/ensemble"
)

// serverLine is one zoo.cfg member line:
//
//	server.N=host:peerPort:electionPort[:participant|:observer][;[clientAddr:]clientPort]
//
// zkraft carries Raft and its member protocol on peerPort; electionPort is
// accepted and unused (Raft elects over the same port).
type serverLine struct {
	ID         uint8
	PeerAddr   string
	Observer   bool
	ClientAddr string // host:port, "" if the line has none
}

func parseServerLine(key, value string) (serverLine, error) {
	idText := strings.TrimPrefix(key, "server.")
	id, err := strconv.ParseUint(idText, 10, 8)
	if err != nil || id == 0 {
		return serverLine{}, fmt.Errorf("%s: server id must be 1..255", key)
	}
	sl := serverLine{ID: uint8(id)}
	addrPart, clientPart, hasClient := strings.Cut(value, ";")
	host, rest, err := splitHost(strings.TrimSpace(addrPart))
	if err != nil {
		return serverLine{}, fmt.Errorf("%s: %w", key, err)
	}
	fields := strings.Split(rest, ":")
	if len(fields) < 1 || fields[0] == "" {
		return serverLine{}, fmt.Errorf("%s=%s: want host:peerPort:electionPort", key, value)
	}
	if _, err := strconv.ParseUint(fields[0], 10, 16); err != nil {
		return serverLine{}, fmt.Errorf("%s: bad peer port %q", key, fields[0])
	}
	sl.PeerAddr = net.JoinHostPort(host, fields[0])
	if len(fields) >= 3 {
		switch fields[2] {
		case "observer":
			sl.Observer = true
		case "participant":
		default:
			return serverLine{}, fmt.Errorf("%s: unknown role %q", key, fields[2])
		}
	}
	if hasClient {
		clientPart = strings.TrimSpace(clientPart)
		if i := strings.LastIndex(clientPart, ":"); i >= 0 {
			sl.ClientAddr = clientPart
		} else {
			sl.ClientAddr = net.JoinHostPort("0.0.0.0", clientPart)
		}
	}
	return sl, nil
}

// splitHost separates a host (bracketed for IPv6) from the ":ports..." rest.
func splitHost(s string) (host, rest string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 || len(s) < end+2 || s[end+1] != ':' {
			return "", "", fmt.Errorf("bad address %q", s)
		}
		return s[1:end], s[end+2:], nil
	}
	host, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("bad address %q", s)
	}
	return host, rest, nil
}

// parsePeersFlag reads --peers: "1=host:port[:observer],2=host:port,...".
func parsePeersFlag(v string) ([]serverLine, error) {
	var out []serverLine
	for _, item := range splitList(v) {
		k, addr, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("--peers item %q: want id=host:port", item)
		}
		observer := strings.HasSuffix(addr, ":observer")
		addr = strings.TrimSuffix(addr, ":observer")
		sl, err := parseServerLine("server."+k, addr+":0")
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

// toPeers orders member lines by id for the ensemble configuration.
func toPeers(lines []serverLine) []ensemble.Peer {
	sort.Slice(lines, func(i, j int) bool { return lines[i].ID < lines[j].ID })
	out := make([]ensemble.Peer, 0, len(lines))
	for _, l := range lines {
		out = append(out, ensemble.Peer{ID: l.ID, Addr: l.PeerAddr, Observer: l.Observer})
	}
	return out
}
