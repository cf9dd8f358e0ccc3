package testenv

import (
	"io"
	"net"
	"testing"
)

// OtherHostAddr is a loopback address the servers' certificate does not name (it names 127.0.0.1 and
// localhost only).
const OtherHostAddr = "127.0.0.2"

// ForwardFromOtherHost listens on OtherHostAddr and passes each connection on to addr: the same server,
// reached by an address its certificate lacks, for hostname verification tests of clients that verify the
// address they dial. It returns the listening address; the listener closes when t ends. It skips t where
// the loopback alias cannot be listened on.
func ForwardFromOtherHost(t testing.TB, addr string) string {
	t.Helper()
	l, err := net.Listen("tcp", OtherHostAddr+":0")
	if err != nil {
		t.Skipf("testenv: cannot listen on %s for an address the certificate lacks: %v", OtherHostAddr, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return l.Addr().String()
}
