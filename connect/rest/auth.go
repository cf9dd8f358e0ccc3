package rest

import (
	"crypto/subtle"
	"fmt"
	"net/http"

	"github.com/cdcd/cdcd/connect/config"
)

// BasicAuth checks HTTP basic credentials against a credentials file as Connect's
// PropertyFileLoginModule reads it: a Java properties file of `user: password` (or `user=password`)
// lines, the whole value being the password.
type BasicAuth struct {
	users map[string]string
}

// CredentialsFileKey is the worker property naming the credentials file of the REST API's HTTP basic
// authentication (cdcd's key: Connect reaches the same file through a JAAS config).
const CredentialsFileKey = "rest.basic.auth.credentials.file"

// LoadBasicAuth reads a credentials file.
func LoadBasicAuth(path string) (*BasicAuth, error) {
	props, err := config.LoadPropertiesFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CredentialsFileKey, err)
	}
	users := config.PropertiesMap(props)
	if len(users) == 0 {
		return nil, fmt.Errorf("%s: %s holds no credentials", CredentialsFileKey, path)
	}
	return &BasicAuth{users: users}, nil
}

// RequireBasicAuth makes every request carry credentials a accepts, but Connect's internal ones with a
// valid signature (internal.go).
func (s *Server) RequireBasicAuth(a *BasicAuth) { s.auth = a }

// allow answers 401 with Connect's message unless the request carries known credentials.
func (a *BasicAuth) allow(w http.ResponseWriter, r *http.Request) bool {
	if user, password, ok := r.BasicAuth(); ok {
		if want, known := a.users[user]; known && subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1 {
			return true
		}
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="cdcd"`)
	writeError(w, http.StatusUnauthorized, "User cannot access the resource.")
	return false
}
