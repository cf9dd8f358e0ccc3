package kafka

import (
	"context"
	"io"
	"net"
	"testing"
)

// TestCountTraffic: a counted transport's connections add what they read and write.
func TestCountTraffic(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err == nil {
			c.Write([]byte("hello, client"))
		}
	}()
	tr := NewTransport(ClientSecurity{}, "test")
	traffic := CountTraffic(tr)
	c, err := tr.Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 13)); err != nil {
		t.Fatal(err)
	}
	if in, out := traffic.Bytes(); in != 13 || out != 5 {
		t.Errorf("Bytes() = %d, %d; want 13, 5", in, out)
	}
}
