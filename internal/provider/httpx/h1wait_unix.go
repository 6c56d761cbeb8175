//go:build unix

package httpx

import "syscall"

// byteWaiter is what an h1Conn needs to wait for bytes on its socket,
// made once per connection, so that a request's wait allocates nothing.
type byteWaiter struct {
	rc   syscall.RawConn // nil: not a socket
	peek func(fd uintptr) bool
	c    *h1Conn
	b    [1]byte
}

// awaitBytes waits until c's socket has bytes to read, or an end (EOF, an
// error, its read deadline, its closing), without reading any: the caller
// takes a read buffer only once there is something to put in it. What
// ended the wait is left for the read that follows to report. It reports
// whether it waited so: a connection that is not a socket returns at
// once, false.
func awaitBytes(c *h1Conn) bool {
	w := c.waiter
	if w == nil {
		w = &byteWaiter{c: c}
		if sc, ok := c.Conn.(syscall.Conn); ok {
			w.rc, _ = sc.SyscallConn()
		}
		w.peek = w.ready
		c.waiter = w
	}
	if w.rc == nil {
		return false
	}
	_ = w.rc.Read(w.peek)
	return true
}

// ready is RawConn.Read's callback: whether the socket has a byte to read
// (or an end to report), looked at without taking it.
func (w *byteWaiter) ready(fd uintptr) bool {
	_, _, err := syscall.Recvfrom(int(fd), w.b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	if err == syscall.EAGAIN && testAwaiting != nil {
		testAwaiting(w.c)
	}
	return err != syscall.EAGAIN
}
