package interceptors

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/offstack"
)

// Guard is the outermost link. It starts the call's record (callinfo),
// noting the request's model and request id as soon as the request arrives,
// and, as a last resort, turns a panic in one of the links below it into
// INTERNAL. A panic in the handler never gets this far: Recovery, the
// innermost link, catches it where the links can still see the call fail.
//
// Starting the record here, before anything else, lets every log line and
// error of the call carry its request id; nothing in that step can panic.
func Guard(logger *slog.Logger) Link {
	handler := recoveryHandler(logger, "panic in the interceptor chain")
	unary := recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(handler))
	return Link{
		Name: "guard",
		Unary: func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, ci := callinfo.NewContext(ctx)
			recordRequest(ci, req)
			return unary(ctx, req, info, h)
		},
		Steps: Steps{
			Enter: func(c *Call) error {
				ctx, _ := callinfo.NewContext(c.Context())
				c.SetContext(ctx)
				c.OnRequest(recordCheck)
				return nil
			},
			RecoverLinks: handler,
		},
	}
}

// recordCheck notes the request in the call record of its context.
var recordCheck = CheckFunc(func(ctx context.Context, req any) error {
	recordRequest(callinfo.From(ctx), req)
	return nil
})

// Recovery is the innermost link: it wraps the handler, so a panic in the
// handler (or in anything it calls on its goroutine, such as a provider
// adapter) becomes an INTERNAL status (reason INTERNAL, with the request id
// in the ErrorInfo metadata) that every link above sees as the call's
// result: the metrics and logging links count and log it like any failed
// call. The panic is logged at error level with its value and stack; the
// server keeps serving other calls.
func Recovery(logger *slog.Logger) Link {
	handler := recoveryHandler(logger, "panic in call handler")
	return Link{
		Name:  "recovery",
		Unary: recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(handler)),
		Steps: Steps{RecoverHandler: handler},
	}
}

// recoveryHandler logs a recovered panic with msg and returns the INTERNAL
// status that replaces it.
func recoveryHandler(logger *slog.Logger, msg string) func(ctx context.Context, p any) error {
	return func(ctx context.Context, p any) error {
		// This runs in the deferred recover, on the panicking goroutine:
		// the stack still shows where the panic happened.
		// A panic in work done on offstack's workers (a CPU-only request
		// check, say) comes with the stack where it happened there.
		stack := debug.Stack()
		if op, ok := p.(*offstack.Panic); ok {
			p, stack = op.Value, op.Stack
		}
		id := callinfo.From(ctx).RequestID()
		method, _ := grpc.Method(ctx)
		logger.ErrorContext(ctx, msg,
			"request_id", id, "grpc.method", method,
			"panic", fmt.Sprint(p), "stack", string(stack))
		return &apierr.Error{Kind: apierr.Internal, Reason: ReasonInternal,
			Message: "internal error; please report it with request_id " + id, Metadata: map[string]string{"request_id": id}}
	}
}

// recordRequest notes a request's model, request id and metadata labels in
// its call record.
func recordRequest(ci *callinfo.Info, req any) {
	model, _ := engine.RequestModel(req)
	var id string
	if g, ok := req.(requestIDGetter); ok {
		id = g.GetRequestId()
	}
	ci.RecordRequest(model, id)
	if g, ok := req.(metadataGetter); ok {
		ci.RecordMetadata(g.GetMetadata())
	}
}
