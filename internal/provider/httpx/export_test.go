package httpx

import (
	"context"
	"net"
)

// DialFunc is a transport's dialer.
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// SetTestDial makes the clients built from now on dial through wrap (to
// reach a made-up host name on loopback) until restore is called.
func SetTestDial(wrap func(DialFunc) DialFunc) (restore func()) {
	testDial = func(d dialFunc) dialFunc { return wrap(d) }
	return func() { testDial = nil }
}

// SetTestWaiting makes f run whenever a request starts waiting for an
// HTTP/2 stream slot, until restore is called.
func SetTestWaiting(f func()) (restore func()) {
	testWaiting = f
	return func() { testWaiting = nil }
}
