package apierr_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

func failure(err error, stop retry.Stop, attempts int) *retry.Failure {
	return &retry.Failure{Err: err, Class: retry.Classify(err), Stop: stop, Attempts: attempts, Provider: "openai"}
}

func httpErr(status int, typ string) *provider.Error {
	return &provider.Error{Kind: provider.KindHTTP, Status: status, Type: typ, Message: "upstream says no"}
}

// classified sets the class the adapter's error table gave e.
func classified(e *provider.Error, c provider.Class) *provider.Error {
	e.Class = c
	return e
}

func withHint(e *provider.Error, d time.Duration) *provider.Error {
	e.RetryAfter, e.HasRetryAfter = d, true
	return e
}

func TestFromFailure(t *testing.T) {
	no := false
	tests := []struct {
		name      string
		f         *retry.Failure
		code      codes.Code
		reason    string
		retryInfo time.Duration // 0: none
		md        map[string]string
	}{
		{"overloaded, attempts exhausted", failure(httpErr(503, "overloaded_error"), retry.StopAttempts, 3),
			codes.Unavailable, "RETRIES_EXHAUSTED", 0,
			map[string]string{"attempts": "3", "provider": "openai", "retry_reason": "OVERLOADED", "provider_status": "503", "provider_error_type": "overloaded_error"}},
		{"stalled, a call of one attempt", failure(retry.ErrStalled, retry.StopAttempts, 1),
			codes.Unavailable, "RETRIES_EXHAUSTED", 0, map[string]string{"attempts": "1", "retry_reason": "STALLED"}},
		{"connection refused, attempts exhausted", failure(&provider.Error{Kind: provider.KindTransport, Net: provider.NetRefused}, retry.StopAttempts, 2),
			codes.Unavailable, "RETRIES_EXHAUSTED", 0, map[string]string{"retry_reason": "TRANSPORT", "transport_failure": "connection_refused"}},
		{"server error, attempts exhausted", failure(httpErr(500, "server_error"), retry.StopAttempts, 2),
			codes.Unavailable, "RETRIES_EXHAUSTED", 0, map[string]string{"attempts": "2"}},
		{"transport, attempts exhausted", failure(&provider.Error{Kind: provider.KindTransport}, retry.StopAttempts, 3),
			codes.Unavailable, "RETRIES_EXHAUSTED", 0, map[string]string{"attempts": "3", "provider": "openai"}},
		{"stalled, attempts exhausted", failure(retry.ErrStalled, retry.StopAttempts, 3),
			codes.Unavailable, "RETRIES_EXHAUSTED", 0, map[string]string{"attempts": "3", "retry_reason": "STALLED"}},
		{"rate limited with a hint, attempts exhausted", failure(withHint(httpErr(429, "rate_limit_error"), 2*time.Second), retry.StopAttempts, 3),
			codes.ResourceExhausted, "RETRIES_EXHAUSTED", 2 * time.Second, map[string]string{"provider_status": "429"}},
		{"rate limited, hint past the deadline", failure(withHint(httpErr(429, ""), 5*time.Second), retry.StopHintPastDeadline, 1),
			codes.ResourceExhausted, "RETRY_HINT_EXCEEDS_DEADLINE", 5 * time.Second, map[string]string{"attempts": "1"}},
		{"overloaded, hint above the cap", failure(withHint(httpErr(529, ""), 2*time.Minute), retry.StopHintTooLong, 1),
			codes.Unavailable, "RETRY_HINT_TOO_LONG", 2 * time.Minute, nil},
		{"backoff past the deadline", failure(httpErr(502, ""), retry.StopBackoffPastDeadline, 2),
			codes.Unavailable, "RETRY_BACKOFF_EXCEEDS_DEADLINE", 0, nil},
		{"budget exhausted", failure(httpErr(503, ""), retry.StopBudget, 1),
			codes.Unavailable, "RETRY_BUDGET_EXHAUSTED", 0, map[string]string{"attempts": "1"}},
		{"failed after output", failure(&provider.Error{Kind: provider.KindTransport}, retry.StopMidstream, 1),
			codes.Unavailable, "MIDSTREAM_FAILED", 0, nil},
		{"rejected request", failure(httpErr(400, "invalid_request_error"), retry.StopNotRetryable, 1),
			codes.InvalidArgument, "PROVIDER_REJECTED", 0, map[string]string{"provider_status": "400", "provider_error_type": "invalid_request_error", "retry_reason": ""}},
		{"not found", failure(httpErr(404, ""), retry.StopNotRetryable, 1), codes.InvalidArgument, "PROVIDER_REJECTED", 0, nil},
		{"too large", failure(httpErr(413, ""), retry.StopNotRetryable, 1), codes.InvalidArgument, "PROVIDER_REJECTED", 0, nil},
		{"unprocessable", failure(httpErr(422, ""), retry.StopNotRetryable, 1), codes.InvalidArgument, "PROVIDER_REJECTED", 0, nil},
		{"longer than the context window", failure(classified(httpErr(400, "invalid_request_error"), provider.ClassContextLength), retry.StopNotRetryable, 1),
			codes.InvalidArgument, "PROVIDER_CONTEXT_LENGTH_EXCEEDED", 0, map[string]string{"provider_status": "400", "attempts": "1"}},
		{"credentials rejected 401", failure(httpErr(401, ""), retry.StopNotRetryable, 1), codes.FailedPrecondition, "PROVIDER_AUTH_FAILED", 0, nil},
		{"credentials rejected 403", failure(httpErr(403, ""), retry.StopNotRetryable, 1), codes.FailedPrecondition, "PROVIDER_AUTH_FAILED", 0, nil},
		{"quota exhausted", failure(withHint(classified(httpErr(429, "insufficient_quota"), provider.ClassQuotaExhausted), time.Second), retry.StopNotRetryable, 1),
			codes.ResourceExhausted, "PROVIDER_QUOTA_EXHAUSTED", 0, nil},
		{"x-should-retry false", failure(withHint(&provider.Error{Kind: provider.KindHTTP, Status: 503, ShouldRetry: &no}, time.Second), retry.StopNotRetryable, 1),
			codes.Unavailable, "PROVIDER_RETRY_DISALLOWED", 0, nil},
		{"a stream that does not decode", failure(&provider.Error{Kind: provider.KindProtocol, Raw: `{"choices": 5}`}, retry.StopNotRetryable, 1),
			codes.Unknown, "PROVIDER_PROTOCOL_ERROR", 0, map[string]string{"attempts": "1"}},
		{"unknown provider error", failure(&provider.Error{Kind: provider.KindInStream, Type: "mystery"}, retry.StopNotRetryable, 1),
			codes.Unknown, "PROVIDER_ERROR", 0, map[string]string{"provider_error_type": "mystery"}},
		{"client cancelled", failure(context.Canceled, retry.StopNotRetryable, 2),
			codes.Canceled, "CANCELLED", 0, map[string]string{"attempts": "2", "provider": "openai"}},
		{"deadline", failure(context.DeadlineExceeded, retry.StopNotRetryable, 1),
			codes.DeadlineExceeded, "DEADLINE_EXCEEDED", 0, map[string]string{"attempts": "1"}},
		{"cut off with a typed error of its own (a key revoked while the call ran)", failure(&apierr.Error{Kind: apierr.Unauthenticated, Reason: "API_KEY_REVOKED",
			Message: "the API key was revoked while the call ran", Metadata: map[string]string{"key": "ci"}, Cause: fmt.Errorf("revoked: %w", context.Canceled)}, retry.StopNotRetryable, 2),
			codes.Unauthenticated, "API_KEY_REVOKED", 0, map[string]string{"key": "ci", "attempts": "2", "provider": "openai"}},
		{"shutdown", failure(apierr.ErrShuttingDown, retry.StopNotRetryable, 1),
			codes.Unavailable, "SERVER_SHUTTING_DOWN", time.Second, nil},
		{"a bug", failure(errors.New("nil map"), retry.StopNotRetryable, 1),
			codes.Internal, "INTERNAL", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status.Convert(apierr.FromFailure(tt.f))
			if st.Code() != tt.code {
				t.Errorf("code = %v, want %v", st.Code(), tt.code)
			}
			var ei *errdetails.ErrorInfo
			var ri *errdetails.RetryInfo
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.ErrorInfo:
					ei = d
				case *errdetails.RetryInfo:
					ri = d
				}
			}
			if ei.GetDomain() != apierr.Domain || ei.GetReason() != tt.reason {
				t.Errorf("ErrorInfo = %s/%s, want %s/%s", ei.GetDomain(), ei.GetReason(), apierr.Domain, tt.reason)
			}
			for k, v := range tt.md {
				if ei.GetMetadata()[k] != v {
					t.Errorf("metadata %s = %q, want %q", k, ei.GetMetadata()[k], v)
				}
			}
			if got := ri.GetRetryDelay().AsDuration(); got != tt.retryInfo {
				t.Errorf("RetryInfo = %v, want %v", got, tt.retryInfo)
			}
		})
	}
}

func TestFromFailureMessage(t *testing.T) {
	rejected := apierr.FromFailure(failure(httpErr(400, "invalid_request_error"), retry.StopNotRetryable, 1))
	// The provider's explanation of a rejected request helps the caller fix it.
	if !strings.Contains(rejected.Message, "upstream says no") || !strings.Contains(rejected.Message, "HTTP 400") {
		t.Errorf("rejected message = %q, want the provider's status and message", rejected.Message)
	}
	// Other failures do not quote the provider: its text may hold account details.
	overloaded := apierr.FromFailure(failure(httpErr(503, ""), retry.StopAttempts, 3))
	if strings.Contains(overloaded.Message, "upstream says no") {
		t.Errorf("overloaded message = %q quotes the provider", overloaded.Message)
	}
	if !strings.Contains(overloaded.Message, "3 attempts") {
		t.Errorf("overloaded message = %q, want the attempt count", overloaded.Message)
	}
	// A 200 that was a document, not a stream, says so (httpx's words).
	document := &provider.Error{Kind: provider.KindProtocol, Class: provider.ClassProtocol, Status: 200, Message: "answered with text/html instead of an event stream"}
	if m := apierr.FromFailure(failure(document, retry.StopNotRetryable, 1)).Message; !strings.Contains(m, "(HTTP 200): answered with text/html instead of an event stream; not retried") {
		t.Errorf("a document's message = %q, want what it was", m)
	}
	long := httpErr(400, "")
	long.Message = strings.Repeat("é", 1000)
	if m := apierr.FromFailure(failure(long, retry.StopNotRetryable, 1)).Message; len(m) > 700 || !strings.Contains(m, "…") {
		t.Errorf("a long provider message is not truncated: %d bytes", len(m))
	}
	// An adapter's in-stream error is quoted cleaned too: no control
	// characters reach the grpc-message trailer.
	dirty := httpErr(400, "invalid\r\nrequest")
	dirty.Message = "line one\r\nline two\x00"
	e := apierr.FromFailure(failure(dirty, retry.StopNotRetryable, 1))
	if strings.ContainsAny(e.Message, "\r\n\x00") || !strings.Contains(e.Message, "line one line two") ||
		e.Metadata["provider_error_type"] != "invalid request" {
		t.Errorf("message %q, metadata %v: want control characters replaced", e.Message, e.Metadata)
	}
}

func TestAttemptCause(t *testing.T) {
	tests := []struct {
		err    error
		code   codes.Code
		reason string
	}{
		{httpErr(429, ""), codes.ResourceExhausted, "PROVIDER_RATE_LIMITED"},
		{httpErr(529, ""), codes.Unavailable, "PROVIDER_OVERLOADED"},
		{httpErr(500, ""), codes.Unavailable, "PROVIDER_SERVER_ERROR"},
		{&provider.Error{Kind: provider.KindTransport}, codes.Unavailable, "PROVIDER_TRANSPORT_ERROR"},
		{retry.ErrStalled, codes.Unavailable, "PROVIDER_STALLED"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			st := status.FromProto(apierr.AttemptCause(retry.Classify(tt.err), "openai", 2))
			if st.Code() != tt.code {
				t.Errorf("code = %v, want %v", st.Code(), tt.code)
			}
			ei, ok := st.Details()[0].(*errdetails.ErrorInfo)
			if !ok || ei.GetReason() != tt.reason || ei.GetMetadata()["attempt"] != "2" || ei.GetMetadata()["provider"] != "openai" {
				t.Errorf("ErrorInfo = %v, want reason %s, attempt 2, provider openai", st.Details(), tt.reason)
			}
		})
	}
}

// TestTransportFailureSaysWhichKind: an unreachable provider's status says
// which kind of network failure it was, in the message and the metadata,
// and nothing of the error chain (which holds the provider's URL).
func TestTransportFailureSaysWhichKind(t *testing.T) {
	secret := errors.New(`Post "https://internal-host:8443/v1/chat?key=sk-secret": dial tcp 10.0.0.7:8443: connect: connection refused`)
	tests := []struct {
		net      provider.NetFailure
		metadata string
		words    string
	}{
		{provider.NetRefused, "connection_refused", "connection refused"},
		{provider.NetDNS, "dns", "host name does not resolve"},
		{provider.NetTLS, "tls", "TLS handshake failed"},
		{provider.NetTimeout, "timeout", "did not answer in time"},
		{provider.NetReset, "connection_reset", "dropped the connection"},
		{provider.NetCut, "stream_cut", "cut its stream short"},
		{provider.NetUnknown, "", "could not be reached or its stream broke"},
	}
	for _, tt := range tests {
		t.Run(tt.net.String(), func(t *testing.T) {
			pe := &provider.Error{Kind: provider.KindTransport, Net: tt.net, Message: "sending the request failed", Err: secret}
			for _, e := range []*apierr.Error{
				apierr.FromFailure(failure(pe, retry.StopAttempts, 3)),
				{Message: status.FromProto(apierr.AttemptCause(retry.Classify(pe), "openai", 1)).Message(),
					Metadata: status.FromProto(apierr.AttemptCause(retry.Classify(pe), "openai", 1)).Details()[0].(*errdetails.ErrorInfo).GetMetadata()},
			} {
				if !strings.Contains(e.Message, tt.words) {
					t.Errorf("message %q does not say %q", e.Message, tt.words)
				}
				if got := e.Metadata["transport_failure"]; got != tt.metadata {
					t.Errorf("transport_failure = %q, want %q", got, tt.metadata)
				}
				if e.Metadata["retry_reason"] != "TRANSPORT" {
					t.Errorf("retry_reason = %q, want TRANSPORT", e.Metadata["retry_reason"])
				}
				if strings.Contains(e.Message, "internal-host") || strings.Contains(e.Message, "sk-secret") || strings.Contains(e.Message, "10.0.0.7") {
					t.Errorf("message %q leaks the provider's address", e.Message)
				}
			}
		})
	}
}
