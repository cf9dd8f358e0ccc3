package rest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/cdcd/cdcd/connect/config"
)

// CrossOrigin is Connect's CORS support (access.control.allow.origin, access.control.allow.methods), as Connect
// 4.4 installs Jetty's CrossOriginHandler: a request whose Origin is allowed gets Access-Control-Allow-Origin
// (that origin) and Access-Control-Allow-Credentials; a preflight (OPTIONS with Access-Control-Request-Method)
// also gets the allowed methods, Content-Type as the allowed header and a 60 s max age, and is then answered by
// the API like any OPTIONS request (authentication included, as in Connect). Every answer varies by Origin. An
// allowed origin's pages may also change state (fromOwnOrigin lets them through).
type CrossOrigin struct {
	origins config.AllowedOrigins
	methods string // the Access-Control-Allow-Methods value
}

// ParseCrossOrigin reads the worker's CORS settings; nil when access.control.allow.origin allows no origin.
func ParseCrossOrigin(props map[string]string) (*CrossOrigin, error) {
	origins, err := config.ParseAllowedOrigins(props["access.control.allow.origin"])
	if err != nil {
		return nil, fmt.Errorf("access.control.allow.origin: %w", err)
	}
	if origins.Empty() {
		return nil, nil
	}
	var methods []string
	for _, m := range strings.Split(props["access.control.allow.methods"], ",") {
		if m = strings.TrimSpace(m); m != "" {
			methods = append(methods, m)
		}
	}
	if len(methods) == 0 {
		methods = []string{http.MethodGet, http.MethodPost, http.MethodHead} // Jetty's default
	}
	return &CrossOrigin{origins: origins, methods: strings.Join(methods, ",")}, nil
}

// AllowCrossOrigin turns Connect's CORS support on (c nil: off).
func (s *Server) AllowCrossOrigin(c *CrossOrigin) { s.cors = c }

// annotate adds the CORS headers of r's answer.
func (c *CrossOrigin) annotate(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" || !c.origins.Allows(origin) {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", c.methods)
		h.Set("Access-Control-Allow-Headers", "Content-Type")
		h.Set("Access-Control-Max-Age", "60")
	}
}
