package server

import (
	"context"
	"runtime/debug"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/llmrelay/llmrelay/internal/apierr"
)

// interceptorChain builds the server's interceptor chain, outermost first,
// mirrored for unary and stream calls.
func (s *Server) interceptorChain() ([]grpc.UnaryServerInterceptor, []grpc.StreamServerInterceptor) {
	recoverOpt := recovery.WithRecoveryHandlerContext(s.recoverPanic)
	unary := []grpc.UnaryServerInterceptor{
		// Recovery is outermost so that a panic anywhere below becomes
		// INTERNAL and the server keeps serving.
		recovery.UnaryServerInterceptor(recoverOpt),
		// Drain is innermost: it cuts off calls still running when the
		// shutdown grace period ends.
		s.drainUnary,
	}
	stream := []grpc.StreamServerInterceptor{
		recovery.StreamServerInterceptor(recoverOpt),
		s.drainStream,
	}
	return unary, stream
}

// recoverPanic logs a handler's panic with its stack and returns INTERNAL.
func (s *Server) recoverPanic(ctx context.Context, p any) error {
	s.log.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
	return apierr.New(codes.Internal, apierr.ReasonInternal, "internal error")
}
