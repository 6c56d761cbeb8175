package interceptors

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	grpcmeta "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestLogging(t *testing.T) {
	const secret = "sk-very-secret-key"
	const requestID = "0b5e4a8e-8f5c-4d69-9a43-3f7b1e7e2a10"
	keys := testKeys(t, auth.KeyConfig{Name: "checkout", SHA256: auth.HashKey(secret),
		Scopes: []string{"generate", "models.list"}, Models: []string{"mock/*"}})
	logs := &logBuffer{}
	svc := &fakeService{generate: func(req *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
		switch req.GetMessages()[0].GetContent() {
		case "fail": // the handler reports its attempts, turns, tool calls and usage
			callinfo.From(s.Context()).ObserveAttempt(3)
			callinfo.From(s.Context()).ObserveTurn(2)
			callinfo.From(s.Context()).RecordToolCall(false)
			callinfo.From(s.Context()).RecordToolCall(true)
			callinfo.From(s.Context()).RecordUsage(callinfo.Usage{Tokens: provider.Usage{InputTokens: 12, OutputTokens: 40}, Cost: 0.5, Priced: true})
			return status.Error(codes.Unavailable, "provider down")
		case "events": // the events do not: only the handler's plan counts attempts
			_ = s.Send(&llmrelayv1.GenerateEvent{Sequence: 1, Attempt: 1,
				Event: &llmrelayv1.GenerateEvent_WillRetry{WillRetry: &llmrelayv1.WillRetry{NextAttempt: 2}}})
			return status.Error(codes.Unavailable, "provider down")
		case "metadata": // the error's ErrorInfo does
			return &apierr.Error{Kind: apierr.Unavailable, Reason: apierr.ReasonRetriesExhausted,
				Metadata: map[string]string{"attempts": "4"}}
		}
		return nil
	}}
	c := serve(t, svc, Guard(discardLogger()), Logging(logs.logger()), APIOnly(Auth(keyAuth(keys))), ModelAccess())

	req := validRequest()
	req.RequestId = requestID
	req.Metadata = map[string]string{"team": "checkout", "ticket": "OPS-12"}
	req.Messages[0].Content = "fail"
	_, err := c.generate(withKey(testCtx(t), secret), req)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("err = %v", err)
	}
	// Refused before the handler: the key is unknown.
	_, _ = c.generate(withKey(testCtx(t), "wrong"), validRequest())
	// Health probes are not logged.
	if _, err := c.health.Check(testCtx(t), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}

	started, finished := logs.lines(t, "started call"), logs.lines(t, "finished call")
	// A call refused at authentication has no line: auth.Throttle logs those.
	if len(started) != 1 || len(finished) != 1 {
		t.Fatalf("%d started and %d finished lines, want 1 and 1:\n%s", len(started), len(finished), logs)
	}
	for _, l := range []map[string]any{started[0], finished[0]} {
		if l[FieldRequestID] != requestID || l[FieldKey] != "checkout" || l[FieldModel] != "mock/echo" {
			t.Errorf("line lacks the call's request_id, key or model: %v", l)
		}
	}
	if f := finished[0]; f["grpc.code"] != "Unavailable" || f[FieldAttempts] != float64(3) || f["grpc.time_ms"] == nil {
		t.Errorf("finish line lacks code, attempts or duration: %v", f)
	}
	if f := finished[0]; f[FieldTurns] != float64(2) || f[FieldToolCalls] != float64(2) || f[FieldToolErrors] != float64(1) {
		t.Errorf("finish line's turns, tool_calls, tool_errors = %v, %v, %v; want 2, 2, 1", f[FieldTurns], f[FieldToolCalls], f[FieldToolErrors])
	}
	if _, ok := started[0][FieldTurns]; ok {
		t.Errorf("the start line has turns: %v", started[0])
	}
	if md, _ := finished[0][FieldMetadata].(map[string]any); md["team"] != "checkout" || md["ticket"] != "OPS-12" || len(md) != 2 {
		t.Errorf("finish line's metadata = %v, want the request's labels", finished[0][FieldMetadata])
	}
	if u, _ := finished[0][FieldUsage].(map[string]any); u["input_tokens"] != float64(12) || u["output_tokens"] != float64(40) || u["cost"] != 0.5 {
		t.Errorf("finish line's usage = %v, want the call's tokens and cost", finished[0][FieldUsage])
	}
	for _, content := range []string{"events", "metadata"} {
		req := validRequest()
		req.Messages[0].Content = content
		_, _ = c.generate(withKey(testCtx(t), secret), req)
	}
	// Refused before the handler, after authentication: a model the key
	// may not use.
	other := validRequest()
	other.Model = "other/x"
	_, _ = c.generate(withKey(testCtx(t), secret), other)
	finished = logs.lines(t, "finished call")
	if _, ok := finished[1][FieldMetadata]; ok {
		t.Errorf("a call without metadata logged some: %v", finished[1])
	}
	if f := finished[3]; f["grpc.code"] != "PermissionDenied" || f[FieldUsage] != nil || f[FieldTurns] != nil || f[FieldToolCalls] != nil {
		t.Errorf("a call that never reached the handler: %v; want PermissionDenied and no usage", f)
	}
	if got := []any{finished[1][FieldAttempts], finished[2][FieldAttempts]}; got[0] != nil || got[1] != float64(4) {
		t.Errorf("attempts from events and from ErrorInfo = %v, want [<nil> 4]: events are not counted", got)
	}
	if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), "wrong") {
		t.Errorf("a credential reached the log:\n%s", logs)
	}
}

func TestCallFieldsWithoutRecord(t *testing.T) {
	if f := callFields(context.Background()); f != nil {
		t.Errorf("fields without a call record: %v", f)
	}
}

// middlewareLogging is the logging link as go-grpc-middleware's logging
// interceptor builds it, with Logging's options: the reference Logging's
// lines are held to.
func middlewareLogging(logger *slog.Logger) Link {
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

// TestLoggingMatchesMiddleware runs the same calls through Logging and
// through go-grpc-middleware's logging interceptor, at info and at warn: the
// lines are the same, field for field (times, the peer's port and made-up
// request ids aside; a unary start line also names the key), and at warn
// neither writes a start line or a successful call's line. (Calls refused
// at authentication, which Logging leaves to auth.Throttle, are not among
// them.)
func TestLoggingMatchesMiddleware(t *testing.T) {
	const secret = "sk-key"
	keys := testKeys(t, auth.KeyConfig{Name: "checkout", SHA256: auth.HashKey(secret),
		Scopes: []string{"generate", "models.list"}, Models: []string{"mock/*"}})
	svc := &fakeService{
		generate: func(req *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
			switch req.GetMessages()[0].GetContent() {
			case "fail":
				callinfo.From(s.Context()).ObserveAttempt(3)
				return status.Error(codes.Unavailable, "provider down")
			case "metadata":
				return &apierr.Error{Kind: apierr.Unavailable, Reason: apierr.ReasonRetriesExhausted,
					Metadata: map[string]string{"attempts": "4"}}
			}
			return s.Send(&llmrelayv1.GenerateEvent{Sequence: 1, Attempt: 1})
		},
		listModels: func(_ context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
			if req.GetProvider() == "fail" {
				return nil, status.Error(codes.Internal, "broken")
			}
			return &llmrelayv1.ListModelsResponse{}, nil
		},
	}
	run := func(link func(*slog.Logger) Link, level slog.Level) []map[string]any {
		logs := &logBuffer{}
		logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: level}))
		c := serve(t, svc, Guard(discardLogger()), link(logger), APIOnly(Auth(keyAuth(keys))), ModelAccess())
		ctx := withKey(testCtx(t), secret)
		for i, content := range []string{"ok", "fail", "metadata"} {
			req := validRequest()
			req.RequestId = fmt.Sprintf("0b5e4a8e-8f5c-4d69-9a43-3f7b1e7e2a1%d", i)
			req.Messages[0].Content = content
			_, _ = c.generate(ctx, req)
		}
		_, _ = c.llm.ListModels(ctx, &llmrelayv1.ListModelsRequest{})                 // OK: info
		_, _ = c.llm.ListModels(ctx, &llmrelayv1.ListModelsRequest{Provider: "fail"}) // Internal: error
		_, _ = c.health.Check(testCtx(t), &healthpb.HealthCheckRequest{})             // not logged
		return append(logs.lines(t, "started call"), logs.lines(t, "finished call")...)
	}
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelWarn} {
		t.Run(level.String(), func(t *testing.T) {
			want, got := run(middlewareLogging, level), run(Logging, level)
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("%d lines, the middleware wrote %d:\n%v\n%v", len(got), len(want), got, want)
			}
			for i, w := range want {
				g := got[i]
				if level > slog.LevelInfo && g["level"] == "INFO" {
					t.Errorf("line %d at info through a logger at %v", i, level)
				}
				for k := range g {
					if k == FieldKey && g["msg"] == "started call" && g[logging.MethodTypeFieldKey] == "unary" {
						// Logging writes a unary call's start line once it passed
						// authentication, so it names the key.
						continue
					}
					if _, ok := w[k]; !ok {
						t.Errorf("line %d: field %q not in the middleware's line %v", i, k, w)
					}
				}
				for k, v := range w {
					gv, ok := g[k]
					switch {
					case !ok:
						t.Errorf("line %d lacks %q (middleware: %v)", i, k, v)
					case k == "time" || k == "grpc.start_time" || k == "grpc.request.deadline" || k == "grpc.time_ms" || k == "peer.address":
					case k == FieldRequestID && !strings.HasPrefix(v.(string), "0b5e4a8e-"): // made up per call
					case gv != v:
						t.Errorf("line %d: %s = %v, middleware: %v", i, k, gv, v)
					}
				}
			}
		})
	}
}

// TestLoggingClientProtocolError: a stream call whose client breaks
// gRPC's protocol (a raw stream that sends no request, or two) ends with
// gRPC's own INTERNAL, which the call's lines log at warn with the reason
// CLIENT_PROTOCOL_ERROR: the client's bug pages no one. An INTERNAL of
// the handler's own stays at error.
func TestLoggingClientProtocolError(t *testing.T) {
	svc := &fakeService{generate: func(*llmrelayv1.GenerateRequest, llmrelayv1.LLMService_GenerateServer) error {
		return status.Error(codes.Internal, "broken")
	}}
	// raw opens a stream of method and sends it n requests.
	raw := func(c testConn, method string, n int) error {
		ctx := testCtx(t)
		s, err := c.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method)
		if err != nil {
			return err
		}
		for range n {
			if err := s.SendMsg(validRequest()); err != nil {
				return err
			}
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		for {
			if err := s.RecvMsg(new(llmrelayv1.GenerateEvent)); err != nil {
				return err
			}
		}
	}
	for _, tc := range []struct {
		name     string
		method   string
		requests int
		level    string
		reason   any
	}{
		{"Generate without a request", llmrelayv1.LLMService_Generate_FullMethodName, 0, "WARN", ReasonClientProtocol},
		{"Generate with two requests", llmrelayv1.LLMService_Generate_FullMethodName, 2, "WARN", ReasonClientProtocol},
		{"Resume without a request", llmrelayv1.LLMService_Resume_FullMethodName, 0, "WARN", ReasonClientProtocol},
		{"the handler's own INTERNAL", llmrelayv1.LLMService_Generate_FullMethodName, 1, "ERROR", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logBuffer{}
			c := serve(t, svc, Guard(discardLogger()), Logging(logs.logger()))
			err := raw(c, tc.method, tc.requests)
			if status.Code(err) != codes.Internal || (tc.requests != 1) != strings.Contains(err.Error(), "cardinality violation") {
				t.Fatalf("the client got %v, want INTERNAL (gRPC's cardinality violation for a wrong number of requests)", err)
			}
			// gRPC wrote its status before the handler returned: the finish
			// line may come after the client has it. (The deadline only
			// guards against a hang.)
			finished := logs.lines(t, "finished call")
			for deadline := time.Now().Add(30 * time.Second); len(finished) == 0 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
				finished = logs.lines(t, "finished call")
			}
			if len(finished) != 1 {
				t.Fatalf("%d finish lines:\n%s", len(finished), logs)
			}
			f := finished[0]
			if f["level"] != tc.level || f[FieldReason] != tc.reason || f["grpc.code"] != "Internal" {
				t.Errorf("finish line at %v, reason %v, code %v; want %s, %v, Internal: %v", f["level"], f[FieldReason], f["grpc.code"], tc.level, tc.reason, f)
			}
			for _, l := range logs.lines(t, "started call") {
				if tc.level == "WARN" && l["level"] == "ERROR" {
					t.Errorf("start line at error: %v", l)
				}
			}
		})
	}
}
