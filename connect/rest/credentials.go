package rest

import (
	"maps"
	"slices"
)

// FirstUser is the credentials file's first user by name and its password: what a client on the daemon's own
// machine (`cdcd health`) authenticates with, reading the file the daemon reads.
func (a *BasicAuth) FirstUser() (user, password string) {
	user = slices.Sorted(maps.Keys(a.users))[0] // LoadBasicAuth refuses a file without users
	return user, a.users[user]
}
