package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestPortIsOutsideTheEphemeralRange: the port is one no outgoing
// connection is given (below the kernel's ephemeral range), and it can be
// bound.
func TestPortIsOutsideTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	if low-lowest < 1000 {
		t.Skipf("the ephemeral range starts at %d: no room below it", low)
	}
	seen := map[int]bool{}
	for range 20 {
		p := For(t)
		if p < lowest || p >= low {
			t.Fatalf("port %d, want one in [%d, %d)", p, lowest, low)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d cannot be bound: %v", p, err)
		}
		l.Close()
		seen[p] = true
	}
	if len(seen) < 10 {
		t.Errorf("20 calls gave %d distinct ports; two tests asking at once would often get the same one", len(seen))
	}
}

// TestPortSkipsATakenPort: a port a listener holds is never returned.
func TestPortSkipsATakenPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if free(l.Addr().(*net.TCPAddr).Port) {
		t.Fatalf("free says %v is free while it is listened on", l.Addr())
	}
}
