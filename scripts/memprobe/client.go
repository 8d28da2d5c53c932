package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// client is a raw ZooKeeper session.
type client struct {
	nc net.Conn
	br *bufio.Reader
}

// connect opens a session.
func connect(addr string) (*client, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("memprobe: dial: %w", err)
	}
	c := &client{nc: nc, br: bufio.NewReaderSize(nc, 512)}
	if err := c.send(&jute.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}); err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := jute.ReadFrame(c.br, nil, 1<<10); err != nil {
		nc.Close()
		return nil, fmt.Errorf("memprobe: handshake: %w", err)
	}
	_ = nc.SetReadDeadline(time.Time{})
	return c, nil
}

// send writes one frame of recs.
func (c *client) send(recs ...jute.Record) error {
	var w jute.Writer
	at := jute.BeginFrame(&w)
	for _, r := range recs {
		r.Encode(&w)
	}
	jute.EndFrame(&w, at)
	_ = c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(w.Buf); err != nil {
		return fmt.Errorf("memprobe: write: %w", err)
	}
	return nil
}

// call sends a request and reads its reply (no watches are set, so the
// next frame is the reply).
func (c *client) call(xid int32, op jute.Op, body jute.Record) (jute.ReplyHeader, error) {
	var h jute.ReplyHeader
	if err := c.send(&jute.RequestHeader{Xid: xid, Type: op}, body); err != nil {
		return h, err
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	f, err := jute.ReadFrame(c.br, nil, 4<<20)
	if err != nil {
		return h, fmt.Errorf("memprobe: read: %w", err)
	}
	err = h.Decode(jute.NewReader(f))
	return h, err
}

// flood pipelines n getData requests for path and never reads.
func (c *client) flood(path string, n int) {
	var w jute.Writer
	for i := 0; i < n; i++ {
		w.Reset()
		at := jute.BeginFrame(&w)
		(&jute.RequestHeader{Xid: int32(i + 1), Type: jute.OpGetData}).Encode(&w)
		(&jute.PathWatchRequest{Path: path}).Encode(&w)
		jute.EndFrame(&w, at)
		_ = c.nc.SetWriteDeadline(time.Now().Add(time.Minute))
		if _, err := c.nc.Write(w.Buf); err != nil {
			return
		}
	}
}

// idle keeps the session alive with a ping every period, discarding
// replies, until the connection is closed.
func (c *client) idle(period time.Duration) {
	go func() { _, _ = io.Copy(io.Discard, c.nc) }()
	ping := jute.RequestHeader{Xid: -2, Type: jute.OpPing}
	for {
		time.Sleep(period)
		if err := c.send(&ping); err != nil {
			return
		}
	}
}
