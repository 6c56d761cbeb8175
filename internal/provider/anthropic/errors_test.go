package anthropic

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// TestErrorTable checks the adapter's error table: Anthropic's error types,
// as `error` events under HTTP 200 and as error responses, each with its
// failure class.
func TestErrorTable(t *testing.T) {
	inStream := map[string]provider.Class{
		"overloaded_error":      provider.ClassOverloaded,
		"api_error":             provider.ClassServerError,
		"timeout_error":         provider.ClassServerError,
		"rate_limit_error":      provider.ClassRateLimited,
		"billing_error":         provider.ClassQuotaExhausted,
		"invalid_request_error": provider.ClassRejected,
		"not_found_error":       provider.ClassRejected,
		"request_too_large":     provider.ClassRejected,
		"authentication_error":  provider.ClassAuth,
		"permission_error":      provider.ClassAuth,
		"brand_new_error":       provider.ClassUnknown,
	}
	for typ, want := range inStream {
		if got := (&apiError{Type: typ}).inStream().Class; got != want {
			t.Errorf("in-stream %s: class %v, want %v", typ, got, want)
		}
	}

	responses := []struct {
		status int
		typ    string
		want   provider.Class
	}{
		{529, "overloaded_error", provider.ClassOverloaded},
		{429, "rate_limit_error", provider.ClassRateLimited},
		{429, "billing_error", provider.ClassQuotaExhausted},
		{402, "billing_error", provider.ClassRejected},
		{500, "api_error", provider.ClassServerError},
		{401, "authentication_error", provider.ClassAuth},
		{400, "invalid_request_error", provider.ClassRejected},
		{502, "", provider.ClassServerError},
	}
	for _, tc := range responses {
		e := &provider.Error{Kind: provider.KindHTTP, Status: tc.status}
		parseErrorBody([]byte(`{"type":"error","error":{"type":"`+tc.typ+`","message":"m"}}`), e)
		if e.Class != tc.want {
			t.Errorf("HTTP %d %s: class %v, want %v", tc.status, tc.typ, e.Class, tc.want)
		}
	}
}
