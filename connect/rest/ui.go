package rest

import (
	"embed"
	"net/http"
)

// uiFiles are the status page's assets, built into the binary: the page needs no CDN and no build step.
//
//go:embed ui
var uiFiles embed.FS

// uiHandler serves the status page under /ui/. The page is static and only reads what the API already
// serves (statuses, /slots, /metrics, /health) with the browser's credentials, so it sits behind the same
// authentication as every other path (ServeHTTP checks it first) and shows nothing a REST client could not read.
// The headers keep the page from running any script but its own or being framed by another site.
func uiHandler() http.Handler {
	// The embedded tree's root holds ui/, so /ui/app.js is the file ui/app.js as the path stands.
	files := http.FileServerFS(uiFiles)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
