package server_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// report is what a client reports of a failed call: its status and the
// request id the server gave it, from the ErrorInfo and from the trailer.
type report struct {
	st        *status.Status
	metadata  map[string]string
	requestID string // the trailer's
}

// generateFailing runs req to its end and returns the client's report of
// its failure.
func generateFailing(t *testing.T, c llmrelayv1.LLMServiceClient, req *llmrelayv1.GenerateRequest) report {
	t.Helper()
	var trailer metadata.MD
	stream, err := c.Generate(t.Context(), req, grpc.Trailer(&trailer))
	if err == nil {
		_, err = servertest.ReadAll(stream)
	}
	if err == nil {
		t.Fatal("the call succeeded; want it to fail")
	}
	st := status.Convert(err)
	r := report{st: st, metadata: detail[*errdetails.ErrorInfo](st).GetMetadata()}
	if ids := trailer.Get("llmrelay-request-id"); len(ids) == 1 {
		r.requestID = ids[0]
	}
	return r
}

// TestExhaustedCallsSayWhyTheLastAttemptFailed: a call that gave up names
// its last attempt's RetryReason in the ErrorInfo metadata, with the
// provider's status when it sent one, a call of one attempt included.
func TestExhaustedCallsSayWhyTheLastAttemptFailed(t *testing.T) {
	tests := []struct {
		name     string
		faults   []openaitest.Fault
		attempts uint32
		// firstEvent is the call's first_event_timeout; 0, the default
		// (120s): an attempt that answers (a 503, a chunk) is not taken for
		// stalled however slow the machine is.
		firstEvent time.Duration
		want       map[string]string
	}{
		{"one attempt that stalls before its first byte",
			[]openaitest.Fault{{FirstByteDelay: time.Minute}}, 1, 200 * time.Millisecond,
			map[string]string{"attempts": "1", "retry_reason": "STALLED", "provider": "up"}},
		{"three attempts answered 503",
			[]openaitest.Fault{{Kind: openaitest.Status, Status: 503}, {Kind: openaitest.Status, Status: 503}, {Kind: openaitest.Status, Status: 503}}, 3, 0,
			map[string]string{"attempts": "3", "retry_reason": "OVERLOADED", "provider_status": "503", "provider": "up"}},
		{"one attempt whose connection drops",
			[]openaitest.Fault{{Kind: openaitest.Drop, After: 1}}, 1, 0,
			map[string]string{"attempts": "1", "retry_reason": "TRANSPORT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: tt.faults})
			t.Cleanup(httpx.CloseIdleConnections)
			cfg := config.Default()
			cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL()}}
			in := servertest.Start(t, cfg)
			req := outboundRequest("fake")
			req.Retry = &llmrelayv1.RetryPolicy{MaxAttempts: tt.attempts, InitialBackoff: durationpb.New(time.Millisecond), MaxBackoff: durationpb.New(time.Millisecond)}
			if tt.firstEvent > 0 {
				req.FirstEventTimeout = durationpb.New(tt.firstEvent)
			}
			r := generateFailing(t, in.Client, req)
			if r.st.Code() != codes.Unavailable || detail[*errdetails.ErrorInfo](r.st).GetReason() != "RETRIES_EXHAUSTED" {
				t.Fatalf("status %v, want UNAVAILABLE, RETRIES_EXHAUSTED", r.st)
			}
			for k, v := range tt.want {
				if r.metadata[k] != v {
					t.Errorf("metadata %s = %q, want %q (all: %v)", k, r.metadata[k], v, r.metadata)
				}
			}
		})
	}
}

// TestEveryStatusCarriesItsRequestID: whatever ends a call, its status
// carries the call's request id in the ErrorInfo metadata and in the
// llmrelay-request-id trailer: the client's id when it set one, else the
// one the server made up. A successful call has the trailer too.
func TestEveryStatusCarriesItsRequestID(t *testing.T) {
	const clientID = "7d0c58a4-4a1e-4e57-9a3c-2b0e2f5a9c11"
	in := servertest.Start(t, securedConfig())
	tests := []struct {
		name   string
		key    string
		req    *llmrelayv1.GenerateRequest
		id     string // "" for a made-up one
		reason string
	}{
		{"no key", "", echoRequest("x"), "", "CREDENTIALS_MISSING"},
		{"an invalid request", keyFull, &llmrelayv1.GenerateRequest{Model: "mock/echo", RequestId: clientID}, clientID, "INVALID_REQUEST"},
		{"an unknown model", keyFull, &llmrelayv1.GenerateRequest{Model: "nope/x", RequestId: clientID, Messages: echoRequest("x").Messages}, clientID, "UNKNOWN_PROVIDER"},
		{"a provider failure", keyFull, withOptions(t, echoRequest("x"), map[string]any{"faults": []any{map[string]any{"status": 400}}}), "", "PROVIDER_REJECTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.key != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tt.key)
			}
			var trailer metadata.MD
			stream, err := in.Client.Generate(ctx, tt.req, grpc.Trailer(&trailer))
			if err == nil {
				_, err = servertest.ReadAll(stream)
			}
			st := wantError(t, err, status.Code(err), tt.reason)
			id := detail[*errdetails.ErrorInfo](st).GetMetadata()["request_id"]
			if got := trailer.Get("llmrelay-request-id"); len(got) != 1 || got[0] != id {
				t.Errorf("trailer llmrelay-request-id = %v, want the ErrorInfo's %q", got, id)
			}
			if tt.id != "" && id != tt.id {
				t.Errorf("request_id = %q, want the client's %q", id, tt.id)
			}
			if tt.id == "" && len(id) != 36 {
				t.Errorf("request_id = %q, want a UUID the server made up", id)
			}
		})
	}
	t.Run("a successful call", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+keyFull)
		req := echoRequest("hello")
		req.RequestId = clientID
		var trailer metadata.MD
		stream, err := in.Client.Generate(ctx, req, grpc.Trailer(&trailer))
		if err == nil {
			_, err = servertest.ReadAll(stream)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := trailer.Get("llmrelay-request-id"); len(got) != 1 || got[0] != clientID {
			t.Errorf("trailer llmrelay-request-id = %v, want %q", got, clientID)
		}
	})
}

// TestAnErrorReportFindsItsLogRecords: from what a client can report of a
// failed call (its status, with the request id the server made up), an
// operator finds every log record the server wrote of that call, and
// they say why it failed.
func TestAnErrorReportFindsItsLogRecords(t *testing.T) {
	up := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: []openaitest.Fault{
		{Kind: openaitest.Status, Status: 503}, {Kind: openaitest.Drop, After: 1},
	}})
	t.Cleanup(httpx.CloseIdleConnections)
	var logs servertest.LockedBuffer
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL()}}
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))

	before := len(logs.String())
	req := outboundRequest("fake") // no request id: the server makes one up
	req.Retry = &llmrelayv1.RetryPolicy{MaxAttempts: 2, InitialBackoff: durationpb.New(time.Millisecond)}
	r := generateFailing(t, in.Client, req)
	id := r.metadata["request_id"]
	if id == "" || r.requestID != id {
		t.Fatalf("the report's request id: ErrorInfo %q, trailer %q; want one id in both", id, r.requestID)
	}

	var found []map[string]any
	for line := range strings.SplitSeq(logs.String()[before:], "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["request_id"] != id {
			t.Errorf("a record of the call without its request id: %s", line)
			continue
		}
		found = append(found, rec)
	}
	msgs := map[string]map[string]any{}
	for _, rec := range found {
		msgs[rec["msg"].(string)] = rec
	}
	for _, msg := range []string{"started call", "retrying", "generate failed", "finished call"} {
		if msgs[msg] == nil {
			t.Errorf("no %q record with request_id %s among %d records:\n%s", msg, id, len(found), logs.String()[before:])
		}
	}
	if fin := msgs["finished call"]; fin != nil && (fin["grpc.code"] != r.st.Code().String() || !strings.Contains(fin["grpc.error"].(string), "RETRIES_EXHAUSTED")) {
		t.Errorf("the finish record says %v / %v; want the client's code %v and RETRIES_EXHAUSTED", fin["grpc.code"], fin["grpc.error"], r.st.Code())
	}
	if retry := msgs["retrying"]; retry != nil && retry["reason"] != "OVERLOADED" {
		t.Errorf("the retry record's reason = %v, want OVERLOADED (the first attempt's 503)", retry["reason"])
	}
}
