package interceptors

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"time"

	grpcmeta "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
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
//
// When the logger drops info lines (the start line and the finish line of a
// successful call), a call takes a lean path that builds no log fields at
// all unless its finish line's level (warn or error, by its code) is
// enabled; that line then carries the same fields go-grpc-middleware's
// would.
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
	full := Link{
		Unary:  logging.UnaryServerInterceptor(l, opts...),
		Stream: logging.StreamServerInterceptor(l, opts...),
	}
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if logger.Enabled(ctx, slog.LevelInfo) {
			return full.Unary(ctx, req, info, h)
		}
		start := time.Now()
		resp, err := h(ctx, req)
		logFinishOnly(ctx, logger, grpcmeta.NewServerCallMeta(info.FullMethod, nil, req), start, err)
		return resp, err
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx := ss.Context()
		if logger.Enabled(ctx, slog.LevelInfo) {
			return full.Stream(srv, ss, info, h)
		}
		start := time.Now()
		err := h(srv, ss)
		logFinishOnly(ctx, logger, grpcmeta.NewServerCallMeta(info.FullMethod, info, nil), start, err)
		return err
	}
	return Link{
		Name:   "logging",
		Unary:  selector.UnaryServerInterceptor(unary, notHealth),
		Stream: selector.StreamServerInterceptor(stream, notHealth),
	}
}

// logFinishOnly writes the "finished call" line of a call that started at
// start and ended with err, if its level is enabled, with the fields
// go-grpc-middleware's logging interceptor gives it (the call record's
// first, then the call's, the outcome's and the duration). It is the lean
// path for loggers that drop info lines, where the start line is dropped
// anyway.
func logFinishOnly(ctx context.Context, logger *slog.Logger, c grpcmeta.CallMeta, start time.Time, err error) {
	if errors.Is(err, io.EOF) {
		err = nil
	}
	code := status.Code(err)
	lvl := slog.Level(logging.DefaultServerCodeToLevel(code))
	if !logger.Enabled(ctx, lvl) {
		return
	}
	f := append(callFields(ctx),
		logging.SystemTag[0], logging.SystemTag[1],
		logging.ComponentFieldKey, logging.KindServerFieldValue,
		logging.ServiceFieldKey, c.Service,
		logging.MethodFieldKey, c.Method,
		logging.MethodTypeFieldKey, string(c.Typ))
	if p, ok := peer.FromContext(ctx); ok {
		f = append(f, "peer.address", p.Addr.String())
	}
	f = append(f, "grpc.start_time", start.Format(time.RFC3339))
	if d, ok := ctx.Deadline(); ok {
		f = append(f, "grpc.request.deadline", d.Format(time.RFC3339))
	}
	f = append(f, "grpc.code", code.String())
	if err != nil {
		f = append(f, "grpc.error", err.Error())
		// The call record's attempts, when it has them, come first.
		f = f.AppendUnique(errorFields(err))
	}
	f = append(f, logging.DurationToTimeMillisFields(time.Since(start))...)
	logger.Log(ctx, lvl, "finished call", f...)
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
