package apierr

import (
	"errors"
	"time"

	"github.com/llmrelay/llmrelay/internal/apikeys"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state"
)

// ErrorInfo reasons of governance: budgets and the admin API. Stable:
// clients switch on them.
const (
	// ReasonBudgetExhausted: RESOURCE_EXHAUSTED, a budget of the call's
	// key or team has no room for it; metadata names the window ("day",
	// "month", "total") and whose budget ("key" or "team"), RetryInfo
	// the time until the window resets (none for total, nor for a
	// reservation over the budget's cap, which no reset makes room for).
	// No provider was called.
	ReasonBudgetExhausted = "BUDGET_EXHAUSTED"
	// ReasonKeyNotFound: NOT_FOUND, no API key has the name.
	ReasonKeyNotFound = "KEY_NOT_FOUND"
	// ReasonKeyExists: ALREADY_EXISTS, a config or stored key has the name.
	ReasonKeyExists = "KEY_EXISTS"
	// ReasonKeyReadOnly: FAILED_PRECONDITION, a config key cannot be
	// changed through the admin API.
	ReasonKeyReadOnly = "KEY_READ_ONLY"
	// ReasonKeyRevoked: FAILED_PRECONDITION, a revoked key cannot be
	// changed.
	ReasonKeyRevoked = "KEY_REVOKED"
	// ReasonKeyConflict: ABORTED, the key kept changing under the update;
	// call again.
	ReasonKeyConflict = "KEY_CONFLICT"
)

// storeRetryAfter is the RetryInfo delay of an operation refused because
// the state store is unavailable: it is pinged about this often.
const storeRetryAfter = time.Second

// governanceError maps the errors of budgets, of the admin API and of the
// state store. ok is false for other errors.
func governanceError(err error) (e *Error, ok bool) {
	var ee *spend.ExhaustedError
	if errors.As(err, &ee) {
		owner := "key"
		if ee.TeamBudget {
			owner = "team"
		}
		meta := map[string]string{"window": string(ee.Budget.Window), "budget": owner, "key": ee.Key}
		if ee.Team != "" {
			meta["team"] = ee.Team
		}
		if !ee.Resets.IsZero() {
			meta["resets_at"] = ee.Resets.UTC().Format(time.RFC3339)
		}
		if ee.OverCap() {
			// No window has room for the call: a client that waits for
			// resets_at would be refused again.
			meta["over_cap"] = "true"
		}
		return &Error{Kind: ResourceExhausted, Reason: ReasonBudgetExhausted, Message: ee.Error(), Metadata: meta, RetryAfter: ee.RetryAfter(), Cause: err}, true
	}
	var fe *apikeys.FieldError
	if errors.As(err, &fe) {
		e := InvalidField(ReasonInvalidRequest, fe.Field, fe.Problem)
		e.Cause = err
		return e, true
	}
	for _, m := range []struct {
		err    error
		kind   Kind
		reason string
	}{
		{apikeys.ErrNotFound, NotFound, ReasonKeyNotFound},
		{apikeys.ErrExists, AlreadyExists, ReasonKeyExists},
		{apikeys.ErrReadOnly, FailedPrecondition, ReasonKeyReadOnly},
		{apikeys.ErrRevoked, FailedPrecondition, ReasonKeyRevoked},
		{apikeys.ErrConflict, Aborted, ReasonKeyConflict},
	} {
		if errors.Is(err, m.err) {
			// The sentinel's words and the key's name: nothing internal.
			return &Error{Kind: m.kind, Reason: m.reason, Message: err.Error(), Cause: err}, true
		}
	}
	if errors.Is(err, state.ErrUnavailable) {
		return &Error{Kind: Unavailable, Reason: ReasonStateStoreUnavailable,
			Message: "the state store is unavailable; call again", RetryAfter: storeRetryAfter, CallAgain: true, Cause: err}, true
	}
	return nil, false
}
