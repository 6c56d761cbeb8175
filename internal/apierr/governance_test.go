package apierr_test

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/apikeys"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state"
)

func TestGovernanceErrors(t *testing.T) {
	now := time.Date(2025, 6, 1, 18, 0, 0, 0, time.UTC)
	day := &spend.ExhaustedError{Key: "ci", Team: "research", Budget: spend.Budget{Window: spend.Day, MaxCostUSD: 0.01},
		Balance: state.Balance{Used: state.Amount{Cost: 9_000_000}}, Reservation: state.Amount{Cost: 3_000_000}, Resets: now.Add(6 * time.Hour), Now: now}
	total := &spend.ExhaustedError{Key: "ci", Team: "research", TeamBudget: true, Budget: spend.Budget{Window: spend.Total, MaxTokens: 10}, Now: now}
	tests := []struct {
		name      string
		err       error
		code      codes.Code
		reason    string
		retryInfo time.Duration
		md        map[string]string
		field     string
	}{
		{"a key's day budget", day, codes.ResourceExhausted, "BUDGET_EXHAUSTED", 6 * time.Hour,
			map[string]string{"window": "day", "budget": "key", "key": "ci", "team": "research", "resets_at": "2025-06-02T00:00:00Z"}, ""},
		{"a team's total budget: no wait helps", total, codes.ResourceExhausted, "BUDGET_EXHAUSTED", 0,
			map[string]string{"window": "total", "budget": "team"}, ""},
		{"a bad field", &apikeys.FieldError{Field: "key.team", Problem: "is not a configured team"}, codes.InvalidArgument, "INVALID_REQUEST", 0, nil, "key.team"},
		{"no such key", fmt.Errorf("%w: ci", apikeys.ErrNotFound), codes.NotFound, "KEY_NOT_FOUND", 0, nil, ""},
		{"a name taken", fmt.Errorf("%w: ci", apikeys.ErrExists), codes.AlreadyExists, "KEY_EXISTS", 0, nil, ""},
		{"a config key", apikeys.ErrReadOnly, codes.FailedPrecondition, "KEY_READ_ONLY", 0, nil, ""},
		{"a revoked key", apikeys.ErrRevoked, codes.FailedPrecondition, "KEY_REVOKED", 0, nil, ""},
		{"a conflict", apikeys.ErrConflict, codes.Aborted, "KEY_CONFLICT", 0, nil, ""},
		{"the store down", &state.UnavailableError{}, codes.Unavailable, "STATE_STORE_UNAVAILABLE", time.Second, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := status.Convert(apierr.FromError(tc.err))
			if st.Code() != tc.code {
				t.Fatalf("code %v, want %v (%v)", st.Code(), tc.code, st.Message())
			}
			var info *errdetails.ErrorInfo
			var retryAfter time.Duration
			var field string
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.ErrorInfo:
					info = d
				case *errdetails.RetryInfo:
					retryAfter = d.GetRetryDelay().AsDuration()
				case *errdetails.BadRequest:
					field = d.GetFieldViolations()[0].GetField()
				}
			}
			if info.GetReason() != tc.reason || retryAfter != tc.retryInfo || field != tc.field {
				t.Fatalf("reason %s, retry info %v, field %q; want %s, %v, %q", info.GetReason(), retryAfter, field, tc.reason, tc.retryInfo, tc.field)
			}
			for k, v := range tc.md {
				if info.GetMetadata()[k] != v {
					t.Errorf("metadata %s = %q, want %q", k, info.GetMetadata()[k], v)
				}
			}
		})
	}
}

// TestErrorSaysItsMessageOnce: the text of an error the log's finished
// call line shows (grpc.error) says a message once when its cause is the
// same words (a budget's refusal, a key's sentinel), and still adds a cause
// that says more than the client was told.
func TestErrorSaysItsMessageOnce(t *testing.T) {
	budget := &spend.ExhaustedError{Key: "ci", Budget: spend.Budget{Window: spend.Total, MaxTokens: 10}, Reservation: state.Amount{Tokens: 20}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a budget's refusal", budget, "ResourceExhausted BUDGET_EXHAUSTED: " + budget.Error()},
		{"no such key", fmt.Errorf("%w: ci", apikeys.ErrNotFound), "NotFound KEY_NOT_FOUND: " + apikeys.ErrNotFound.Error() + ": ci"},
		{"a cause with more to say", &apierr.Error{Kind: apierr.Internal, Reason: "INTERNAL", Message: "internal error", Cause: fmt.Errorf("a bug")},
			"Internal INTERNAL: internal error: a bug"},
	}
	for _, tc := range tests {
		if got := apierr.FromError(tc.err).Error(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
