package client

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// Domain is the ErrorInfo domain of llmrelay's errors.
const Domain = "llmrelay"

// Error is a failed llmrelay call: its gRPC status with the details llmrelay
// attaches, as Go values. Switch on Reason (stable, UPPER_SNAKE), not on
// Message.
type Error struct {
	// Code is the gRPC status code.
	Code codes.Code
	// Message is the status message, written for people.
	Message string
	// Reason is the ErrorInfo reason, e.g. "PROVIDER_RATE_LIMITED"; empty
	// when the status carries no ErrorInfo (an error from below llmrelay,
	// such as a proxy or the connection).
	Reason string
	// Domain is the ErrorInfo domain: Domain for llmrelay's own errors.
	Domain string
	// Metadata is the ErrorInfo metadata, e.g. "attempts", "provider".
	Metadata map[string]string
	// RetryDelay is the RetryInfo delay: how long to wait before calling
	// again. Meaningful only when HasRetryDelay is set.
	RetryDelay time.Duration
	// HasRetryDelay reports whether the status carries a RetryInfo.
	HasRetryDelay bool
	// FieldViolations are the google.rpc.BadRequest violations, if any.
	FieldViolations []*errdetails.BadRequest_FieldViolation
	// RequestID is the call's request id, to report with the error and to
	// find the server's log records of the call by: the ErrorInfo
	// metadata's "request_id", else, for an error of a Stream, the call's
	// llmrelay-request-id trailer or the id the request set; "" when none
	// is known (a will_retry's cause carries none).
	RequestID string

	status *status.Status
	// cause is the error FromError was given, when it was not a status.
	cause error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("llmrelay: %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("llmrelay: %s %s: %s", e.Code, e.Reason, e.Message)
}

// GRPCStatus returns the status the error was made from, with every
// detail, so that status.FromError and status.Code see through an *Error.
func (e *Error) GRPCStatus() *status.Status { return e.status }

// Unwrap returns the error an *Error was made from when that error was not
// a gRPC status (so errors.Is sees, say, a dial error), and nil otherwise.
func (e *Error) Unwrap() error { return e.cause }

// FromError returns err as an *Error: an *Error (wrapped or not) as it is, a
// gRPC status error with its details decoded, and any other error as
// codes.Unknown. It returns nil for nil.
func FromError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	// status.FromError unwraps, and maps errors that are not statuses to
	// codes.Unknown with the error's text.
	st, ok := status.FromError(err)
	e = fromStatus(st)
	if !ok {
		e.cause = err
	}
	return e
}

// FromStatusProto returns a google.rpc.Status, such as a will_retry event's
// cause, as an *Error. It returns nil for nil.
func FromStatusProto(s *spb.Status) *Error {
	if s == nil {
		return nil
	}
	return fromStatus(status.FromProto(s))
}

// CauseOf returns why the attempt a will_retry event reports failed.
func CauseOf(w *llmrelayv1.WillRetry) *Error { return FromStatusProto(w.GetCause()) }

func fromStatus(st *status.Status) *Error {
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			if e.Reason == "" {
				e.Reason, e.Domain, e.Metadata = d.GetReason(), d.GetDomain(), d.GetMetadata()
				e.RequestID = e.Metadata["request_id"]
			}
		case *errdetails.RetryInfo:
			e.RetryDelay, e.HasRetryDelay = d.GetRetryDelay().AsDuration(), true
		case *errdetails.BadRequest:
			e.FieldViolations = append(e.FieldViolations, d.GetFieldViolations()...)
		}
	}
	return e
}
