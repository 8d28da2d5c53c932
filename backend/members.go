package backend

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

// Peer is one ensemble member.
type Peer struct {
	// ID is the member's server id (server.N): any Java long, as
	// ZooKeeper takes it (ParseServerID).
	ID int64
	// Addr is its member port, host:port (zoo.cfg's first port).
	Addr string
	// Observer members replicate and serve reads but do not vote.
	Observer bool
	// ElectionPort is zoo.cfg's second port, kept for /zookeeper/config.
	ElectionPort int
	// ClientAddr is the member's client address, for /zookeeper/config.
	ClientAddr string
}

// ParseServerLine parses one zoo.cfg member line, key "server.N" and value
//
//	host:peerPort:electionPort[:participant|:observer][;[clientAddr:]clientPort]
//
// zkraft carries Raft and its member protocol on peerPort; electionPort is
// kept only to write the line back in /zookeeper/config.
func ParseServerLine(key, value string) (Peer, error) {
	idText, ok := strings.CutPrefix(strings.TrimSpace(key), "server.")
	if !ok {
		return Peer{}, fmt.Errorf("%s: want server.N", key)
	}
	id, err := ParseServerID(idText)
	if err != nil {
		return Peer{}, fmt.Errorf("%s: %w", key, err)
	}
	p := Peer{ID: id}
	addrPart, clientPart, hasClient := strings.Cut(strings.TrimSpace(value), ";")
	host, rest, err := splitHost(strings.TrimSpace(addrPart))
	if err != nil {
		return Peer{}, fmt.Errorf("%s: %w", key, err)
	}
	fields := strings.Split(rest, ":")
	if _, err := strconv.ParseUint(fields[0], 10, 16); err != nil {
		return Peer{}, fmt.Errorf("%s=%s: want host:peerPort:electionPort", key, value)
	}
	p.Addr = net.JoinHostPort(host, fields[0])
	if len(fields) >= 2 {
		if p.ElectionPort, err = strconv.Atoi(fields[1]); err != nil {
			return Peer{}, fmt.Errorf("%s: bad election port %q", key, fields[1])
		}
	}
	if len(fields) >= 3 {
		switch fields[2] {
		case "observer":
			p.Observer = true
		case "participant":
		default:
			return Peer{}, fmt.Errorf("%s: unknown role %q", key, fields[2])
		}
	}
	if hasClient {
		clientPart = strings.TrimSpace(clientPart)
		if strings.Contains(clientPart, ":") {
			p.ClientAddr = clientPart
		} else {
			p.ClientAddr = net.JoinHostPort("0.0.0.0", clientPart)
		}
	}
	return p, nil
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

// ConfigLine renders p as /zookeeper/config shows it.
func (p Peer) ConfigLine() string {
	host, port, _ := net.SplitHostPort(p.Addr)
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	role := "participant"
	if p.Observer {
		role = "observer"
	}
	line := fmt.Sprintf("server.%d=%s:%s:%d:%s", p.ID, host, port, p.ElectionPort, role)
	if p.ClientAddr != "" {
		line += ";" + p.ClientAddr
	}
	return line
}

// RenderMembers renders a membership as /zookeeper/config's server lines
// (without the version line), ordered by id.
func RenderMembers(peers []Peer) string {
	sorted := append([]Peer(nil), peers...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	var b strings.Builder
	for _, p := range sorted {
		b.WriteString(p.ConfigLine())
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseMembers reads /zookeeper/config text back (zkraft's or
// ZooKeeper's): its server lines and its version (-1 if none).
func ParseMembers(text string) ([]Peer, int64, error) {
	var peers []Peer
	version := int64(-1)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, 0, fmt.Errorf("config line %q", line)
		}
		if k == "version" {
			ver, err := strconv.ParseInt(v, 16, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("config version %q: %w", v, err)
			}
			version = ver
			continue
		}
		p, err := ParseServerLine(k, v)
		if err != nil {
			return nil, 0, err
		}
		peers = append(peers, p)
	}
	return peers, version, nil
}
