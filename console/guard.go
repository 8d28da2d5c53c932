package console

import "net/http"

// hstsValue is the Strict-Transport-Security header of every response
// served over TLS: browsers that saw it come back over HTTPS only, for a
// year.
const hstsValue = "max-age=31536000"

// GuardHosts wraps a handler of the server the console runs in (the
// AdminServer: its commands, metrics, upgrade and the console itself) with
// the console's defences that apply to every path: a request whose Host
// header does not name this server (IP addresses, localhost, this
// machine's name, or one of allowed) answers 421 Misdirected Request, so
// a DNS rebinding page cannot read /commands/dump or /commands/stat; and
// under TLS every response carries Strict-Transport-Security.
func GuardHosts(h http.Handler, allowed []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", hstsValue)
		}
		if !hostAllowed(r.Host, allowed) {
			fail(w, http.StatusMisdirectedRequest, "this server does not answer for host "+r.Host+
				": add it to console.allowedHosts (--console-allowed-hosts)")
			return
		}
		h.ServeHTTP(w, r)
	})
}
