package postgres

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// TestReadTimeoutConn: database.socketTimeout fails a read that receives nothing in time, and a deadline
// pgconn sets to interrupt a read (its context ended) still applies when it is earlier.
func TestReadTimeoutConn(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := &readTimeoutConn{Conn: client, timeout: 50 * time.Millisecond}
	start := time.Now()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the timeout took %v", d)
	}

	c.timeout = time.Hour
	if err := c.SetDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("read after pgconn's deadline: %v after %v", err, time.Since(start))
	}

	go server.Write([]byte{1})
	if err := c.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("read with data: %d, %v", n, err)
	}
}
