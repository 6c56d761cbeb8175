package auth_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/auth"
)

func TestClientAddr(t *testing.T) {
	trusted, _, err := auth.ParseTrustedProxies([]string{"10.0.0.0/8", "192.0.2.1", "::ffff:198.51.100.0/120"})
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	tests := []struct {
		name string
		peer string
		xff  []string
		want string
	}{
		{"an untrusted peer's header is ignored", "203.0.113.9", []string{"198.51.100.7"}, "203.0.113.9"},
		{"a trusted proxy names the client", "10.1.2.3", []string{"203.0.113.9"}, "203.0.113.9"},
		{"the nearest untrusted address, behind two proxies", "10.1.2.3", []string{"6.6.6.6, 203.0.113.9, 192.0.2.1"}, "203.0.113.9"},
		{"several header values, the last nearest", "10.1.2.3", []string{"6.6.6.6", "203.0.113.9"}, "203.0.113.9"},
		{"a port and brackets", "10.1.2.3", []string{"[2001:db8::1]:443"}, "2001:db8::1"},
		{"an IPv4 address with a port", "10.1.2.3", []string{"203.0.113.9:5000"}, "203.0.113.9"},
		{"garbage stops the walk at the last good address", "10.1.2.3", []string{"6.6.6.6, unknown, 10.9.9.9"}, "10.9.9.9"},
		{"no header: the proxy itself", "10.1.2.3", nil, "10.1.2.3"},
		{"every address trusted: the farthest", "10.1.2.3", []string{"10.0.0.5, 192.0.2.1"}, "10.0.0.5"},
		{"a mapped IPv4 peer in a mapped prefix", "::ffff:198.51.100.3", []string{"203.0.113.9"}, "203.0.113.9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := auth.ClientAddr(ip(tc.peer), tc.xff, trusted); got != ip(tc.want) {
				t.Errorf("ClientAddr(%s, %q) = %s, want %s", tc.peer, tc.xff, got, tc.want)
			}
		})
	}
	if _, i, err := auth.ParseTrustedProxies([]string{"10.0.0.0/8", "proxy.internal"}); err == nil || i != 1 {
		t.Errorf("a host name: index %d, error %v; want index 1 refused", i, err)
	}
}

// TestThrottleCountsOnlyFailuresPerAddress: an address's failures past
// the burst are throttled, with the wait until its next try; another
// address is not; Configure applies new settings and keeps what is left.
func TestThrottleCountsOnlyFailuresPerAddress(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	th := auth.NewThrottle(auth.ThrottleConfig{Burst: 2, PerSecond: 0.5, LogInterval: time.Minute}, nil)
	th.SetClock(func() time.Time { return now })
	a, b := auth.AddrKey(netip.MustParseAddr("203.0.113.9")), auth.AddrKey(netip.MustParseAddr("2001:db8:1:2::7"))
	for range 2 {
		if w := th.Fail(a, "API_KEY_UNKNOWN", ""); w != 0 {
			t.Fatalf("within the burst: throttled for %v", w)
		}
	}
	if w := th.Fail(a, "API_KEY_UNKNOWN", ""); w != 2*time.Second {
		t.Errorf("past the burst: wait %v, want 2s (one try per 2s)", w)
	}
	if w := th.Fail(b, "API_KEY_UNKNOWN", ""); w != 0 {
		t.Errorf("another address: throttled for %v", w)
	}
	th.Configure(auth.ThrottleConfig{Burst: 2, PerSecond: 0.5, LogInterval: time.Minute})
	if w := th.Fail(a, "API_KEY_UNKNOWN", ""); w == 0 {
		t.Error("the same settings reconfigured: the address got a fresh burst")
	}
	th.Configure(auth.ThrottleConfig{Burst: 2, PerSecond: 10, LogInterval: time.Minute})
	now = now.Add(100 * time.Millisecond)
	if w := th.Fail(a, "API_KEY_UNKNOWN", ""); w != 0 {
		t.Errorf("a faster refill takes effect: still throttled for %v", w)
	}
}
