//go:build !linux

package source

import (
	"syscall"
	"time"
)

// UnackedTimeout is the Linux bound of tcptimeout_linux.go; other systems keep their TCP defaults.
const UnackedTimeout = 30 * time.Second

// BoundUnacked does nothing outside Linux, which alone has TCP_USER_TIMEOUT as cdcd sets it.
func BoundUnacked(network, address string, c syscall.RawConn) error { return nil }
