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

	"github.com/llmrelay/llmrelay/internal/apierr"
)

// Validate checks every request against its buf.validate rules (in
// proto/llmrelay/v1/llmrelay.proto) with go-grpc-middleware's protovalidate
// interceptor. A violation is INVALID_ARGUMENT with an ErrorInfo (reason
// INVALID_REQUEST) and a google.rpc.BadRequest: one field violation per
// broken rule, its field path (`messages[0].role`), its message as the
// description and its rule id (`role.defined`) as the reason. BadRequest
// rather than the middleware's buf.validate.Violations, so every client
// decodes it with the standard error details alone.
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
// (INVALID_ARGUMENT with a Violations detail) as llmrelay's: an ErrorInfo
// and the violations as a BadRequest; any other error is returned as it
// is.
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
	fv := make([]*errdetails.BadRequest_FieldViolation, len(violations.GetViolations()))
	for i, v := range violations.GetViolations() {
		fv[i] = &errdetails.BadRequest_FieldViolation{
			Field:       protovalidate.FieldPathString(v.GetField()),
			Description: v.GetMessage(),
			Reason:      v.GetRuleId(),
		}
	}
	return &apierr.Error{Kind: apierr.InvalidArgument, Reason: ReasonInvalidRequest, Message: st.Message(), FieldViolations: fv}
}
