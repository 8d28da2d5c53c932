package console

import (
	"net"
	"os"
	"strings"
)

// hostAllowed reports whether a request's Host header names this server:
// an IP address (a browser that typed one reaches no other site through
// it), localhost, this machine's host name, or one of allowed. A DNS
// rebinding page is served under its own name, which is none of these.
func hostAllowed(hostport string, allowed []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") {
		return true
	}
	if name, err := os.Hostname(); err == nil && strings.EqualFold(host, name) {
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(host, strings.TrimSuffix(a, ".")) {
			return true
		}
	}
	return false
}
