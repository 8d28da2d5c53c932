package fourletter

import (
	"net"
	"testing"
	"time"
)

func TestAskAndField(t *testing.T) {
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
		buf := make([]byte, 4)
		_, _ = c.Read(buf)
		if string(buf) == "srvr" {
			_, _ = c.Write([]byte("Zookeeper version: x\nMode: leader\nNode count: 5\n"))
		}
		c.Close()
	}()
	out := Ask(ln.Addr().String(), "srvr")
	if Field(out, "Mode: ") != "leader" || Field(out, "Node count: ") != "5" || Field(out, "Zxid: ") != "" {
		t.Fatalf("%q", out)
	}
	if Ask("127.0.0.1:1", "srvr") != "" {
		t.Fatal("answer from a closed port")
	}
}

func TestAskWithinTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			time.Sleep(2 * time.Second) // never answers in time
		}
	}()
	start := time.Now()
	if _, err := AskWithin(ln.Addr().String(), "ruok", 200*time.Millisecond); err == nil {
		t.Fatal("no error from a server that does not answer")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("AskWithin took %v with a 200ms timeout", d)
	}
}
