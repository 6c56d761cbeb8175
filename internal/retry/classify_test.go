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

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
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

// classified is a provider error its adapter classified.
func classified(kind provider.ErrorKind, class provider.Class, status int) *provider.Error {
	return &provider.Error{Kind: kind, Class: class, Status: status}
}

func TestClassify(t *testing.T) {
	yes, no := true, false
	withShouldRetry := func(e *provider.Error, v *bool) *provider.Error { e.ShouldRetry = v; return e }

	tests := []struct {
		name      string
		err       error
		class     provider.Class
		retryable bool
		reason    retry.Reason
	}{
		// An HTTP error its adapter left unclassified has the generic
		// meaning of its status (provider.ClassOfStatus). Retryable:
		{"408 request timeout", httpErr(408, "", ""), provider.ClassServerError, true, retry.ReasonServerError},
		{"409 conflict", httpErr(409, "", ""), provider.ClassServerError, true, retry.ReasonServerError},
		{"429 rate limited", httpErr(429, "rate_limit_error", ""), provider.ClassRateLimited, true, retry.ReasonRateLimited},
		{"429 without a type", httpErr(429, "", ""), provider.ClassRateLimited, true, retry.ReasonRateLimited},
		{"503 unavailable", httpErr(503, "", ""), provider.ClassOverloaded, true, retry.ReasonOverloaded},
		{"529 anthropic overloaded", httpErr(529, "overloaded_error", ""), provider.ClassOverloaded, true, retry.ReasonOverloaded},
		{"500 internal", httpErr(500, "api_error", ""), provider.ClassServerError, true, retry.ReasonServerError},
		{"502 bad gateway", httpErr(502, "", ""), provider.ClassServerError, true, retry.ReasonServerError},
		{"504 gateway timeout", httpErr(504, "", ""), provider.ClassServerError, true, retry.ReasonServerError},
		{"520 other 5xx", httpErr(520, "", ""), provider.ClassServerError, true, retry.ReasonServerError},
		{"gemini 429 RESOURCE_EXHAUSTED", httpErr(429, "RESOURCE_EXHAUSTED", ""), provider.ClassRateLimited, true, retry.ReasonRateLimited},
		{"gemini 503 UNAVAILABLE", httpErr(503, "UNAVAILABLE", ""), provider.ClassOverloaded, true, retry.ReasonOverloaded},

		// Not retryable:
		{"400 bad request", httpErr(400, "invalid_request_error", ""), provider.ClassRejected, false, retry.ReasonUnspecified},
		{"404 not found", httpErr(404, "not_found_error", ""), provider.ClassNotFound, false, retry.ReasonUnspecified},
		{"413 too large", httpErr(413, "request_too_large", ""), provider.ClassRejected, false, retry.ReasonUnspecified},
		{"422 unprocessable", httpErr(422, "", ""), provider.ClassRejected, false, retry.ReasonUnspecified},
		{"418 other 4xx", httpErr(418, "", ""), provider.ClassRejected, false, retry.ReasonUnspecified},
		{"401 unauthorized", httpErr(401, "authentication_error", ""), provider.ClassAuth, false, retry.ReasonUnspecified},
		{"403 forbidden", httpErr(403, "permission_error", ""), provider.ClassAuth, false, retry.ReasonUnspecified},
		{"http error without status or known type", httpErr(0, "", ""), provider.ClassUnknown, false, retry.ReasonUnspecified},

		// x-should-retry overrides the status.
		{"503 with x-should-retry false", withShouldRetry(httpErr(503, "", ""), &no), provider.ClassOverloaded, false, retry.ReasonOverloaded},
		{"400 with x-should-retry true", withShouldRetry(httpErr(400, "", ""), &yes), provider.ClassRejected, true, retry.ReasonServerError},
		{"429 quota with x-should-retry true", withShouldRetry(classified(provider.KindHTTP, provider.ClassQuotaExhausted, 429), &yes), provider.ClassQuotaExhausted, true, retry.ReasonRateLimited},
		{"rejection with x-should-retry true", withShouldRetry(classified(provider.KindInStream, provider.ClassRejected, 0), &yes), provider.ClassRejected, true, retry.ReasonServerError},

		// The adapter's class decides, whatever the status says (each
		// adapter's error table is tested with the adapter).
		{"quota exhausted", classified(provider.KindHTTP, provider.ClassQuotaExhausted, 429), provider.ClassQuotaExhausted, false, retry.ReasonUnspecified},
		{"in-stream overloaded", classified(provider.KindInStream, provider.ClassOverloaded, 0), provider.ClassOverloaded, true, retry.ReasonOverloaded},
		{"in-stream server error", classified(provider.KindInStream, provider.ClassServerError, 529), provider.ClassServerError, true, retry.ReasonServerError},
		{"in-stream rate limited", classified(provider.KindInStream, provider.ClassRateLimited, 0), provider.ClassRateLimited, true, retry.ReasonRateLimited},
		{"in-stream rejected", classified(provider.KindInStream, provider.ClassRejected, 400), provider.ClassRejected, false, retry.ReasonUnspecified},
		{"in-stream error the adapter did not classify", &provider.Error{Kind: provider.KindInStream, Type: "overloaded_error", Status: 529}, provider.ClassUnknown, false, retry.ReasonUnspecified},

		// Transport.
		{"provider transport error", &provider.Error{Kind: provider.KindTransport, Err: io.ErrUnexpectedEOF}, provider.ClassTransport, true, retry.ReasonTransport},
		{"stream cut mid-event", &provider.Error{Kind: provider.KindTransport, Err: errors.New("unexpected end of JSON input")}, provider.ClassTransport, true, retry.ReasonTransport},
		{"a complete event that does not decode", &provider.Error{Kind: provider.KindProtocol, Err: errors.New("invalid character")}, provider.ClassProtocol, false, retry.ReasonUnspecified},
		{"bare EOF", io.EOF, provider.ClassTransport, true, retry.ReasonTransport},
		{"bare unexpected EOF", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), provider.ClassTransport, true, retry.ReasonTransport},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, provider.ClassTransport, true, retry.ReasonTransport},
		{"connection reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, provider.ClassTransport, true, retry.ReasonTransport},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutError{}}, provider.ClassTransport, true, retry.ReasonTransport},

		// Stalls, contexts, unknown.
		{"stalled", fmt.Errorf("attempt 2: %w", retry.ErrStalled), provider.ClassStalled, true, retry.ReasonStalled},
		{"client cancelled", context.Canceled, provider.ClassCanceled, false, retry.ReasonUnspecified},
		{"deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), provider.ClassDeadline, false, retry.ReasonUnspecified},
		{"unknown error", errors.New("something odd"), provider.ClassUnknown, false, retry.ReasonUnspecified},
		{"wrapped provider error", fmt.Errorf("attempt 1: %w", httpErr(503, "", "")), provider.ClassOverloaded, true, retry.ReasonOverloaded},
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
