package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// Headers of every response of the HTTP doors.
const (
	// HeaderRequestID is the call's request id, as llmrelay's logs and
	// gRPC errors name it. The Anthropic door also sends it as
	// HeaderAnthropicRequestID, where Anthropic's SDKs read it.
	HeaderRequestID          = "X-Request-Id"
	HeaderAnthropicRequestID = "Request-Id"
	// HeaderAttempts is how many attempts the reply took: for a streamed
	// reply, the number of the attempt whose output the stream began
	// with (the engine's header); otherwise the Final's attempts, or the
	// failed call's.
	HeaderAttempts = engine.HeaderAttempts
	// HeaderProvider and HeaderModel name the configured provider and the
	// model name at it that the reply comes from.
	HeaderProvider = engine.HeaderProvider
	HeaderModel    = engine.HeaderModel
	// HeaderMidstream is the request header by which a streaming client
	// opts in to restarts after output was sent (MidstreamRestart).
	HeaderMidstream = "Llmrelay-Midstream"
	// MidstreamRestart is the HeaderMidstream value of the opt-in.
	MidstreamRestart = "restart"
	// HeaderShouldRetry tells the official SDKs whether their own retry
	// loop may call again: "false" when llmrelay gave up after retrying
	// (the HTTP counterpart of gRPC's pushback), "true" when the call was
	// refused only because the server or a limit was busy for a while.
	HeaderShouldRetry = "X-Should-Retry"
	// HeaderRetryAfter and HeaderRetryAfterMS say how long to wait before
	// calling again, in whole seconds (rounded up) and in milliseconds.
	HeaderRetryAfter   = "Retry-After"
	HeaderRetryAfterMS = "Retry-After-Ms"
)

// StatusClientClosed is the status a call the client went away from is
// logged with; nobody reads it.
const StatusClientClosed = 499

// failure is an error as the doors answer it, in no wire format yet: the
// one place llmrelay's typed errors (*apierr.Error, whose kinds are the
// canonical gRPC codes) become HTTP statuses and retry headers. Each
// format renders it in its own error body.
type failure struct {
	status int
	// reason is llmrelay's ErrorInfo reason; metadata its metadata.
	reason   string
	metadata map[string]string
	// class is what the provider's last failure was, for a call whose
	// attempts failed (provider.ClassUnknown otherwise).
	class   provider.Class
	message string
	// param names the request field at fault in the wire format's terms,
	// when one is.
	param string
	// retryAfter, when positive, is how long to wait before calling again.
	retryAfter time.Duration
	// callAgain: calling again after retryAfter is all it takes (the
	// server or a limit was busy); otherwise llmrelay gave up itself.
	callAgain bool
}

// kindStatus maps the kinds of error to HTTP statuses the official SDKs
// understand: they retry 408, 409, 429 and 5xx by themselves unless
// x-should-retry says otherwise.
var kindStatus = map[apierr.Kind]int{
	apierr.Canceled:           StatusClientClosed,
	apierr.Unknown:            http.StatusBadGateway, // a provider stream llmrelay cannot decode, or an unrecognised provider error
	apierr.InvalidArgument:    http.StatusBadRequest,
	apierr.DeadlineExceeded:   http.StatusGatewayTimeout,
	apierr.NotFound:           http.StatusNotFound,
	apierr.AlreadyExists:      http.StatusConflict,
	apierr.PermissionDenied:   http.StatusForbidden,
	apierr.ResourceExhausted:  http.StatusTooManyRequests,
	apierr.FailedPrecondition: http.StatusBadGateway, // the provider refused llmrelay's own credentials: the caller cannot fix it
	apierr.Aborted:            http.StatusBadGateway, // the model's reply stayed invalid against the schema
	apierr.OutOfRange:         http.StatusBadRequest,
	apierr.Unimplemented:      http.StatusNotImplemented,
	apierr.Internal:           http.StatusInternalServerError,
	apierr.Unavailable:        http.StatusServiceUnavailable,
	apierr.DataLoss:           http.StatusInternalServerError,
	apierr.Unauthenticated:    http.StatusUnauthorized,
}

// reasonStatus refines kindStatus where a reason has a closer HTTP status.
var reasonStatus = map[string]int{
	apierr.ReasonUnknownModel:    http.StatusNotFound,
	apierr.ReasonUnknownProvider: http.StatusNotFound,
	engine.ReasonRequestTooLarge: http.StatusRequestEntityTooLarge,
	// A model none of whose providers counts tokens: the 404 the count
	// endpoint answered before llmrelay counted, which tools that count
	// before they send take for "no counting here" and estimate instead.
	engine.ReasonTokenCountingNotSupported: http.StatusNotFound,
	// A model whose provider cannot embed: the request's to change, not
	// llmrelay's credentials (FAILED_PRECONDITION's 502).
	engine.ReasonEmbeddingsNotSupported: http.StatusBadRequest,
	// The reply outgrew its output limit: asking for less output helps,
	// calling again does not.
	apierr.ReasonOutputTooLarge: http.StatusBadRequest,
}

// maxCallAgainWait is the longest wait x-should-retry: true asks an SDK to
// sit out inside the application's call. OpenAI's SDKs honour retry-after
// up to a minute (past it they call again within seconds, to be refused
// again), Anthropic's however long it is; a longer wait is the
// application's to decide, from retry-after.
const maxCallAgainWait = time.Minute

// failureOf turns an error of a call into its failure. param maps a field
// path of the engine's request (messages[1].content) to the wire format's
// name for it; nil keeps the paths as they are.
func failureOf(err error, param func(string) string) failure {
	e := apierr.FromError(err)
	f := failure{
		status:     kindStatus[e.Kind],
		reason:     e.Reason,
		metadata:   e.Metadata,
		message:    e.Message,
		retryAfter: e.RetryAfter,
		// A credential is not fixed by waiting: an address throttled for
		// its failed authentications is told how long (retry-after), but
		// the SDKs, which retry any status x-should-retry allows, would
		// wait and send the same wrong key again.
		callAgain: apierr.Pushback(e) != apierr.DoNotRetry && e.Kind != apierr.Unauthenticated && e.RetryAfter <= maxCallAgainWait,
	}
	if s, ok := reasonStatus[e.Reason]; ok {
		f.status = s
	}
	if f.status == 0 {
		f.status = http.StatusInternalServerError
	}
	var rf *retry.Failure
	if errors.As(e, &rf) {
		f.class = rf.Class.Class
	}
	if len(e.FieldViolations) > 0 && e.Reason != apierr.ReasonOutputValidationFailed {
		// The request's own fields: name them as the client wrote them.
		v := e.FieldViolations[0]
		f.param = v.GetField()
		if param != nil {
			f.param = param(f.param)
		}
		// A path may quote the request (a metadata key): bounded, as
		// requestError's.
		f.param = provider.CleanText(f.param, maxParamBytes)
		f.message = f.param + ": " + v.GetDescription()
		if n := len(e.FieldViolations) - 1; n > 0 {
			f.message += " (and " + strconv.Itoa(n) + " more)"
		}
	}
	f.message = provider.CleanText(f.message, apierr.MaxMessageBytes)
	return f
}

// requestError is a request the door cannot translate: the wire field at
// fault (param, in the format's own terms) and what is wrong with it.
func requestError(param, msg string) failure {
	// Both may quote the request (a member's name, a field the decoder
	// did not know): bounded and cleaned, as the gRPC door's statuses
	// are, so that a request cannot make its error, and its log line,
	// as large as itself.
	param = provider.CleanText(param, maxParamBytes)
	m := provider.CleanText(msg, apierr.MaxMessageBytes)
	if param != "" {
		m = provider.CleanText(param+": "+m, apierr.MaxMessageBytes)
	}
	return failure{status: http.StatusBadRequest, reason: apierr.ReasonInvalidRequest, param: param, message: m}
}

// maxParamBytes bounds an error's param, the request member it names.
const maxParamBytes = 256

// setRetryHeaders sets the headers by which the official SDKs decide
// whether, and when, to call again.
func (f failure) setRetryHeaders(h http.Header) {
	if f.callAgain {
		h.Set(HeaderShouldRetry, "true")
	} else {
		h.Set(HeaderShouldRetry, "false")
	}
	if f.retryAfter > 0 {
		ms := int64((f.retryAfter + time.Millisecond - 1) / time.Millisecond)
		h.Set(HeaderRetryAfterMS, strconv.FormatInt(ms, 10))
		h.Set(HeaderRetryAfter, strconv.FormatInt((ms+999)/1000, 10))
	}
}

// code is llmrelay's reason as a lower-case error code.
func (f failure) code() string { return strings.ToLower(f.reason) }
