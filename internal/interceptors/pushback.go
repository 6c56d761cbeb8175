package interceptors

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
)

// Pushback returns the link that finishes every API call's status on
// its way out. It sits right inside the guard (which starts the call
// record), outside every link that can fail a call, so that it sees every
// status:
//
//   - the call's request id (the call record's) goes into the ErrorInfo
//     metadata of a failed call (`request_id`, apierr.WithRequestID) and
//     into the trailer `llmrelay-request-id` of every call, failed or not:
//     the id a client reports and an operator finds the call's log
//     records by;
//   - gRFC A6's grpc-retry-pushback-ms trailer goes on every failed call,
//     with the value apierr.Pushback gives the call's error: -1 (do not
//     retry) unless the server was only busy or shutting down. A client
//     whose retry policy would retry the status (the recommended service
//     config retries UNAVAILABLE before the first event) follows it, so
//     that it never repeats a call the server decided not to retry.
func Pushback() Link {
	finish := func(ctx context.Context, err error) (metadata.MD, error) {
		md := metadata.MD{}
		if id := callinfo.From(ctx).RequestID(); id != "" {
			md.Set(apierr.RequestIDTrailer, id)
			err = apierr.WithRequestID(err, id)
		}
		if err != nil {
			md.Set(apierr.PushbackTrailer, apierr.Pushback(err))
		}
		return md, err
	}
	return Link{
		Name: "pushback",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			resp, err := h(ctx, req)
			md, err := finish(ctx, err)
			_ = grpc.SetTrailer(ctx, md)
			return resp, err
		},
		Steps: Steps{Exit: func(c *Call, err error) error {
			md, err := finish(c.Context(), err)
			c.Base().SetTrailer(md)
			return err
		}},
	}
}
