// Package fourletter is a client for ZooKeeper's four-letter words, shared
// by the tests and tools that probe a server (zkraft or Apache ZooKeeper)
// for readiness, its mode or its node count.
package fourletter

import (
	"io"
	"net"
	"strings"
	"time"
)

// Ask sends word (e.g. "srvr") to addr and returns the whole answer, or ""
// if the server does not answer within a few seconds.
func Ask(addr, word string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte(word)); err != nil {
		return ""
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

// Field returns the rest of the first line of out that starts with prefix
// (e.g. "Mode: "), trimmed, or "".
func Field(out, prefix string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
