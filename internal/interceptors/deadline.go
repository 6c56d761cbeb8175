package interceptors

import (
	"context"
	"time"

	"google.golang.org/grpc"
)

// Deadline is the one owner of a call's deadline: a call without a
// deadline gets def, and a deadline further away than max is brought in to
// max, so every wait and provider call below has a bound. The handler and
// its attempt plan read the result from the call's context; nothing else
// defaults or clamps it. Zero def or max switches that half off. (The
// go-grpc-middleware timeout package is client-side only.) Wrap it in
// APIOnly: a health watch may rightly last for days.
func Deadline(def, max time.Duration) Link {
	bound := func(ctx context.Context) (context.Context, context.CancelFunc) {
		d, ok := ctx.Deadline()
		switch {
		case !ok && def > 0:
			return context.WithTimeout(ctx, def)
		case ok && max > 0 && time.Until(d) > max:
			return context.WithTimeout(ctx, max)
		}
		return ctx, func() {}
	}
	return Link{
		Name: "deadline",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, cancel := bound(ctx)
			defer cancel()
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			ctx, cancel := bound(ss.Context())
			defer cancel()
			return h(srv, withContext(ss, ctx))
		},
	}
}
