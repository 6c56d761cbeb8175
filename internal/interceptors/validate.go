package interceptors

import (
	"context"
	"errors"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	pvmw "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/protovalidate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
)

// Validate checks every request against its buf.validate rules (in
// proto/llmrelay/v1/llmrelay.proto) with go-grpc-middleware's protovalidate
// interceptor. A violation is INVALID_ARGUMENT carrying the
// buf.validate.Violations detail; Validate adds the ErrorInfo (reason
// INVALID_REQUEST) the middleware leaves out.
func Validate(v protovalidate.Validator) Link {
	unary := pvmw.UnaryServerInterceptor(v)
	stream := pvmw.StreamServerInterceptor(v)
	return Link{
		Name: "validate",
		Unary: func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			handled := false
			resp, err := unary(ctx, req, info, func(ctx context.Context, req any) (any, error) {
				handled = true
				return h(ctx, req)
			})
			if err != nil && !handled {
				err = withErrorInfo(err)
			}
			return resp, err
		},
		Stream: func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return stream(srv, ss, info, func(srv any, validating grpc.ServerStream) error {
				return h(srv, &violationStream{validating})
			})
		},
	}
}

// violationStream adds the ErrorInfo to the error of a receive that failed
// validation.
type violationStream struct{ grpc.ServerStream }

// RecvMsg implements grpc.ServerStream.
func (s *violationStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return withErrorInfo(err)
	}
	return nil
}

// withErrorInfo rebuilds a validation failure from the middleware
// (INVALID_ARGUMENT with a Violations detail) with an ErrorInfo first; any
// other error is returned as it is.
func withErrorInfo(err error) error {
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return err
	}
	st := se.GRPCStatus()
	if st.Code() != codes.InvalidArgument {
		return err
	}
	var violations *validate.Violations
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			return err
		case *validate.Violations:
			violations = d
		}
	}
	if violations == nil {
		return err
	}
	return statusError(codes.InvalidArgument, ReasonInvalidRequest, st.Message(), nil, 0, protoadapt.MessageV1Of(violations))
}
