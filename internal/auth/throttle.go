package auth

import (
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ThrottleConfig is the auth.throttle section: after Burst failed
// authentications in a row from one address, the address's failed
// authentications are refused as throttled until it earns back a try, one
// per 1/PerSecond. Failures are logged at most once per address and
// LogInterval.
type ThrottleConfig struct {
	// Burst: failures an address may make in a row; 0 turns throttling off.
	Burst int `yaml:"burst"`
	// PerSecond: how fast a throttled address earns back tries.
	PerSecond float64 `yaml:"per_second"`
	// LogInterval: at most one log line per address and interval.
	LogInterval time.Duration `yaml:"log_interval"`
}

// maxAddrs bounds how many addresses a Throttle tracks at once.
const maxAddrs = 10_000

// Throttle limits failed authentications per client address: each failed
// authentication takes a token from its address's bucket (Burst tokens,
// refilled at PerSecond), and while the bucket is empty the address's
// failed authentications are refused as throttled. Only failures are
// throttled: a caller that presents a valid key is never refused because
// of its address, so one client's bad key cannot lock out the others that
// share its address (a proxy's, a NAT's). Failures are logged at warn, at
// most once per address and LogInterval, with how many there were.
//
// A Throttle outlives config reloads: the server keeps one and Configure
// applies a reloaded auth.throttle to it, so that a throttled address
// stays throttled. It is safe for concurrent use.
type Throttle struct {
	log *slog.Logger
	now func() time.Time

	mu    sync.Mutex
	cfg   ThrottleConfig
	addrs map[netip.Prefix]*addrFailures
}

// addrFailures is one address's bucket and what is still to be logged.
type addrFailures struct {
	limiter   *rate.Limiter // nil when throttling is off
	failures  int           // since the last log line
	throttled int           // refused since the last log line
	reason    string        // of the last failure
	logged    time.Time     // the last log line
}

// NewThrottle returns a Throttle with cfg; log may be nil.
func NewThrottle(cfg ThrottleConfig, log *slog.Logger) *Throttle {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Throttle{log: log, now: time.Now, cfg: normalize(cfg), addrs: map[netip.Prefix]*addrFailures{}}
}

// SetClock replaces the throttle's clock (tests).
func (t *Throttle) SetClock(now func() time.Time) { t.now = now }

func normalize(cfg ThrottleConfig) ThrottleConfig {
	if cfg.PerSecond <= 0 {
		cfg.Burst = 0 // config validation refuses this; never divide by it
	}
	return cfg
}

// Configure applies cfg, a reloaded auth.throttle. The same settings
// change nothing; new ones take effect at once for every address tracked,
// each keeping the tries it has left (at most the new burst). Turning the
// throttle off forgets the buckets.
func (t *Throttle) Configure(cfg ThrottleConfig) {
	cfg = normalize(cfg)
	t.mu.Lock()
	defer t.mu.Unlock()
	if cfg == t.cfg {
		return
	}
	now := t.now()
	for _, a := range t.addrs {
		switch {
		case cfg.Burst <= 0:
			a.limiter = nil
		case a.limiter == nil:
			a.limiter = rate.NewLimiter(rate.Limit(cfg.PerSecond), cfg.Burst)
		default:
			a.limiter.SetLimitAt(now, rate.Limit(cfg.PerSecond))
			a.limiter.SetBurstAt(now, cfg.Burst)
		}
	}
	t.cfg = cfg
}

// Config returns the settings in force.
func (t *Throttle) Config() ThrottleConfig {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cfg
}

// Fail counts a failed authentication from addr (for reason, which the log
// line reports) in the call requestID. It returns 0 when the failure is
// counted, and the wait before addr may try again when the address is
// throttled: its bucket is empty, the failure takes no token and the call
// is to be refused as throttled. A log line written at this failure
// carries requestID, the id its client's refusal gives: a client's report
// of the one refusal of an interval that was logged finds its line.
func (t *Throttle) Fail(addr netip.Prefix, reason, requestID string) (wait time.Duration) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.addrs[addr]
	if a == nil {
		if len(t.addrs) >= maxAddrs {
			t.pruneLocked(now)
		}
		a = &addrFailures{}
		if t.cfg.Burst > 0 {
			a.limiter = rate.NewLimiter(rate.Limit(t.cfg.PerSecond), t.cfg.Burst)
		}
		t.addrs[addr] = a
	}
	if a.limiter != nil && a.limiter.TokensAt(now) < 1 {
		a.throttled++
		t.logLocked(addr, a, now, requestID)
		wait = time.Duration((1 - a.limiter.TokensAt(now)) / t.cfg.PerSecond * float64(time.Second))
		return max(wait.Round(time.Millisecond), time.Millisecond)
	}
	if a.limiter != nil {
		a.limiter.AllowN(now, 1)
	}
	a.failures++
	a.reason = reason
	t.logLocked(addr, a, now, requestID)
	return 0
}

// logLocked writes the address's line when its interval has passed, at
// the failure of the call requestID.
func (t *Throttle) logLocked(addr netip.Prefix, a *addrFailures, now time.Time, requestID string) {
	if !a.logged.IsZero() && now.Sub(a.logged) < t.cfg.LogInterval {
		return
	}
	t.log.Warn("failed authentication", "peer", AddrName(addr), "failures", a.failures,
		"throttled", a.throttled, "reason", a.reason, "interval", t.cfg.LogInterval, "request_id", requestID)
	a.failures, a.throttled, a.logged = 0, 0, now
}

// pruneLocked forgets addresses whose bucket is full again, then, if there
// are still too many, any addresses.
func (t *Throttle) pruneLocked(now time.Time) {
	for addr, a := range t.addrs {
		if a.limiter == nil || a.limiter.TokensAt(now) >= float64(t.cfg.Burst) {
			delete(t.addrs, addr)
		}
	}
	for addr := range t.addrs {
		if len(t.addrs) < maxAddrs {
			break
		}
		delete(t.addrs, addr)
	}
}

// AddrKey is the address a client's failures count against: an IPv4
// address, or an IPv6 address's /64; the zero Prefix for a client without
// an IP address (an in-process connection).
func AddrKey(ip netip.Addr) netip.Prefix {
	if !ip.IsValid() {
		return netip.Prefix{}
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	pfx, _ := ip.Prefix(bits)
	return pfx
}

// AddrName is how logs and errors name an AddrKey.
func AddrName(p netip.Prefix) string {
	switch {
	case !p.IsValid():
		return "local"
	case p.Bits() == 32:
		return p.Addr().String()
	}
	return p.String()
}

// ClientAddr returns the address of the client behind a call: its
// transport peer, unless the peer is one of the trusted proxies, in which
// case the nearest address the forwarded-for header values (X-Forwarded-For,
// each a comma-separated list, the nearest proxy last) name that is not a
// trusted proxy itself. A header from any other peer is ignored: a client
// cannot choose the address its failures count against. When every
// address in the header is trusted, or an entry does not parse, the last
// address that did is the client's.
func ClientAddr(peer netip.Addr, forwardedFor []string, trusted []netip.Prefix) netip.Addr {
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer
	}
	client := peer
	for i := len(forwardedFor) - 1; i >= 0; i-- {
		entries := strings.Split(forwardedFor[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			ip, err := parseForwarded(entries[j])
			if err != nil {
				return client
			}
			client = ip
			if !isTrusted(ip, trusted) {
				return ip
			}
		}
	}
	return client
}

// parseForwarded parses one X-Forwarded-For entry: an IP address, an IPv6
// address in brackets, or either with a port.
func parseForwarded(s string) (netip.Addr, error) {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), nil
	}
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	return ip.Unmap(), err
}

// Trusted reports whether ip is one of the trusted proxies.
func Trusted(ip netip.Addr, trusted []netip.Prefix) bool { return isTrusted(ip.Unmap(), trusted) }

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies parses auth.trusted_proxies: each an IP address or a
// CIDR prefix. It returns the index of the first entry that is neither.
func ParseTrustedProxies(list []string) ([]netip.Prefix, int, error) {
	out := make([]netip.Prefix, 0, len(list))
	for i, s := range list {
		if ip, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, i, err
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, -1, nil
}
