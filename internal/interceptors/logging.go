package interceptors

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	grpcmeta "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
)

// Log field names llmrelay adds to go-grpc-middleware's (grpc.service,
// grpc.method, grpc.code, grpc.time_ms, grpc.error, peer.address, ...).
const (
	FieldRequestID = "request_id"
	FieldKey       = "key"
	FieldModel     = "model"
	FieldAttempts  = "attempts"
	FieldReason    = "reason"
)

// Logging logs each call with slog through go-grpc-middleware's logging
// interceptor: "started call" once the request has arrived and "finished
// call" with its code and duration. Both carry the call record's request_id,
// key name and model; the finish line also carries the attempts (from the
// call record, else from the error's ErrorInfo metadata) and the ErrorInfo
// reason. Credentials, request contents and provider keys are
// never logged. Health checks are not logged (probes would flood the log).
func Logging(logger *slog.Logger) Link {
	l := logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		logger.Log(ctx, slog.Level(lvl), msg, fields...)
	})
	opts := []logging.Option{
		logging.WithLogOnEvents(logging.StartCall, logging.FinishCall),
		logging.WithFieldsFromContext(callFields),
		logging.WithErrorFields(errorFields),
	}
	notHealth := selector.MatchFunc(func(_ context.Context, c grpcmeta.CallMeta) bool {
		return c.Service != "grpc.health.v1.Health"
	})
	return Link{
		Name:   "logging",
		Unary:  selector.UnaryServerInterceptor(logging.UnaryServerInterceptor(l, opts...), notHealth),
		Stream: selector.StreamServerInterceptor(logging.StreamServerInterceptor(l, opts...), notHealth),
	}
}

// callFields returns the call record's fields; go-grpc-middleware calls it
// for each line, so later lines see what inner links recorded since.
func callFields(ctx context.Context) logging.Fields {
	ci := callinfo.From(ctx)
	if ci == nil {
		return nil
	}
	s := ci.Snapshot()
	f := logging.Fields{FieldRequestID, s.RequestID}
	if s.Key != "" {
		f = append(f, FieldKey, s.Key)
	}
	if s.Model != "" {
		f = append(f, FieldModel, s.Model)
	}
	if s.Attempts > 0 {
		f = append(f, FieldAttempts, s.Attempts)
	}
	return f
}

// errorFields returns the ErrorInfo reason of a failed call, and the
// attempts its metadata reports (used when no event revealed them: the
// call record's value comes first).
func errorFields(err error) logging.Fields {
	ei := errorInfo(err)
	if ei == nil {
		return nil
	}
	f := logging.Fields{FieldReason, ei.GetReason()}
	if n, err := strconv.Atoi(ei.GetMetadata()["attempts"]); err == nil && n > 0 {
		f = append(f, FieldAttempts, n)
	}
	return f
}

// errorInfo returns the ErrorInfo of err's status, or nil.
func errorInfo(err error) *errdetails.ErrorInfo {
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return nil
	}
	for _, d := range se.GRPCStatus().Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei
		}
	}
	return nil
}
