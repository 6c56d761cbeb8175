package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// timeoutError is a net.Error that timed out, like a dial or read timeout.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func httpErr(status int, typ, code string) *provider.Error {
	return &provider.Error{Kind: provider.KindHTTP, Status: status, Type: typ, Code: code}
}

func inStream(typ string, status int) *provider.Error {
	return &provider.Error{Kind: provider.KindInStream, Type: typ, Status: status}
}

func TestClassify(t *testing.T) {
	yes, no := true, false
	withShouldRetry := func(e *provider.Error, v *bool) *provider.Error { e.ShouldRetry = v; return e }

	tests := []struct {
		name      string
		err       error
		class     retry.Class
		retryable bool
		reason    retry.Reason
	}{
		// Retryable HTTP statuses.
		{"408 request timeout", httpErr(408, "", ""), retry.ClassServerError, true, retry.ReasonServerError},
		{"409 conflict", httpErr(409, "", ""), retry.ClassServerError, true, retry.ReasonServerError},
		{"429 rate limited", httpErr(429, "rate_limit_error", ""), retry.ClassRateLimited, true, retry.ReasonRateLimited},
		{"429 without a type", httpErr(429, "", ""), retry.ClassRateLimited, true, retry.ReasonRateLimited},
		{"503 unavailable", httpErr(503, "", ""), retry.ClassOverloaded, true, retry.ReasonOverloaded},
		{"529 anthropic overloaded", httpErr(529, "overloaded_error", ""), retry.ClassOverloaded, true, retry.ReasonOverloaded},
		{"500 internal", httpErr(500, "api_error", ""), retry.ClassServerError, true, retry.ReasonServerError},
		{"502 bad gateway", httpErr(502, "", ""), retry.ClassServerError, true, retry.ReasonServerError},
		{"504 gateway timeout", httpErr(504, "", ""), retry.ClassServerError, true, retry.ReasonServerError},
		{"520 other 5xx", httpErr(520, "", ""), retry.ClassServerError, true, retry.ReasonServerError},
		{"gemini 429 RESOURCE_EXHAUSTED", httpErr(429, "RESOURCE_EXHAUSTED", ""), retry.ClassRateLimited, true, retry.ReasonRateLimited},
		{"gemini 503 UNAVAILABLE", httpErr(503, "UNAVAILABLE", ""), retry.ClassOverloaded, true, retry.ReasonOverloaded},

		// Not retryable HTTP statuses.
		{"400 bad request", httpErr(400, "invalid_request_error", ""), retry.ClassRejected, false, retry.ReasonUnspecified},
		{"404 not found", httpErr(404, "not_found_error", ""), retry.ClassRejected, false, retry.ReasonUnspecified},
		{"413 too large", httpErr(413, "request_too_large", ""), retry.ClassRejected, false, retry.ReasonUnspecified},
		{"422 unprocessable", httpErr(422, "", ""), retry.ClassRejected, false, retry.ReasonUnspecified},
		{"418 other 4xx", httpErr(418, "", ""), retry.ClassRejected, false, retry.ReasonUnspecified},
		{"401 unauthorized", httpErr(401, "authentication_error", ""), retry.ClassAuth, false, retry.ReasonUnspecified},
		{"403 forbidden", httpErr(403, "permission_error", ""), retry.ClassAuth, false, retry.ReasonUnspecified},
		{"429 openai insufficient_quota type", httpErr(429, "insufficient_quota", "insufficient_quota"), retry.ClassQuotaExhausted, false, retry.ReasonUnspecified},
		{"429 insufficient_quota code only", httpErr(429, "requests", "insufficient_quota"), retry.ClassQuotaExhausted, false, retry.ReasonUnspecified},
		{"429 anthropic billing_error", httpErr(429, "billing_error", ""), retry.ClassQuotaExhausted, false, retry.ReasonUnspecified},
		{"http error without status or known type", httpErr(0, "", ""), retry.ClassUnknown, false, retry.ReasonUnspecified},

		// x-should-retry overrides the status.
		{"503 with x-should-retry false", withShouldRetry(httpErr(503, "", ""), &no), retry.ClassOverloaded, false, retry.ReasonOverloaded},
		{"400 with x-should-retry true", withShouldRetry(httpErr(400, "", ""), &yes), retry.ClassRejected, true, retry.ReasonServerError},
		{"429 quota with x-should-retry true", withShouldRetry(httpErr(429, "insufficient_quota", ""), &yes), retry.ClassQuotaExhausted, true, retry.ReasonRateLimited},

		// In-stream errors (under HTTP 200): by the provider's error type.
		{"in-stream overloaded_error", inStream("overloaded_error", 0), retry.ClassOverloaded, true, retry.ReasonOverloaded},
		{"in-stream api_error", inStream("api_error", 0), retry.ClassServerError, true, retry.ReasonServerError},
		{"in-stream server_error", inStream("server_error", 0), retry.ClassServerError, true, retry.ReasonServerError},
		{"in-stream rate_limit_error", inStream("rate_limit_error", 0), retry.ClassRateLimited, true, retry.ReasonRateLimited},
		{"in-stream insufficient_quota", inStream("insufficient_quota", 0), retry.ClassQuotaExhausted, false, retry.ReasonUnspecified},
		{"in-stream gemini UNAVAILABLE", inStream("UNAVAILABLE", 0), retry.ClassOverloaded, true, retry.ReasonOverloaded},
		{"in-stream gemini RESOURCE_EXHAUSTED", inStream("RESOURCE_EXHAUSTED", 0), retry.ClassRateLimited, true, retry.ReasonRateLimited},
		{"in-stream gemini INTERNAL", inStream("INTERNAL", 0), retry.ClassServerError, true, retry.ReasonServerError},
		{"in-stream invalid_request_error", inStream("invalid_request_error", 0), retry.ClassRejected, false, retry.ReasonUnspecified},
		{"in-stream unknown type falls back to status", inStream("mystery", 503), retry.ClassOverloaded, true, retry.ReasonOverloaded},
		{"in-stream type wins over status", inStream("overloaded_error", 500), retry.ClassOverloaded, true, retry.ReasonOverloaded},
		{"in-stream unknown type, no status", inStream("mystery", 0), retry.ClassUnknown, false, retry.ReasonUnspecified},

		// Transport.
		{"provider transport error", &provider.Error{Kind: provider.KindTransport, Err: io.ErrUnexpectedEOF}, retry.ClassTransport, true, retry.ReasonTransport},
		{"malformed stream", &provider.Error{Kind: provider.KindTransport, Err: errors.New("invalid character")}, retry.ClassTransport, true, retry.ReasonTransport},
		{"bare EOF", io.EOF, retry.ClassTransport, true, retry.ReasonTransport},
		{"bare unexpected EOF", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), retry.ClassTransport, true, retry.ReasonTransport},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, retry.ClassTransport, true, retry.ReasonTransport},
		{"connection reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, retry.ClassTransport, true, retry.ReasonTransport},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutError{}}, retry.ClassTransport, true, retry.ReasonTransport},

		// Stalls, contexts, unknown.
		{"stalled", fmt.Errorf("attempt 2: %w", retry.ErrStalled), retry.ClassStalled, true, retry.ReasonStalled},
		{"client cancelled", context.Canceled, retry.ClassCanceled, false, retry.ReasonUnspecified},
		{"deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), retry.ClassDeadline, false, retry.ReasonUnspecified},
		{"unknown error", errors.New("something odd"), retry.ClassUnknown, false, retry.ReasonUnspecified},
		{"wrapped provider error", fmt.Errorf("attempt 1: %w", httpErr(503, "", "")), retry.ClassOverloaded, true, retry.ReasonOverloaded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := retry.Classify(tt.err)
			if got.Class != tt.class || got.Retryable != tt.retryable || got.Reason != tt.reason {
				t.Errorf("Classify(%v) = class %v, retryable %v, reason %v; want %v, %v, %v",
					tt.err, got.Class, got.Retryable, got.Reason, tt.class, tt.retryable, tt.reason)
			}
		})
	}
}

func TestClassifyKeepsTheHint(t *testing.T) {
	tests := []struct {
		name    string
		err     *provider.Error
		hint    time.Duration
		hasHint bool
	}{
		{"retry-after-ms", &provider.Error{Kind: provider.KindHTTP, Status: 429, RetryAfter: 700 * time.Millisecond, HasRetryAfter: true}, 700 * time.Millisecond, true},
		{"zero hint is a hint", &provider.Error{Kind: provider.KindHTTP, Status: 503, HasRetryAfter: true}, 0, true},
		{"negative hint is ignored", &provider.Error{Kind: provider.KindHTTP, Status: 503, RetryAfter: -time.Second, HasRetryAfter: true}, 0, false},
		{"no hint", &provider.Error{Kind: provider.KindHTTP, Status: 503}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := retry.Classify(tt.err)
			if got.Hint != tt.hint || got.HasHint != tt.hasHint {
				t.Errorf("hint = %v (%v), want %v (%v)", got.Hint, got.HasHint, tt.hint, tt.hasHint)
			}
			if got.Provider != tt.err {
				t.Errorf("Provider = %v, want the provider error", got.Provider)
			}
		})
	}
}

func TestReasonsMirrorTheProto(t *testing.T) {
	for n, name := range llmrelayv1.RetryReason_name {
		if got := "RETRY_REASON_" + retry.Reason(n).String(); got != name {
			t.Errorf("Reason(%d) = %s, want %s", n, got, name)
		}
	}
}

func TestMidstreamMirrorsTheProto(t *testing.T) {
	if retry.MidstreamRestart != retry.Midstream(llmrelayv1.Midstream_MIDSTREAM_RESTART) ||
		retry.MidstreamFail != retry.Midstream(llmrelayv1.Midstream_MIDSTREAM_FAIL) {
		t.Error("Midstream values differ from llmrelay.v1.Midstream")
	}
}
