package interceptors

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
)

// Recovery is the outermost link. It starts the call's record (callinfo),
// noting the request's model and request id as soon as the request arrives
// and the attempts its events reveal as they are sent, and turns a panic anywhere below it into INTERNAL (reason INTERNAL, with
// the request id in the ErrorInfo metadata), logged at error level with the
// panic value and its stack. The server keeps serving other calls.
//
// Starting the record here, before go-grpc-middleware's recovery, lets the
// panic's log line and error carry the request id; nothing in that step can
// panic.
func Recovery(logger *slog.Logger) Link {
	opt := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		// This runs in the deferred recover, on the panicking goroutine:
		// the stack still shows where the panic happened.
		id := callinfo.From(ctx).RequestID()
		method, _ := grpc.Method(ctx)
		logger.ErrorContext(ctx, "panic in call handler",
			"request_id", id, "grpc.method", method,
			"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return statusError(codes.Internal, ReasonInternal,
			"internal error; please report it with request_id "+id,
			map[string]string{"request_id": id}, 0)
	})
	unary := recovery.UnaryServerInterceptor(opt)
	stream := recovery.StreamServerInterceptor(opt)
	return Link{
		Name: "recovery",
		Unary: func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, ci := callinfo.NewContext(ctx)
			recordRequest(ci, req)
			return unary(ctx, req, info, h)
		},
		Stream: func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			ctx, ci := callinfo.NewContext(ss.Context())
			rs := &recordingStream{ServerStream: withContext(ss, ctx), info: ci}
			ps := &peekStream{ServerStream: rs, onFirst: func(m any) error {
				recordRequest(ci, m)
				return nil
			}}
			return stream(srv, ps, info, h)
		},
	}
}

// recordingStream notes in the call record the attempts that the events a
// call sends reveal: each event's attempt, and a will_retry's next attempt.
type recordingStream struct {
	grpc.ServerStream
	info *callinfo.Info
}

// SendMsg implements grpc.ServerStream.
func (s *recordingStream) SendMsg(m any) error {
	if ev, ok := m.(*llmrelayv1.GenerateEvent); ok {
		s.info.ObserveAttempt(int(ev.GetAttempt()))
		s.info.ObserveAttempt(int(ev.GetWillRetry().GetNextAttempt()))
	}
	return s.ServerStream.SendMsg(m)
}

// recordRequest notes a request's model, request id and metadata labels in
// its call record.
func recordRequest(ci *callinfo.Info, req any) {
	model, _ := requestModel(req)
	var id string
	if g, ok := req.(requestIDGetter); ok {
		id = g.GetRequestId()
	}
	ci.RecordRequest(model, id)
	if g, ok := req.(metadataGetter); ok {
		ci.RecordMetadata(g.GetMetadata())
	}
}
