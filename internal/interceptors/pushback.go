package interceptors

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/llmrelay/llmrelay/internal/apierr"
)

// Pushback returns the link that puts gRFC A6's grpc-retry-pushback-ms
// trailer on every failed call, with the value apierr.Pushback gives the
// call's error: -1 (do not retry) unless the server was only busy or
// shutting down. A client whose retry policy would retry the status (the
// recommended service config retries UNAVAILABLE before the first event)
// follows it, so that it never repeats a call the server decided not to
// retry. It sits outside every link that can fail a call.
func Pushback() Link {
	trailer := func(err error) metadata.MD {
		return metadata.Pairs(apierr.PushbackTrailer, apierr.Pushback(err))
	}
	return Link{
		Name: "pushback",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			resp, err := h(ctx, req)
			if err != nil {
				_ = grpc.SetTrailer(ctx, trailer(err))
			}
			return resp, err
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			err := h(srv, ss)
			if err != nil {
				ss.SetTrailer(trailer(err))
			}
			return err
		},
	}
}
