//go:build !unix

package httpx

// awaitBytes returns at once where a socket cannot be polled without a
// read: the head buffer is taken before the response's first byte.
func awaitBytes(*h1Conn) {}
