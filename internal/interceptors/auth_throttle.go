package interceptors

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/metrics"
)

// ReasonAuthThrottled: UNAUTHENTICATED, with RetryInfo: the caller's
// address failed authentication too often; its calls are refused, key
// unchecked, until the RetryInfo's delay has passed.
const ReasonAuthThrottled = "AUTHENTICATION_THROTTLED"

// LimitAuthFailures labels metrics.RateLimited for calls AuthThrottle
// refused.
const LimitAuthFailures = "auth_failures"

// AuthThrottleOptions configure an AuthThrottle.
type AuthThrottleOptions struct {
	// Burst is how many failed authentications an address may make in a
	// row before it is throttled; 0 turns throttling off (failures are
	// still logged per interval).
	Burst int
	// PerSecond is the rate at which an address earns back a try.
	PerSecond float64
	// LogInterval: an address's failures are logged at most once per
	// interval, each line counting those since the last.
	LogInterval time.Duration
}

// maxPeers bounds how many addresses AuthThrottle tracks at once.
const maxPeers = 10_000

// AuthThrottle limits failed authentication per peer address: each call
// that fails authentication (UNAUTHENTICATED from the auth link) takes a
// token from its address's bucket (Burst tokens, refilled at PerSecond).
// While the bucket is empty, the address's calls are refused before their
// key is looked at, UNAUTHENTICATED with reason AUTHENTICATION_THROTTLED
// and a RetryInfo saying when the next try is due: a key cannot be guessed
// faster than PerSecond, and a misconfigured client cannot flood the
// server. Failures are logged at warn, at most once per address and
// LogInterval, with how many there were; the logging link does not log
// such calls one by one.
//
// The address is the connection's peer: IPv4 addresses one by one, IPv6
// addresses by their /64. Behind a proxy or a mesh sidecar every caller
// shares the proxy's address (see docs/security.md).
//
// It is safe for concurrent use.
type AuthThrottle struct {
	opts    AuthThrottleOptions
	log     *slog.Logger
	metrics *metrics.Metrics
	now     func() time.Time

	mu    sync.Mutex
	peers map[netip.Prefix]*peerFailures
}

// peerFailures is one address's bucket and what is still to be logged.
type peerFailures struct {
	limiter   *rate.Limiter // nil when throttling is off
	failures  int           // since the last log line
	throttled int           // refused since the last log line
	reason    string        // of the last failure
	logged    time.Time     // the last log line
}

// NewAuthThrottle returns an AuthThrottle; log and m may be nil.
func NewAuthThrottle(o AuthThrottleOptions, log *slog.Logger, m *metrics.Metrics) *AuthThrottle {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.PerSecond <= 0 {
		o.Burst = 0 // Validate refuses this; never divide by it
	}
	return &AuthThrottle{opts: o, log: log, metrics: m, now: time.Now, peers: map[netip.Prefix]*peerFailures{}}
}

// Link returns the chain link, which goes right before the auth link. With
// no keys there is nothing to fail, and it does nothing.
func (a *AuthThrottle) Link(keys *auth.Keyring) Link {
	if keys.Len() == 0 {
		return noop("auth_throttle")
	}
	return Link{
		Name: "auth_throttle",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := a.admit(ctx); err != nil {
				return nil, err
			}
			resp, err := h(ctx, req)
			a.observe(ctx, err)
			return resp, err
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := a.admit(ss.Context()); err != nil {
				return err
			}
			err := h(srv, ss)
			a.observe(ss.Context(), err)
			return err
		},
	}
}

// admit refuses a call from an address whose bucket is empty.
func (a *AuthThrottle) admit(ctx context.Context) error {
	if a.opts.Burst <= 0 {
		return nil
	}
	addr := peerPrefix(ctx)
	now := a.now()
	a.mu.Lock()
	p := a.peers[addr]
	if p == nil || p.limiter.TokensAt(now) >= 1 {
		a.mu.Unlock()
		return nil
	}
	p.throttled++
	a.logLocked(addr, p, now)
	wait := time.Duration((1 - p.limiter.TokensAt(now)) / a.opts.PerSecond * float64(time.Second))
	a.mu.Unlock()
	a.metrics.RateLimited(LimitAuthFailures)
	wait = max(wait.Round(time.Millisecond), time.Millisecond)
	return statusError(codes.Unauthenticated, ReasonAuthThrottled,
		"too many failed authentications from "+peerName(addr)+"; try again in "+wait.String(),
		map[string]string{"peer": peerName(addr)}, wait)
}

// observe counts a call that failed authentication against its address.
func (a *AuthThrottle) observe(ctx context.Context, err error) {
	if status.Code(err) != codes.Unauthenticated {
		return
	}
	reason := ""
	if ei := errorInfo(err); ei != nil {
		reason = ei.GetReason()
	}
	addr := peerPrefix(ctx)
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.peers[addr]
	if p == nil {
		if len(a.peers) >= maxPeers {
			a.pruneLocked(now)
		}
		p = &peerFailures{}
		if a.opts.Burst > 0 {
			p.limiter = rate.NewLimiter(rate.Limit(a.opts.PerSecond), a.opts.Burst)
		}
		a.peers[addr] = p
	}
	if p.limiter != nil {
		p.limiter.AllowN(now, 1)
	}
	p.failures++
	p.reason = reason
	a.logLocked(addr, p, now)
}

// logLocked writes the address's line when its interval has passed.
func (a *AuthThrottle) logLocked(addr netip.Prefix, p *peerFailures, now time.Time) {
	if !p.logged.IsZero() && now.Sub(p.logged) < a.opts.LogInterval {
		return
	}
	a.log.Warn("failed authentication", "peer", peerName(addr), "failures", p.failures,
		"throttled", p.throttled, "reason", p.reason, "interval", a.opts.LogInterval)
	p.failures, p.throttled, p.logged = 0, 0, now
}

// pruneLocked forgets addresses whose bucket is full again, then, if there
// are still too many, any addresses.
func (a *AuthThrottle) pruneLocked(now time.Time) {
	for addr, p := range a.peers {
		if p.limiter == nil || p.limiter.TokensAt(now) >= float64(a.opts.Burst) {
			delete(a.peers, addr)
		}
	}
	for addr := range a.peers {
		if len(a.peers) < maxPeers {
			break
		}
		delete(a.peers, addr)
	}
}

// peerPrefix is the call's peer address: an IPv4 address, or an IPv6
// address's /64; the zero Prefix for a peer without an IP (bufconn).
func peerPrefix(ctx context.Context) netip.Prefix {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return netip.Prefix{}
	}
	var ip netip.Addr
	switch addr := p.Addr.(type) {
	case *net.TCPAddr:
		ip = addr.AddrPort().Addr().Unmap()
	default:
		ap, err := netip.ParseAddrPort(addr.String())
		if err != nil {
			return netip.Prefix{}
		}
		ip = ap.Addr().Unmap()
	}
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	pfx, _ := ip.Prefix(bits)
	return pfx
}

// peerName is how logs and errors name an address.
func peerName(p netip.Prefix) string {
	switch {
	case !p.IsValid():
		return "local"
	case p.Bits() == 32:
		return p.Addr().String()
	}
	return p.String()
}
