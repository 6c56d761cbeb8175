package interceptors

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	grpcmeta "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
)

// Log field names llmrelay adds to go-grpc-middleware's (grpc.service,
// grpc.method, grpc.code, grpc.time_ms, grpc.error, peer.address, ...).
const (
	FieldRequestID = "request_id"
	FieldKey       = "key"
	FieldModel     = "model"
	FieldAttempts  = "attempts"
	// FieldTurns is a Generate call's model turns (more than 1 with server
	// tools); FieldToolCalls and FieldToolErrors count its server tool
	// calls and those whose result was an error (only when it ran some).
	FieldTurns      = "turns"
	FieldToolCalls  = "tool_calls"
	FieldToolErrors = "tool_errors"
	FieldReason     = "reason"
	// FieldMetadata groups the request's metadata labels on the finish
	// line: metadata.team=checkout in text, {"metadata": {...}} in JSON.
	FieldMetadata = "metadata"
	// FieldUsage groups a Generate call's tokens on the finish line, one
	// <kind>_tokens field per kind (usage.Kinds: input and output always,
	// the others when reported), and its cost when the model is priced:
	// usage.input_tokens=12 usage.output_tokens=40 usage.cost=0.00043.
	FieldUsage = "usage"
	// FieldRoute is the route the request's model named.
	FieldRoute = "route"
	// FieldProvider and FieldServedModel name the target that answered a
	// call that succeeded: the configured provider (a span's
	// llmrelay.provider) and the model at it (gen_ai.response.model);
	// after a fallback, the target the call fell back to.
	FieldProvider    = "provider"
	FieldServedModel = "served_model"
	// FieldAnnotations groups the labels hooks attached to the call.
	FieldAnnotations = "annotations"
)

// ReasonClientProtocol is the reason on the lines of a stream call whose
// request gRPC refused itself, before the handler had it: the client
// broke gRPC's protocol (a message cut short, or one that does not
// decompress; or a stream without its request message, or with two, for
// a method gRPC checks that of: the server checks LLMService's itself,
// INVALID_ARGUMENT). gRPC answers it with an INTERNAL status of its own,
// written while receiving, which llmrelay cannot change; the lines say it
// at warn, with this reason, as the client's mistake, not the server's.
const ReasonClientProtocol = "CLIENT_PROTOCOL_ERROR"

// Logging logs each call with slog, with go-grpc-middleware's logging
// fields and levels: "started call" once the request has arrived and the
// call passed authentication (at info)
// and "finished call" with its code and duration (at the middleware's level
// for the code: info, warn or error). Both carry the call record's
// request_id, key name, model and route; the finish line of a call that
// succeeded also names the target that answered it (FieldProvider,
// FieldServedModel), and carries the
// request's metadata labels (bounded: callinfo.RecordMetadata), a Generate
// call's usage (tokens by kind and, when priced, cost: FieldUsage), the
// attempts (from the call record, else from the error's ErrorInfo
// metadata), its model turns and server tool calls (FieldTurns,
// FieldToolCalls) and the ErrorInfo reason. A stream call whose request
// gRPC refused as a breach of its protocol (ReasonClientProtocol) is
// logged at warn, whatever gRPC's code. Credentials, request contents and
// provider keys are never logged. Health checks are not logged (probes
// would flood the log), nor are calls refused at authentication
// (auth.Throttle logs those, per address and interval).
//
// A line's fields are built only when its level is enabled, so a logger at
// warn costs a successful call nothing but two level checks.
func Logging(logger *slog.Logger) Link {
	notHealth := selector.MatchFunc(func(_ context.Context, c grpcmeta.CallMeta) bool {
		return c.Service != "grpc.health.v1.Health"
	})
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		cl := &callLog{logger: logger, ctx: ctx, method: info.FullMethod, start: time.Now()}
		// The request has arrived; the start line waits for the call to pass
		// authentication.
		callinfo.From(ctx).OnAuthenticated(func() { cl.started(nil, false) })
		resp, err := h(ctx, req)
		cl.finished(err, false)
		return resp, err
	}
	return Link{
		Name:  "logging",
		Unary: selector.UnaryServerInterceptor(unary, notHealth),
		Steps: Steps{
			Skip: func(service string) bool { return service == "grpc.health.v1.Health" },
			Enter: func(c *Call) error {
				ls := &loggingStream{ServerStream: c.Stream(), log: callLog{logger: logger, ctx: c.Context(),
					method: c.Info.FullMethod, stream: c.Info, start: time.Now()}}
				c.Wrap(ls)
				c.Set(ls)
				return nil
			},
			Exit: func(c *Call, err error) error {
				ls := c.Value().(*loggingStream)
				ls.log.finished(err, ls.refusedWith(err))
				return err
			},
		},
	}
}

// callLog writes one call's start and finish lines.
type callLog struct {
	logger *slog.Logger
	ctx    context.Context
	// method and stream (nil for a unary call) make the call's service,
	// method and type fields when a line is written: a stream's log
	// lives as long as the stream.
	method      string
	stream      *grpc.StreamServerInfo
	start       time.Time
	startLogged atomic.Bool
}

// lineLevel is the level of a line of a call whose outcome (or first
// message's) is code: go-grpc-middleware's for the code, or warn when
// gRPC refused the call's request as a breach of its protocol (refused:
// the client's mistake; ReasonClientProtocol).
func lineLevel(code codes.Code, refused bool) slog.Level {
	if refused {
		return slog.LevelWarn
	}
	return slog.Level(logging.DefaultServerCodeToLevel(code))
}

// started writes the start line, once per call: when the first message has
// been received or sent (err is that operation's error; refused, that gRPC
// refused the request it was receiving: ReasonClientProtocol).
func (c *callLog) started(err error, refused bool) {
	if c.startLogged.Swap(true) {
		return
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	lvl := lineLevel(status.Code(err), refused)
	if !c.logger.Enabled(c.ctx, lvl) {
		return
	}
	f := c.fields(err)
	if refused {
		f = append(f, FieldReason, ReasonClientProtocol)
	}
	f = append(f, logging.DurationToTimeMillisFields(time.Since(c.start))...)
	c.logger.Log(c.ctx, lvl, "started call", f...)
}

// finished writes the finish line of a call that ended with err (refused:
// gRPC refused its request as a breach of its protocol, and err is that
// refusal). A call refused at authentication (UNAUTHENTICATED before it
// passed it; a call whose key was revoked while it ran is logged) gets
// none: the auth throttle logs failed authentications per peer, at most
// once per interval, so a flood of bad keys cannot flood the log.
func (c *callLog) finished(err error, refused bool) {
	if errors.Is(err, io.EOF) {
		err = nil
	}
	code := status.Code(err)
	if code == codes.Unauthenticated && !callinfo.From(c.ctx).PassedAuthentication() {
		return
	}
	lvl := lineLevel(code, refused)
	if !c.logger.Enabled(c.ctx, lvl) {
		return
	}
	f := c.fields(nil)
	ci := callinfo.From(c.ctx)
	if md := ci.Metadata(); len(md) > 0 {
		f = append(f, FieldMetadata, callinfo.Labels(md).LogValue())
	}
	if notes := ci.Annotations(); len(notes) > 0 {
		f = append(f, FieldAnnotations, callinfo.Labels(notes).LogValue())
	}
	if u, ok := ci.Usage(); ok {
		f = append(f, FieldUsage, u.LogValue())
	}
	if s := ci.Snapshot(); s.Turns > 0 {
		f = append(f, FieldTurns, s.Turns)
		if s.ToolCalls > 0 {
			f = append(f, FieldToolCalls, s.ToolCalls, FieldToolErrors, s.ToolErrors)
		}
	}
	f = append(f, "grpc.code", code.String())
	if refused {
		f = append(f, FieldReason, ReasonClientProtocol)
	}
	if err != nil {
		f = append(f, "grpc.error", err.Error())
		// The call record's attempts, when it has them, come first.
		f = f.AppendUnique(errorFields(err))
	}
	f = append(f, logging.DurationToTimeMillisFields(time.Since(c.start))...)
	c.logger.Log(c.ctx, lvl, "finished call", f...)
}

// fields returns the fields every line of the call carries, in
// go-grpc-middleware's order: the call record's, the call's own, and err's
// (if not nil).
func (c *callLog) fields(err error) logging.Fields {
	meta := grpcmeta.NewServerCallMeta(c.method, c.stream, nil)
	f := append(callFields(c.ctx),
		logging.SystemTag[0], logging.SystemTag[1],
		logging.ComponentFieldKey, logging.KindServerFieldValue,
		logging.ServiceFieldKey, meta.Service,
		logging.MethodFieldKey, meta.Method,
		logging.MethodTypeFieldKey, string(meta.Typ))
	if p, ok := peer.FromContext(c.ctx); ok {
		f = append(f, "peer.address", p.Addr.String())
	}
	f = append(f, "grpc.start_time", c.start.Format(time.RFC3339))
	if d, ok := c.ctx.Deadline(); ok {
		f = append(f, "grpc.request.deadline", d.Format(time.RFC3339))
	}
	if err != nil {
		f = append(f, "grpc.error", err.Error())
		f = f.AppendUnique(errorFields(err))
	}
	return f
}

// loggingStream writes the call's start line on its first message, and
// notes whether gRPC refused the call's request (refusedWith).
type loggingStream struct {
	grpc.ServerStream
	log callLog
	// received says a message was received; refused is the error of the
	// receipt that gRPC failed before any was (grpcRefused), nil for none.
	// Both are used by the handler's goroutine only, as RecvMsg is.
	received bool
	refused  error
}

// RecvMsg implements grpc.ServerStream.
func (s *loggingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	switch {
	case err == nil:
		s.received = true
	case !s.received && s.refused == nil && grpcRefused(err):
		s.refused = err
	}
	s.log.started(err, s.refused != nil && err == s.refused)
	return err
}

// SendMsg implements grpc.ServerStream.
func (s *loggingStream) SendMsg(m any) error {
	err := s.ServerStream.SendMsg(m)
	s.log.started(err, false)
	return err
}

// refusedWith says whether the call ended with err because gRPC refused
// its request: err is the failed receipt's error, which the handler
// returned as it came.
func (s *loggingStream) refusedWith(err error) bool {
	return s.refused != nil && errors.Is(err, s.refused)
}

// grpcRefused says whether err, the error of a receipt of a call's
// request, is gRPC's own refusal of what the client sent: an INTERNAL
// status without details, as grpc-go makes for a stream without its
// request message or with two ("cardinality violation"), a message cut
// short or one that does not decompress. It is not llmrelay's: every
// status llmrelay makes carries an ErrorInfo, and no link between gRPC's
// stream and the logging link's fails a receipt with a status of its own.
func grpcRefused(err error) bool {
	se, ok := err.(interface{ GRPCStatus() *status.Status })
	if !ok {
		return false
	}
	st := se.GRPCStatus()
	return st.Code() == codes.Internal && len(st.Proto().GetDetails()) == 0
}

// lineFields is room for the fields of a call's line, all told: the call
// record's (up to 14), the call's own (16 or so) and the finish line's
// usage, code and duration, so that the line's slice is made once, not
// grown as fields are appended.
const lineFields = 40

// callFields returns the call record's fields, the first of a line's
// (with room for the rest: lineFields); each line calls it, so later
// lines see what inner links recorded since.
func callFields(ctx context.Context) logging.Fields {
	ci := callinfo.From(ctx)
	if ci == nil {
		return nil
	}
	s := ci.Snapshot()
	f := make(logging.Fields, 0, lineFields)
	f = append(f, FieldRequestID, s.RequestID)
	if s.Key != "" {
		f = append(f, FieldKey, s.Key)
	}
	if s.Model != "" {
		f = append(f, FieldModel, s.Model)
	}
	if s.Route != "" {
		f = append(f, FieldRoute, s.Route)
	}
	if s.Provider != "" {
		f = append(f, FieldProvider, s.Provider, FieldServedModel, s.ServedModel)
	}
	if s.Attempts > 0 {
		f = append(f, FieldAttempts, s.Attempts)
	}
	return f
}

// errorFields returns the ErrorInfo reason of a failed call, and the
// attempts its metadata reports (used when the call record has none: the
// record's value, from the handler's attempt plan, comes first).
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
