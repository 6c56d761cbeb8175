//go:build !unix

package httpx

// byteWaiter is not needed where a socket cannot be polled without a read.
type byteWaiter struct{}

// awaitBytes returns at once, false, where a socket cannot be polled
// without a read: the head buffer is taken before the response's first
// byte, and a stream's reader waits in a buffer.
func awaitBytes(*h1Conn) bool { return false }
