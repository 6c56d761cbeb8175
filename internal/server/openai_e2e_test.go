package server_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// relayTo starts llmrelay with one openai-kind provider, "up", in front of
// the fake upstream.
func relayTo(t *testing.T, up *openaitest.Server) *servertest.Instance {
	t.Helper()
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"fake-model"}}}
	return servertest.Start(t, cfg)
}

func upRequest(maxAttempts uint32) *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:    "up/fake-model",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "go"}},
		Retry: &llmrelayv1.RetryPolicy{
			MaxAttempts:    maxAttempts,
			InitialBackoff: durationpb.New(1e6), // 1ms: the test is about what happens, not when
			MaxBackoff:     durationpb.New(2e6),
		},
	}
}

// TestRelayToOpenAICompatibleUpstreamRestartsAMidStreamFailure drives the
// whole path, gRPC in and HTTP out: the upstream drops the first stream after
// 3 chunks and fails the second with an in-stream server error after 5; the
// third succeeds. The client must see the partial output of each failed
// attempt discarded, a final with only the third attempt's text, and the
// upstream must have been called exactly three times: no hidden retry layer.
func TestRelayToOpenAICompatibleUpstreamRestartsAMidStreamFailure(t *testing.T) {
	const chunks = 8
	up := openaitest.Start(t, openaitest.Options{Chunks: chunks, Faults: []openaitest.Fault{
		{Kind: openaitest.Drop, After: 3},
		{Kind: openaitest.InStreamError, After: 5, ErrorType: "server_error"},
	}})
	in := relayTo(t, up)

	events, err := servertest.Collect(t.Context(), in.Client, upRequest(5))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var shown strings.Builder
	var retries []*llmrelayv1.WillRetry
	// How each attempt's text is cut into deltas depends on how fast the
	// test reads (coalesced deltas); what each attempt showed does not.
	textPerAttempt := map[uint32]string{}
	for i, ev := range events {
		if ev.GetSequence() != uint64(i+1) {
			t.Fatalf("event %d has sequence %d", i, ev.GetSequence())
		}
		switch e := ev.GetEvent().(type) {
		case *llmrelayv1.GenerateEvent_Delta:
			textPerAttempt[ev.GetAttempt()] += e.Delta.GetText()
			shown.WriteString(e.Delta.GetText())
		case *llmrelayv1.GenerateEvent_WillRetry:
			retries = append(retries, e.WillRetry)
			if e.WillRetry.GetDiscardPartial() {
				shown.Reset()
			}
		}
	}
	if textPerAttempt[1] != openaitest.Text(3) || textPerAttempt[2] != openaitest.Text(5) || textPerAttempt[3] != openaitest.Text(chunks) {
		t.Errorf("text per attempt %v, want the first 3, 5 and %d chunks", textPerAttempt, chunks)
	}
	if len(retries) != 2 ||
		retries[0].GetReason() != llmrelayv1.RetryReason_RETRY_REASON_TRANSPORT || !retries[0].GetDiscardPartial() || retries[0].GetNextAttempt() != 2 ||
		retries[1].GetReason() != llmrelayv1.RetryReason_RETRY_REASON_SERVER_ERROR || !retries[1].GetDiscardPartial() || retries[1].GetNextAttempt() != 3 {
		t.Errorf("will_retry events %v, want TRANSPORT then SERVER_ERROR, both discarding", retries)
	}
	final := events[len(events)-1].GetFinal()
	if final == nil {
		t.Fatalf("last event %v is not a final", events[len(events)-1])
	}
	want := openaitest.Text(chunks)
	if final.GetMessage().GetContent() != want || shown.String() != want {
		t.Errorf("final %q, shown after discards %q; want %q for both", final.GetMessage().GetContent(), shown.String(), want)
	}
	if final.GetAttempts() != 3 || final.GetProvider() != "up" || final.GetModel() != "fake-model" {
		t.Errorf("final attempts/provider/model %d/%s/%s, want 3/up/fake-model", final.GetAttempts(), final.GetProvider(), final.GetModel())
	}
	if got := up.Requests(); got != 3 {
		t.Errorf("upstream saw %d requests, want exactly 3", got)
	}
}

// TestRelayToOpenAICompatibleUpstreamRejectedRequestIsNotRetried checks the
// other side: a 400 from the upstream is the caller's problem, reported as
// INVALID_ARGUMENT after exactly one upstream request.
func TestRelayToOpenAICompatibleUpstreamRejectedRequestIsNotRetried(t *testing.T) {
	up := openaitest.Start(t, openaitest.Options{Faults: []openaitest.Fault{
		{Kind: openaitest.Status, Status: 400, ErrorType: "invalid_request_error"},
	}})
	in := relayTo(t, up)
	events, err := servertest.Collect(t.Context(), in.Client, upRequest(5))
	if status.Code(err) != codes.InvalidArgument || len(events) != 0 {
		t.Fatalf("got %d events and %v, want INVALID_ARGUMENT and no events", len(events), err)
	}
	if got := up.Requests(); got != 1 {
		t.Errorf("upstream saw %d requests, want 1", got)
	}
}
