//go:build unix

package httpx

import "syscall"

// awaitBytes waits until c's socket has bytes to read, or an end (EOF, an
// error, its read deadline, its closing), without reading any: the caller
// takes a read buffer only once there is something to put in it. What
// ended the wait is left for the read that follows to report. A connection
// that is not a socket returns at once.
func awaitBytes(c *h1Conn) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	var b [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if err == syscall.EAGAIN && testAwaiting != nil {
			testAwaiting(c)
		}
		return err != syscall.EAGAIN
	})
}
