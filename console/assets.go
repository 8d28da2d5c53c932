package console

import (
	"embed"
	"io/fs"
	"net/http"
)

// static holds the page: plain HTML, CSS and JavaScript, no build step
// and nothing fetched from elsewhere.
//
//go:embed static
var static embed.FS

// assets serves the embedded page under prefix. The page may not be
// framed (clickjacking) and loads nothing from elsewhere.
func (c *Console) assets(prefix string) http.Handler {
	sub, _ := fs.Sub(static, "static") // "static" exists: embedded above
	files := http.StripPrefix(prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
