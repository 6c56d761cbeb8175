package interceptors

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
)

func TestLogging(t *testing.T) {
	const secret = "sk-very-secret-key"
	const requestID = "0b5e4a8e-8f5c-4d69-9a43-3f7b1e7e2a10"
	keys := testKeys(t, auth.KeyConfig{Name: "checkout", SHA256: auth.HashKey(secret),
		Scopes: []string{"generate", "models.list"}, Models: []string{"mock/*"}})
	logs := &logBuffer{}
	svc := &fakeService{generate: func(req *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
		switch req.GetMessages()[0].GetContent() {
		case "fail": // the handler reports its attempts
			callinfo.From(s.Context()).ObserveAttempt(3)
			return status.Error(codes.Unavailable, "provider down")
		case "events": // the events reveal them
			_ = s.Send(&llmrelayv1.GenerateEvent{Sequence: 1, Attempt: 1,
				Event: &llmrelayv1.GenerateEvent_WillRetry{WillRetry: &llmrelayv1.WillRetry{NextAttempt: 2}}})
			return status.Error(codes.Unavailable, "provider down")
		case "metadata": // the error's ErrorInfo does
			return &apierr.Error{Code: codes.Unavailable, Reason: apierr.ReasonProviderUnavailable,
				Metadata: map[string]string{"attempts": "4"}}
		}
		return nil
	}}
	c := serve(t, svc, Recovery(discardLogger()), Logging(logs.logger()), APIOnly(Auth(keys)), ModelAccess())

	req := validRequest()
	req.RequestId = requestID
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
	// A call refused before its request was read has only a finish line.
	if len(started) != 1 || len(finished) != 2 {
		t.Fatalf("%d started and %d finished lines, want 1 and 2:\n%s", len(started), len(finished), logs)
	}
	for _, l := range []map[string]any{started[0], finished[0]} {
		if l[FieldRequestID] != requestID || l[FieldKey] != "checkout" || l[FieldModel] != "mock/echo" {
			t.Errorf("line lacks the call's request_id, key or model: %v", l)
		}
	}
	if f := finished[0]; f["grpc.code"] != "Unavailable" || f[FieldAttempts] != float64(3) || f["grpc.time_ms"] == nil {
		t.Errorf("finish line lacks code, attempts or duration: %v", f)
	}
	if f := finished[1]; f["grpc.code"] != "Unauthenticated" || f[FieldReason] != ReasonAPIKeyUnknown || f[FieldRequestID] == "" {
		t.Errorf("refused call's finish line: %v", f)
	}
	for _, content := range []string{"events", "metadata"} {
		req := validRequest()
		req.Messages[0].Content = content
		_, _ = c.generate(withKey(testCtx(t), secret), req)
	}
	finished = logs.lines(t, "finished call")
	if got := []any{finished[2][FieldAttempts], finished[3][FieldAttempts]}; got[0] != float64(2) || got[1] != float64(4) {
		t.Errorf("attempts from events and from ErrorInfo = %v, want [2 4]", got)
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
