package interceptors

import (
	"context"
	"net"
	"net/netip"
	"time"

	grpcauth "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/route"

	"buf.build/go/protovalidate"
)

// The links below are the gRPC door's adapters of the engine's admission
// (engine.Admission): each runs one step, in engine.Order, and decides
// nothing itself.

// HeaderForwardedFor is the metadata key a proxy names the client in; it
// counts only from a trusted proxy (auth.ClientAddr).
const HeaderForwardedFor = "x-forwarded-for"

// caller describes a gRPC call as the engine's Caller: its
// `authorization` header, its peer, its X-Forwarded-For and its method.
func caller(ctx context.Context) engine.Caller {
	method, _ := grpc.Method(ctx)
	return engine.Caller{
		Credential:   auth.Bearer(metadata.ValueFromIncomingContext(ctx, "authorization")),
		Peer:         peerAddr(ctx),
		ForwardedFor: metadata.ValueFromIncomingContext(ctx, HeaderForwardedFor),
		Method:       method,
	}
}

// peerAddr is the IP address of the call's transport peer; invalid for a
// peer without one (bufconn, a Unix socket).
func peerAddr(ctx context.Context) netip.Addr {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return netip.Addr{}
	}
	if tcp, ok := p.Addr.(*net.TCPAddr); ok {
		return tcp.AddrPort().Addr().Unmap()
	}
	if n := p.Addr.Network(); n != "tcp" && n != "tcp4" && n != "tcp6" {
		return netip.Addr{} // bufconn, a Unix socket: no IP address to parse
	}
	ap, err := netip.ParseAddrPort(p.Addr.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// Auth authenticates every call with go-grpc-middleware's auth interceptor
// over the engine's Authenticator (see engine.Authenticator.Authenticate:
// the key first, then the failed-authentication throttle per client
// address). Wrap it in APIOnly so health and reflection need no key.
func Auth(a *engine.Authenticator) Link {
	authFunc := func(ctx context.Context) (context.Context, error) {
		return a.Authenticate(ctx, caller(ctx))
	}
	return Link{Name: "auth", Unary: grpcauth.UnaryServerInterceptor(authFunc), Steps: Steps{Enter: func(c *Call) error {
		ctx, err := authFunc(c.Context())
		if err != nil {
			return err
		}
		c.SetContext(ctx)
		return nil
	}}}
}

// KeyLimits applies the key's rate and stream limits
// (engine.KeyLimits.Admit) when the call starts, unary and stream calls
// alike, and holds the stream slot until the call ends. A Generate at its
// key's stream limit is decided by its request (engine.AtStreamLimit): a
// repeated Generate that attaches to a kept call passes.
func KeyLimits(kl *engine.KeyLimits) Link {
	return Link{
		Name: "key_limits",
		Unary: func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			release, err := kl.Admit(ctx, info.FullMethod)
			if err != nil {
				return nil, err
			}
			defer release()
			return h(ctx, req)
		},
		Steps: Steps{
			Enter: func(c *Call) error {
				release, atLimit, err := kl.Start(c.Context(), c.Info.FullMethod)
				switch {
				case err != nil:
					return err
				case atLimit != nil:
					c.OnRequest(atLimit)
					release = atLimit.Release
				}
				c.Set(release)
				return nil
			},
			Exit: releaseValue,
		},
	}
}

// StatusMargin is how long before a client's own deadline the Deadline
// link ends the call (engine.Deadlines.StatusMargin): the time the
// handler has, on a loaded machine, to notice the deadline and write its
// status before grpc-go's reset. A call ends at most a twentieth of its
// time early.
const StatusMargin = 250 * time.Millisecond

// releaseValue is the Exit of a link whose value is a func that lets go
// of what its Enter took (a slot, a deadline's timer).
func releaseValue(c *Call, err error) error {
	if release, ok := c.Value().(func()); ok {
		release()
	}
	return err
}

// Deadline gives the call its deadline (engine.Deadlines: def when the
// client set none, clamped to max; a client's own brought in by
// StatusMargin, so that the call's DEADLINE_EXCEEDED, with its ErrorInfo,
// goes out before grpc-go resets the stream at the client's deadline).
// Wrap it in APIOnly: a health watch may rightly last for days.
func Deadline(def, max time.Duration) Link {
	d := engine.Deadlines{Default: def, Max: max, StatusMargin: StatusMargin}
	return Link{
		Name: "deadline",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, cancel := d.Bound(ctx)
			defer cancel()
			return h(ctx, req)
		},
		Steps: Steps{
			Enter: func(c *Call) error {
				ctx, cancel := d.Bound(c.Context())
				c.SetContext(ctx)
				c.Set((func())(cancel))
				return nil
			},
			Exit: releaseValue,
		},
	}
}

// RequestSize refuses oversized requests (engine.RequestSize). It
// complements the server option grpc.MaxRecvMsgSize
// (limits.max_recv_msg_bytes), the hard cap gRPC applies while reading a
// message: gRPC answers that refusal itself, without llmrelay's ErrorInfo,
// so max_request_bytes sits below it and catches the oversized requests a
// client is likely to send with a typed error.
func RequestSize(maxBytes int) Link {
	if maxBytes <= 0 {
		return noop("request_size")
	}
	size := engine.RequestSize(maxBytes)
	return shallowCheck("request_size", size.Check, size.CheckShallow)
}

// Validate checks every request against its buf.validate rules
// (engine.Validator), after refusing one that did not decode
// (RequestCodec).
func Validate(v protovalidate.Validator) Link {
	validator := engine.Validator{V: v}
	check := func(ctx context.Context, req any) error {
		if err := undecoded(req); err != nil {
			return err
		}
		return validator.Check(ctx, req)
	}
	shallow := func(ctx context.Context, req any) (bool, error) {
		if err := undecoded(req); err != nil {
			return true, err
		}
		return validator.CheckShallow(ctx, req)
	}
	return shallowCheck("validate", check, shallow)
}

// ModelAccess checks that the caller's key may use the request's models
// (engine.AllowModels). It reads two fields and never goes deep: it runs
// on the handler's goroutine.
func ModelAccess() Link { return requestCheck("model_access", engine.AllowModels, false) }

// ResolveModel resolves the request's model and fallback_models into the
// call's targets, in the call record (engine.Resolver).
func ResolveModel(routes *route.Table) Link {
	return requestCheck("resolve", engine.Resolver{Routes: routes}.Resolve, false)
}

// Attach decides whether a Generate attaches to a resumable call kept
// already (engine.Attach), for the links after it: such a call takes no
// budget and no provider slot. Put it after ResolveModel and before
// Budget.
func Attach(a engine.Attach) Link { return requestCheck("attach", a.Check, false) }

// Budget reserves a Generate call's estimate on the budgets of its key and
// team once the request has arrived (engine.Budget.Reserve), and gives it
// back when the call ends without having run (Generate settles it
// otherwise). Put it after ResolveModel (the reservation is priced at the
// call's targets) and before ProviderQueue.
func Budget(b *engine.Budget) Link {
	return heldLink("budget", b.Reserve)
}

// ProviderQueue takes a slot of the call's first target's provider once
// the request has arrived and holds it until the call ends
// (engine.ProviderQueue). Put it after Deadline, so the wait is bounded,
// and after ResolveModel.
func ProviderQueue(q *engine.ProviderQueue) Link {
	return heldLink("provider_queue", q.AcquireFor)
}

// heldLink is a link that takes something once the request has arrived
// (acquire, given the request) and releases it when the call ends; a
// refusal ends the call with acquire's error.
func heldLink(name string, acquire func(ctx context.Context, req any) (func(), error)) Link {
	return Link{
		Name: name,
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			release, err := acquire(ctx, req)
			if err != nil {
				return nil, err
			}
			defer release()
			return h(ctx, req)
		},
		Steps: Steps{
			Enter: func(c *Call) error {
				h := &hold{acquire: acquire}
				c.OnRequest(h)
				c.Set(h)
				return nil
			},
			Exit: func(c *Call, err error) error {
				if h := c.Value().(*hold); h.release != nil {
					h.release()
				}
				return err
			},
		},
	}
}

// hold is what a held link of a stream call takes once the request has
// arrived, until the call ends.
type hold struct {
	acquire func(ctx context.Context, req any) (func(), error)
	release func()
}

// CheckRequest implements RequestCheck: it takes what the link holds.
func (h *hold) CheckRequest(ctx context.Context, req any) error {
	r, err := h.acquire(ctx, req)
	if err == nil {
		h.release = r
	}
	return err
}
