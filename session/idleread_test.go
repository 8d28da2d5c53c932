package session

import (
	"net"
	"testing"
	"time"
)

// TestIdleReaderWaitsWithoutBuffer: the frame reader gives its buffer back
// when nothing is buffered, waits for the next bytes without one (and
// without allocating), and reads them whole.
func TestIdleReaderWaitsWithoutBuffer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	fr := newFrameReader(server)
	if fr.raw == nil && canPeek {
		t.Fatal("a TCP connection should wait for readability without a buffer")
	}
	fd := 0
	_ = fr.raw.Control(func(f uintptr) { fd = int(f) })
	if n := testing.AllocsPerRun(100, func() { peekReady(uintptr(fd), fr.peek[:]) }); n != 0 {
		t.Fatalf("peeking allocates %v times", n)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = client.Write([]byte("hello"))
	}()
	fr.idle()
	b := make([]byte, 5)
	if _, err := fr.reader().Read(b); err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v", b, err)
	}
	fr.idle()
	if fr.br != nil {
		t.Fatal("an idle reader kept its buffer")
	}
}
