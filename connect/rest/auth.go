package rest

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/cdcd/cdcd/connect/config"
)

// BasicAuth checks HTTP basic credentials against a credentials file as Connect's
// PropertyFileLoginModule reads it: a Java properties file of `user: password` (or `user=password`)
// lines, the whole value being the password. Users named by rest.basic.auth.readonly.users may only read.
type BasicAuth struct {
	users    map[string]string
	readOnly map[string]bool
}

// CredentialsFileKey is the worker property naming the credentials file of the REST API's HTTP basic
// authentication (cdcd's key: Connect reaches the same file through a JAAS config).
const CredentialsFileKey = "rest.basic.auth.credentials.file"

// LoadBasicAuth reads a credentials file.
func LoadBasicAuth(path string) (*BasicAuth, error) { return loadCredentials(path, CredentialsFileKey) }

// loadCredentials reads a credentials file; errors begin with origin, the setting that named it.
func loadCredentials(path, origin string) (*BasicAuth, error) {
	props, err := config.LoadPropertiesFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", origin, err)
	}
	users := config.PropertiesMap(props)
	if len(users) == 0 {
		return nil, fmt.Errorf("%s: %s holds no credentials", origin, path)
	}
	return &BasicAuth{users: users}, nil
}

// ReadOnlyUsersKey is the worker property (cdcd's own; Connect has no roles) listing, comma-separated, the
// users of the credentials file who may only read: GET and HEAD (statuses, configs, /metrics, /health, the
// status page), never a change, a restart or a signal. Every other user may do everything.
const ReadOnlyUsersKey = "rest.basic.auth.readonly.users"

// markReadOnly marks the users of list (ReadOnlyUsersKey's value) read-only; each must be in the file.
func (a *BasicAuth) markReadOnly(list, path string) error {
	a.readOnly = map[string]bool{}
	for _, user := range strings.Split(list, ",") {
		if user = strings.TrimSpace(user); user == "" {
			continue
		}
		if _, known := a.users[user]; !known {
			return fmt.Errorf("%s: user %q is not in the credentials file %s; add the user to the file or remove it from the list", ReadOnlyUsersKey, user, path)
		}
		a.readOnly[user] = true
	}
	return nil
}

// mayChange answers 403 to a read-only user's request that is not a GET, HEAD or OPTIONS. allow has
// checked the credentials.
func (a *BasicAuth) mayChange(w http.ResponseWriter, r *http.Request) bool {
	user, _, _ := r.BasicAuth()
	if readMethod(r.Method) || !a.readOnly[user] {
		return true
	}
	writeError(w, http.StatusForbidden, "User "+user+" may only read ("+ReadOnlyUsersKey+"): GET and HEAD requests, not "+methodName(r.Method))
	return false
}

// methodName is the method as a message may quote it: one of Connect's, or "this method" (a client's
// made-up method is not echoed).
func methodName(method string) string {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return method
	}
	return "this method"
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
