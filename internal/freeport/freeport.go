// Package freeport finds loopback ports for tests that start a process
// (llmrelay, redis-server, a proxy) on a port named in advance.
//
// The usual way, binding 127.0.0.1:0 and closing, returns a port from the
// kernel's ephemeral range, the same range every outgoing connection on the
// machine takes its local port from: between the close and the child's
// bind, a connection another test process opens (to Redis, to an upstream)
// can take it, and the child fails with "address already in use". Port
// returns a port below that range instead, chosen at random and checked
// free, so only another listener could take it, and two tests that both
// ask are unlikely to be handed the same one.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// lowest is the first port Port considers: clear of the well-known and
// commonly configured ports below it.
const lowest = 20000

// Port returns a TCP port on 127.0.0.1 that was free a moment ago and that
// no outgoing connection will be given.
func Port() (int, error) {
	high := ephemeralLow()
	if high-lowest >= 1000 {
		for range 100 {
			p := lowest + rand.IntN(high-lowest)
			if free(p) {
				return p, nil
			}
		}
	}
	// A kernel whose ephemeral range starts low leaves nothing below it;
	// fall back on a port it chooses.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Addr returns "127.0.0.1:PORT" for a Port, failing t when none is found.
func Addr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(For(t)))
}

// For returns a Port, failing t when none is found.
func For(t testing.TB) int {
	t.Helper()
	p, err := Port()
	if err != nil {
		t.Fatalf("freeport: %v", err)
	}
	return p
}

func free(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralLow returns the first port of Linux's ephemeral range, or 32768
// (its default) where the range cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var low, high int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &low, &high); err != nil || low <= 0 {
		return 32768
	}
	return low
}
