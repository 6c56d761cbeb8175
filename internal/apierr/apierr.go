// Package apierr is the one place where llmrelay's errors become gRPC
// statuses. Every status it builds carries a google.rpc.ErrorInfo with the
// domain "llmrelay" and an UPPER_SNAKE reason, a google.rpc.RetryInfo when
// waiting before calling again helps, and a google.rpc.BadRequest when
// request fields are at fault.
//
// The public message is written for the caller. Of an upstream failure it
// carries only the provider's HTTP status and error type and, when the
// provider rejected the request, the provider's own message, bounded (see
// FromFailure); the internal cause, with everything else the upstream sent,
// is kept apart for logs.
package apierr

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/llmrelay/llmrelay/internal/hook"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/schema"
	"github.com/llmrelay/llmrelay/internal/servertools"
)

// Domain is the ErrorInfo domain of every llmrelay error.
const Domain = "llmrelay"

// ErrorInfo reasons. Stable: clients switch on them.
const (
	ReasonInvalidRequest         = "INVALID_REQUEST"
	ReasonInvalidProviderOptions = "INVALID_PROVIDER_OPTIONS"
	ReasonUnknownProvider        = "UNKNOWN_PROVIDER"
	ReasonUnknownModel           = "UNKNOWN_MODEL"
	ReasonProviderRejected       = "PROVIDER_REJECTED"
	ReasonProviderAuthFailed     = "PROVIDER_AUTH_FAILED"
	ReasonProviderRateLimited    = "PROVIDER_RATE_LIMITED"
	// Kinds of provider failure, as a WillRetry cause names them (and a
	// failed call, when the failure is never retried).
	ReasonProviderOverloaded     = "PROVIDER_OVERLOADED"
	ReasonProviderServerError    = "PROVIDER_SERVER_ERROR"
	ReasonProviderTransport      = "PROVIDER_TRANSPORT_ERROR"
	ReasonProviderStalled        = "PROVIDER_STALLED"
	ReasonProviderProtocolError  = "PROVIDER_PROTOCOL_ERROR"
	ReasonProviderQuotaExhausted = "PROVIDER_QUOTA_EXHAUSTED"
	// The request is longer than the model's context window.
	ReasonProviderContextLength   = "PROVIDER_CONTEXT_LENGTH_EXCEEDED"
	ReasonProviderError           = "PROVIDER_ERROR"
	ReasonProviderRetryDisallowed = "PROVIDER_RETRY_DISALLOWED"
	// Why a call stopped retrying a transient failure.
	ReasonRetriesExhausted            = "RETRIES_EXHAUSTED"
	ReasonRetryBudgetExhausted        = "RETRY_BUDGET_EXHAUSTED"
	ReasonRetryHintTooLong            = "RETRY_HINT_TOO_LONG"
	ReasonRetryHintExceedsDeadline    = "RETRY_HINT_EXCEEDS_DEADLINE"
	ReasonRetryBackoffExceedsDeadline = "RETRY_BACKOFF_EXCEEDS_DEADLINE"
	ReasonMidstreamFailed             = "MIDSTREAM_FAILED"
	ReasonCancelled                   = "CANCELLED"
	ReasonDeadlineExceeded            = "DEADLINE_EXCEEDED"
	ReasonShuttingDown                = "SERVER_SHUTTING_DOWN"
	// ReasonStateStoreUnavailable: the shared state store (Redis) is
	// unreachable (UNAVAILABLE, with RetryInfo).
	ReasonStateStoreUnavailable = "STATE_STORE_UNAVAILABLE"
	ReasonInternal              = "INTERNAL"
	// ReasonRefusedByHook is the reason of a call a server hook refused
	// without naming a reason of its own.
	ReasonRefusedByHook = "REFUSED_BY_HOOK"
	// Server tools (GenerateRequest.server_tools): the API key may not use
	// the tool (PERMISSION_DENIED), no MCP server offers it
	// (INVALID_ARGUMENT), its MCP server is not answering (UNAVAILABLE,
	// with RetryInfo), a reload removed it while the call ran, between two
	// turns (FAILED_PRECONDITION). Metadata `tool` names the entry.
	ReasonServerToolNotPermitted = "SERVER_TOOL_NOT_PERMITTED"
	ReasonUnknownServerTool      = "UNKNOWN_SERVER_TOOL"
	ReasonServerToolUnavailable  = "SERVER_TOOL_UNAVAILABLE"
	ReasonServerToolRemoved      = "SERVER_TOOL_REMOVED"
	// ReasonProviderOptionNotAllowed: the operator's policy for the
	// provider (providers[].provider_options) refuses a provider_options
	// key of the request, or its options (an anthropic provider's
	// client_betas) a beta of extra_headers (PERMISSION_DENIED; metadata
	// `option`, `provider` and for a beta `beta`, and a BadRequest on
	// provider_options.<key>, provider_options.extra_headers.<header>).
	ReasonProviderOptionNotAllowed = "PROVIDER_OPTION_NOT_ALLOWED"
	// ReasonCredentialsMissing: the call sent no credentials to a server
	// with API keys (UNAUTHENTICATED; the engine's admission refuses it).
	// Here rather than among admission's reasons so that a client, the
	// command line's, can tell it without importing the engine.
	ReasonCredentialsMissing = "CREDENTIALS_MISSING"
)

// ErrShuttingDown is the cause with which the server cuts off calls still
// running when its shutdown grace period ends. It maps to UNAVAILABLE: the
// client should call again, and will reach another instance.
var ErrShuttingDown = errors.New("server shutting down")

// Error is an error with everything its gRPC status needs. It implements
// GRPCStatus, so gRPC sends it as it is.
type Error struct {
	// Kind is what kind of failure this is; the gRPC door makes it the
	// status code (GRPCStatus).
	Kind Kind
	// Reason is the ErrorInfo reason.
	Reason string
	// Message is the public message.
	Message string
	// Metadata is the ErrorInfo metadata.
	Metadata map[string]string
	// RetryAfter, when positive, adds a RetryInfo with this delay.
	RetryAfter time.Duration
	// CallAgain says that calling again after RetryAfter is all it takes
	// (the server was busy or shutting down), so a client's gRPC retry
	// policy may do it by itself: the status's grpc-retry-pushback-ms is
	// RetryAfter instead of -1 (see Pushback). A failed provider call never
	// sets it: the server has retried that as far as it would.
	CallAgain bool
	// FieldViolations, when any, add a BadRequest.
	FieldViolations []*errdetails.BadRequest_FieldViolation
	// Extra details appended as they are.
	Extra []protoadapt.MessageV1
	// Cause is the internal cause, for logs only.
	Cause error
}

// Error implements error with the public message and the internal cause,
// the text the call's log line shows (grpc.error, error.cause). A cause
// whose words the message already holds (a budget's refusal, a key's
// sentinel, a model that does not resolve) is not said twice.
func (e *Error) Error() string {
	s := e.Kind.String() + " " + e.Reason + ": " + e.Message
	if e.Cause != nil {
		if cause := e.Cause.Error(); !strings.Contains(e.Message, cause) {
			s += ": " + cause
		}
	}
	return s
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Cause }

// resolutionError maps a model that does not resolve: INVALID_ARGUMENT with
// a BadRequest on its field (`model`, or `fallback_models[i]` when a
// route.ResolveError says so), reason UNKNOWN_PROVIDER or UNKNOWN_MODEL,
// and a message that names only what was asked for. ok is false for other
// errors.
func resolutionError(err error) (e *Error, ok bool) {
	reason := ReasonUnknownModel
	switch {
	case errors.Is(err, provider.ErrUnknownProvider):
		reason = ReasonUnknownProvider
	case !errors.Is(err, provider.ErrUnknownModel):
		return nil, false
	}
	field, msg := "model", err.Error()
	var re *route.ResolveError
	if errors.As(err, &re) {
		field, msg = re.Field, re.Err.Error()
	}
	// ListModels is an RPC's name: the HTTP doors' callers (an SDK, curl)
	// know it as GET /v1/models.
	e = InvalidField(reason, field, msg+"; ListModels (GET /v1/models over HTTP) lists the models you may use")
	e.Cause = err
	return e, true
}

// serverToolError maps a request's server tool that cannot be offered
// (*servertools.ResolveError): PERMISSION_DENIED, INVALID_ARGUMENT with a
// BadRequest on its field, or UNAVAILABLE with a RetryInfo; metadata
// `tool` names the entry. ok is false for other errors.
func serverToolError(err error) (e *Error, ok bool) {
	var re *servertools.ResolveError
	if !errors.As(err, &re) {
		return nil, false
	}
	msg := re.Error()
	switch {
	case errors.Is(err, servertools.ErrNotPermitted):
		e = &Error{Kind: PermissionDenied, Reason: ReasonServerToolNotPermitted, Message: msg + "; ListTools lists the server tools the key may use"}
	case errors.Is(err, servertools.ErrUnavailable):
		e = &Error{Kind: Unavailable, Reason: ReasonServerToolUnavailable, Message: msg, RetryAfter: max(re.RetryAfter, time.Second)}
	case errors.Is(err, servertools.ErrRemoved):
		// The request was good when the call took it: no field of it
		// is to blame.
		e = &Error{Kind: FailedPrecondition, Reason: ReasonServerToolRemoved, Message: msg}
	default:
		desc := strings.TrimPrefix(msg, re.Field+": ")
		e = InvalidField(ReasonUnknownServerTool, re.Field, desc)
	}
	e.Metadata = map[string]string{"tool": re.Entry}
	e.Cause = err
	return e, true
}

// InvalidField returns INVALID_ARGUMENT for one bad request field.
func InvalidField(reason, field, description string) *Error {
	return &Error{
		Kind:    InvalidArgument,
		Reason:  reason,
		Message: field + ": " + description,
		FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: field, Description: description},
		},
	}
}

// FromError turns any error into an *Error. Errors that already are one
// pass through; context errors become CANCELLED or DEADLINE_EXCEEDED; a
// *provider.FieldError (INVALID_PROVIDER_OPTIONS under provider_options,
// else INVALID_REQUEST), a *schema.SchemaError, schema.ErrSchemaTooLarge,
// a *schema.BudgetError and the resolution errors provider.ErrUnknownProvider (UNKNOWN_PROVIDER)
// and provider.ErrUnknownModel (UNKNOWN_MODEL) become INVALID_ARGUMENT; a *schema.InvalidOutputError becomes ABORTED
// (see InvalidOutput); a *provider.OptionNotAllowedError becomes
// PERMISSION_DENIED, PROVIDER_OPTION_NOT_ALLOWED; a server hook's
// *hook.Refusal becomes PERMISSION_DENIED with the hook's reason; anything else is INTERNAL with
// the cause kept for the log only.
func FromError(err error) *Error {
	if err == nil {
		return nil
	}
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var ne *provider.OptionNotAllowedError
	if errors.As(err, &ne) {
		// The operator's policy, as MODEL_NOT_ALLOWED is: the request is
		// well formed, and the same key may pass with another provider.
		// The BadRequest names the field, which the HTTP doors report as
		// the request member at fault.
		e := InvalidField(ReasonProviderOptionNotAllowed, ne.Field(), ne.Description())
		e.Kind = PermissionDenied
		e.Metadata = map[string]string{"option": ne.Option, "provider": ne.Provider}
		if ne.Beta != "" {
			e.Metadata["beta"] = ne.Beta
		}
		e.Cause = err
		return e
	}
	var fe *provider.FieldError
	if errors.As(err, &fe) {
		reason := ReasonInvalidRequest
		if fe.Field == "provider_options" || strings.HasPrefix(fe.Field, "provider_options.") {
			reason = ReasonInvalidProviderOptions
		}
		e := InvalidField(reason, fe.Field, fe.Description)
		e.Cause = err
		return e
	}
	if e, ok := schemaError(err); ok {
		return e
	}
	var rf *hook.Refusal
	if errors.As(err, &rf) {
		reason := rf.Reason
		if reason == "" {
			reason = ReasonRefusedByHook
		}
		return &Error{Kind: PermissionDenied, Reason: reason, Message: rf.Message, Metadata: map[string]string{"hook": rf.Hook}, Cause: err}
	}
	if e, ok := resolutionError(err); ok {
		return e
	}
	if e, ok := serverToolError(err); ok {
		return e
	}
	if e, ok := governanceError(err); ok {
		return e
	}
	var ioe *schema.InvalidOutputError
	if errors.As(err, &ioe) {
		return InvalidOutput(ioe, "")
	}
	switch {
	case errors.Is(err, ErrShuttingDown):
		return &Error{Kind: Unavailable, Reason: ReasonShuttingDown, Message: "the server is shutting down; call again", RetryAfter: time.Second, CallAgain: true, Cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Kind: Canceled, Reason: ReasonCancelled, Message: "the call was cancelled", Cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: DeadlineExceeded, Reason: ReasonDeadlineExceeded, Message: "the call's deadline passed", Cause: err}
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return fromStatus(st, err)
	}
	return &Error{Kind: Internal, Reason: ReasonInternal, Message: "internal error", Cause: err}
}

// fromStatus rebuilds the Error a status was made of (a resumable call's
// stored outcome, a status from another llmrelay): its kind, message and
// details, with the ErrorInfo's reason and metadata (INTERNAL without
// one), the RetryInfo's delay and the BadRequest's violations.
func fromStatus(st *status.Status, cause error) *Error {
	e := &Error{Kind: Kind(st.Code()), Reason: ReasonInternal, Message: st.Message(), Cause: cause}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			e.Reason, e.Metadata = d.GetReason(), d.GetMetadata()
		case *errdetails.RetryInfo:
			e.RetryAfter = d.GetRetryDelay().AsDuration()
		case *errdetails.BadRequest:
			e.FieldViolations = d.GetFieldViolations()
		case protoadapt.MessageV1:
			e.Extra = append(e.Extra, d)
		}
	}
	return e
}
