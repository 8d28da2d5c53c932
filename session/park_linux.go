package session

import (
	"sync"
	"syscall"
)

// parker holds the connections idle for longer than parkAfter without a
// goroutine: their sockets are registered (one-shot) with an epoll set of
// its own, watched by one goroutine, which starts a reader for a
// connection when its socket becomes readable. An idle session then costs
// no goroutine stack at all.
//
// A socket stays in the set from its first parking until it closes: the
// one-shot event disarms it when it fires, and the next parking re-arms it
// (EPOLL_CTL_MOD), so waking a parked connection costs no epoll_ctl at
// all and parking it again one modification, not a deletion and an
// insertion each time (a herd of watchers wakes every parked connection).
type parker struct {
	epfd int
	wake [2]int // a pipe: a byte on it stops the loop (Server.Close)
	mu   sync.Mutex
	byFD map[int32]*conn
	// low is the fewest connections parked since the last burst of
	// parking made the server return memory (reclaimParked).
	low int
}

// newParker returns a running parker, or nil where epoll is unavailable
// (connections then wait in their goroutines).
func newParker() *parker {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	p := &parker{epfd: epfd, byFD: make(map[int32]*conn)}
	if err := syscall.Pipe2(p.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		syscall.Close(epfd)
		return nil
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(p.wake[0])}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p.wake[0], &ev); err != nil {
		p.closeFDs()
		return nil
	}
	go p.loop()
	return p
}

func (p *parker) closeFDs() {
	syscall.Close(p.wake[0])
	syscall.Close(p.wake[1])
	syscall.Close(p.epfd)
}

// park registers c's socket fd; c's reader goroutine returns after it. It
// reports false (c must wait in its goroutine) if fd cannot be watched.
//
// A connection going away (killed, or closing after a flush) is not
// parked: its writer's unpark may have run already, and its socket,
// closed next, would leave the epoll set without an event, leaving the
// connection parked for good and Server.Close waiting for it. The writer
// marks the connection gone before its unpark takes mu, so either this
// sees it, or unpark finds the connection parked and resumes it.
func (p *parker) park(fd int, c *conn) bool {
	p.mu.Lock()
	if c.out.isGone() {
		p.mu.Unlock()
		return false
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: int32(fd)}
	op := syscall.EPOLL_CTL_ADD
	if c.watchedFD == int32(fd) {
		op = syscall.EPOLL_CTL_MOD // in the set, disarmed since it fired
	}
	if syscall.EpollCtl(p.epfd, op, fd, &ev) != nil {
		p.mu.Unlock()
		return false
	}
	c.watchedFD = int32(fd)
	p.byFD[int32(fd)] = c
	c.parkedFD = int32(fd)
	n := len(p.byFD)
	p.low = min(p.low, n)
	burst := n-p.low >= reclaimParked
	if burst {
		p.low = n
	}
	p.mu.Unlock()
	if burst {
		c.srv.backlog.schedule()
	}
	return true
}

// unpark takes c's socket out of the set (it is about to be closed: the
// fd must leave the set first, or a new connection given the same number
// could be mistaken for it) and, if c is parked, starts its reader, which
// then finds the socket closed and tears the connection down.
func (p *parker) unpark(c *conn) {
	p.mu.Lock()
	if c.watchedFD >= 0 {
		_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, int(c.watchedFD), nil)
		c.watchedFD = -1
	}
	resume := p.takeLocked(c.parkedFD, c)
	p.mu.Unlock()
	if resume {
		go c.resume()
	}
}

// take marks c, parked on fd, as no longer parked, reporting whether it
// was (exactly one of the loop and unpark resumes a parked connection).
// Its socket stays in the set, disarmed by the one-shot event that fired.
func (p *parker) take(fd int32, c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeLocked(fd, c)
}

func (p *parker) takeLocked(fd int32, c *conn) bool {
	if fd < 0 || c == nil || p.byFD[fd] != c {
		return false
	}
	delete(p.byFD, fd)
	c.parkedFD = -1
	return true
}

// stop ends the loop.
func (p *parker) stop() { _, _ = syscall.Write(p.wake[1], []byte{0}) }

func (p *parker) loop() {
	defer p.closeFDs()
	events := make([]syscall.EpollEvent, 64)
	for {
		n, err := syscall.EpollWait(p.epfd, events, -1)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			return
		}
		for _, ev := range events[:n] {
			if int(ev.Fd) == p.wake[0] {
				return
			}
			p.mu.Lock()
			c := p.byFD[ev.Fd]
			p.mu.Unlock()
			if p.take(ev.Fd, c) {
				go c.resume()
			}
		}
	}
}
