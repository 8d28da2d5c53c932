package server

import (
	"net/http"

	"github.com/zkraft/zkraft/console"
)

// guardAdmin applies to every AdminServer path what the console applies
// to its own (console.GuardHosts): requests under a Host header that does
// not name this server (console.allowedHosts beside IP addresses,
// localhost and the host name) are refused with 421, against DNS
// rebinding, which ZooKeeper's AdminServer does not refuse; over HTTPS
// every response carries Strict-Transport-Security.
func guardAdmin(st Config, h http.Handler) http.Handler {
	return console.GuardHosts(h, st.ConsoleAllowedHosts)
}
