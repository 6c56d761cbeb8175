package interceptors

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/logtest"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// logBuffer collects JSON log lines; safe for concurrent use.
type logBuffer struct{ logtest.Buffer }

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(b, nil)) }

// lines returns the log lines whose msg is msg, decoded.
func (b *logBuffer) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func TestRecovery(t *testing.T) {
	logs := &logBuffer{}
	svc := &fakeService{
		generate: func(req *llmrelayv1.GenerateRequest, _ llmrelayv1.LLMService_GenerateServer) error {
			if req.GetModel() == "mock/panic" {
				panic("boom in generate")
			}
			return nil
		},
		listModels: func(_ context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
			if req.GetProvider() == "panic" {
				panic("boom in list")
			}
			return &llmrelayv1.ListModelsResponse{}, nil
		},
	}
	c := serve(t, svc, Guard(logs.logger()), Logging(discardLogger()), Recovery(logs.logger()))
	const requestID = "6f1c2b7e-3a7d-4e0e-9f57-0c6a5b0d9a11"

	panicking := validRequest()
	panicking.Model = "mock/panic"
	panicking.RequestId = requestID
	_, err := c.generate(testCtx(t), panicking)
	st := wantStatus(t, err, codes.Internal, ReasonInternal)
	if got := findDetail[*errdetails.ErrorInfo](st).GetMetadata()["request_id"]; got != requestID {
		t.Errorf("ErrorInfo request_id = %q, want the client's %q", got, requestID)
	}
	if strings.Contains(st.Message(), "boom") {
		t.Errorf("panic value leaked to the client: %q", st.Message())
	}

	_, err = c.llm.ListModels(testCtx(t), &llmrelayv1.ListModelsRequest{Provider: "panic"})
	st = wantStatus(t, err, codes.Internal, ReasonInternal)
	if findDetail[*errdetails.ErrorInfo](st).GetMetadata()["request_id"] == "" {
		t.Error("no made-up request_id in the ErrorInfo")
	}

	// The server still serves.
	if _, err := c.generate(testCtx(t), validRequest()); err != nil {
		t.Fatalf("call after the panics: %v", err)
	}
	if _, err := c.llm.ListModels(testCtx(t), &llmrelayv1.ListModelsRequest{}); err != nil {
		t.Fatalf("call after the panics: %v", err)
	}

	lines := logs.lines(t, "panic in call handler")
	if len(lines) != 2 {
		t.Fatalf("%d panic log lines, want 2:\n%s", len(lines), logs)
	}
	if lines[0]["request_id"] != requestID || lines[0]["panic"] != "boom in generate" ||
		lines[0]["grpc.method"] != llmrelayv1.LLMService_Generate_FullMethodName {
		t.Errorf("panic log line: %v", lines[0])
	}
	// The stack shows where the panic happened, not just the recovery.
	if stack, _ := lines[1]["stack"].(string); !strings.Contains(stack, "TestRecovery.func2") {
		t.Errorf("stack does not show the panicking function:\n%s", stack)
	}
}

// TestGuardRecoversPanicsInLinks: a panic in a link, outside the handler's
// Recovery, still becomes INTERNAL with the call's request id, and the
// server keeps serving.
func TestGuardRecoversPanicsInLinks(t *testing.T) {
	logs := &logBuffer{}
	panicking := Link{
		Name: "panicking",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if req.(*llmrelayv1.ListModelsRequest).GetProvider() == "panic" {
				panic("boom in a unary link")
			}
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if len(metadata.ValueFromIncomingContext(ss.Context(), "x-panic")) > 0 {
				panic("boom in a stream link")
			}
			return h(srv, ss)
		},
	}
	c := serve(t, &fakeService{}, Guard(logs.logger()), panicking, Recovery(discardLogger()))
	_, err := c.generate(metadata.AppendToOutgoingContext(testCtx(t), "x-panic", "1"), validRequest())
	st := wantStatus(t, err, codes.Internal, ReasonInternal)
	id := findDetail[*errdetails.ErrorInfo](st).GetMetadata()["request_id"]
	if id == "" {
		t.Error("no request_id in the ErrorInfo")
	}
	_, err = c.llm.ListModels(testCtx(t), &llmrelayv1.ListModelsRequest{Provider: "panic"})
	wantStatus(t, err, codes.Internal, ReasonInternal)
	if _, err := c.generate(testCtx(t), validRequest()); err != nil {
		t.Fatalf("call after the panics: %v", err)
	}
	lines := logs.lines(t, "panic in the interceptor chain")
	if len(lines) != 2 || lines[0]["request_id"] != id || lines[0]["panic"] != "boom in a stream link" {
		t.Errorf("panic log lines: %v", lines)
	}
}
