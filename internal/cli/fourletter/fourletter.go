// Package fourletter is a client for ZooKeeper's four-letter words, shared
// by the tests and tools that probe a server (zkraft or Apache ZooKeeper)
// for readiness, its mode or its node count.
package fourletter

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// Ask sends word (e.g. "srvr") to addr and returns the whole answer, or ""
// if the server does not answer within a few seconds.
func Ask(addr, word string) string {
	out, _ := AskWithin(addr, word, 3*time.Second)
	return out
}

// AskWithin sends word to addr and returns the whole answer, or an error
// if the connection fails or the answer does not come within timeout
// (connecting included).
func AskWithin(addr, word string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", word, addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	if _, err := c.Write([]byte(word)); err != nil {
		return "", fmt.Errorf("%s %s: %w", word, addr, err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		return string(b), fmt.Errorf("%s %s: %w", word, addr, err)
	}
	return string(b), nil
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
