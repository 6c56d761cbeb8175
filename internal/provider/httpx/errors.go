package httpx

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// ErrNoTerminator is wrapped by the error for a stream that ended cleanly
// but without the provider's terminator (`data: [DONE]`, `message_stop`, a
// finish reason): the reply may be truncated, so it is not a success.
var ErrNoTerminator = errors.New("provider stream ended without its terminator")

// ErrAttemptTimeout is wrapped by the error for an attempt that outlived the
// provider's configured timeout.
var ErrAttemptTimeout = errors.New("provider attempt timed out")

// MaxErrorBody bounds how much of an error response's body is read.
const MaxErrorBody = 64 << 10

// ErrorBodyParser fills e's Type, Code and Message (and, for providers that
// put it there, the retry hint) from an error response's body, leaving them
// as they are when the body is not in the provider's error format, and sets
// e.Class from the adapter's error table (see provider.HTTPClass).
type ErrorBodyParser func(body []byte, e *provider.Error)

// ResponseError reads a non-2xx response's body (at most MaxErrorBody
// bytes), closes it and returns the *provider.Error of KindHTTP: the status,
// the retry hint from retry-after-ms or retry-after (seconds or an HTTP
// date, relative to now), x-should-retry, and whatever parse finds in the
// body in the provider's error format. Only what parse finds becomes the
// Message, Type and Code, cleaned and bounded (provider.CleanText): a body
// that is not in the provider's format (a proxy's HTML page, say) leaves
// them empty, and the status alone describes the failure. The raw body is
// kept in Raw (its first MaxRaw bytes), for debug logs only. A redirect (3xx: the client follows
// none, or only same-origin ones, see NewClient) gets a message saying so.
func ResponseError(resp *http.Response, now time.Time, parse ErrorBodyParser) *provider.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	_ = resp.Body.Close()
	e := &provider.Error{Kind: provider.KindHTTP, Status: resp.StatusCode}
	e.RetryAfter, e.HasRetryAfter = RetryHint(resp.Header, now)
	e.ShouldRetry = ShouldRetry(resp.Header)
	if parse != nil {
		parse(body, e)
	}
	e.Message = provider.CleanText(e.Message, provider.MaxMessageLen)
	e.Type = provider.CleanText(e.Type, provider.MaxTypeLen)
	e.Code = provider.CleanText(e.Code, provider.MaxTypeLen)
	e.Raw = string(body[:min(len(body), MaxRaw)])
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		e.Message = RedirectMessage
		e.Raw = "location: " + resp.Header.Get("Location") + "\n" + e.Raw
	}
	return e
}

// RedirectMessage is the message of the error for a redirect that was not
// followed.
const RedirectMessage = "the provider answered with a redirect, which llmrelay does not follow (see the provider's redirects setting)"

// RetryHint returns the retry hint in h: retry-after-ms (milliseconds, as
// OpenAI and Anthropic send it) takes precedence over retry-after (seconds
// or an HTTP date, relative to now). A date in the past is a zero hint;
// malformed or negative values are ignored.
func RetryHint(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < float64(maxHint/time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if !(s >= 0 && s < float64(maxHint/time.Second)) { // NaN too: ParseFloat reads "NaN"
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// maxHint bounds the retry hints RetryHint accepts, so that absurd values
// cannot overflow a Duration; the retry engine caps what it honours anyway.
const maxHint = 24 * time.Hour

// ShouldRetry returns the x-should-retry header as a bool, nil when it is
// absent or neither "true" nor "false".
func ShouldRetry(h http.Header) *bool {
	switch strings.ToLower(strings.TrimSpace(h.Get("X-Should-Retry"))) {
	case "true":
		t := true
		return &t
	case "false":
		f := false
		return &f
	}
	return nil
}

// TransportError returns the *provider.Error of KindTransport (and
// ClassTransport) for err, with the kind of failure err's chain shows
// (NetFailureOf).
func TransportError(msg string, err error) *provider.Error {
	return &provider.Error{Kind: provider.KindTransport, Class: provider.ClassTransport, Message: msg, Err: err, Net: NetFailureOf(err)}
}

// NetFailureOf says what kind of network failure err is, from its chain as
// net/http, net and crypto/tls build it: a stream cut short (ErrCut,
// ErrNoTerminator), a timeout (ErrAttemptTimeout, or a net.Error that
// timed out), a name that does not resolve (*net.DNSError), a refused
// connection (ECONNREFUSED), a failed TLS handshake (certificate
// verification, an alert from the peer, a non-TLS answer), a connection
// reset or closed under the request (ECONNRESET, EPIPE, an unexpected
// EOF); provider.NetUnknown otherwise.
func NetFailureOf(err error) provider.NetFailure {
	var (
		dns    *net.DNSError
		verify *tls.CertificateVerificationError
		record tls.RecordHeaderError
		alert  tls.AlertError
		unk    x509.UnknownAuthorityError
		host   x509.HostnameError
		inval  x509.CertificateInvalidError
		ne     net.Error
	)
	switch {
	case err == nil:
		return provider.NetUnknown
	case errors.Is(err, ErrCut), errors.Is(err, ErrNoTerminator):
		return provider.NetCut
	case errors.Is(err, ErrAttemptTimeout):
		return provider.NetTimeout
	case errors.As(err, &dns):
		// Before the timeout check: a lookup that timed out is still a
		// name that did not resolve.
		return provider.NetDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return provider.NetRefused
	case errors.As(err, &verify), errors.As(err, &record), errors.As(err, &alert),
		errors.As(err, &unk), errors.As(err, &host), errors.As(err, &inval):
		return provider.NetTLS
	case errors.As(err, &ne) && ne.Timeout():
		return provider.NetTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return provider.NetReset
	}
	return provider.NetUnknown
}

// MaxRaw bounds the part of an event a protocol error keeps for the debug
// log (provider.Error.Raw).
const MaxRaw = 4 << 10

// ProtocolError returns the error for an event the adapter cannot decode
// or that does not fit the provider's schema (data is the event's data):
// KindProtocol and ClassProtocol, wrapping ErrMalformed and err, with the
// start of data in Raw for the debug log. The stream (Stream.Recv) turns it
// into a transport error when the event was cut short by the end of the
// body instead.
func ProtocolError(err error, data []byte) *provider.Error {
	return &provider.Error{
		Kind:    provider.KindProtocol,
		Class:   provider.ClassProtocol,
		Message: "a stream event that does not decode",
		Err:     fmt.Errorf("%w: %w", ErrMalformed, err),
		Raw:     string(data[:min(len(data), MaxRaw)]),
	}
}
