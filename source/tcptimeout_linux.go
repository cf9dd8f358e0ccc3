package source

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// UnackedTimeout is how long what cdcd sent to a database may stay unacknowledged by the server's TCP stack
// before the kernel drops the connection (TCP_USER_TIMEOUT). A network partition drops packets without a
// reset or a FIN: without this bound a connection that only waits to read (a replication stream, an idle
// query connection) would notice it only when TCP gives up retransmitting, some 15 minutes later. Every
// replication connection sends a status update at least every status interval, and keepalive probes cover
// the idle ones, so a partition is found out within this bound; a busy server still acknowledges at the TCP
// level, so a slow answer is never taken for a lost connection.
const UnackedTimeout = 30 * time.Second

// BoundUnacked is a net.Dialer's Control that sets UnackedTimeout on each TCP connection it opens.
func BoundUnacked(network, address string, c syscall.RawConn) error {
	var sockErr error
	err := c.Control(func(fd uintptr) {
		sockErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(UnackedTimeout/time.Millisecond))
	})
	if err != nil {
		return err
	}
	return sockErr
}
