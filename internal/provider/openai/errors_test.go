package openai

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// TestErrorTable checks the adapter's error table: each error response and
// in-stream error gets its failure class straight from its status, type
// and code.
func TestErrorTable(t *testing.T) {
	tests := []struct {
		name   string
		status int // 0: an in-stream error
		body   string
		want   provider.Class
	}{
		{"429 rate limited", 429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`, provider.ClassRateLimited},
		{"429 insufficient_quota type", 429, `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, provider.ClassQuotaExhausted},
		{"429 insufficient_quota code only", 429, `{"error":{"message":"quota","type":"requests","code":"insufficient_quota"}}`, provider.ClassQuotaExhausted},
		{"429 billing_hard_limit_reached", 429, `{"error":{"message":"billing","type":"billing_hard_limit_reached"}}`, provider.ClassQuotaExhausted},
		{"a quota type under another status", 400, `{"error":{"message":"quota","type":"insufficient_quota"}}`, provider.ClassRejected},
		{"503 from a proxy, not JSON", 503, `<html>upstream down</html>`, provider.ClassOverloaded},
		{"529 overloaded", 529, `{"error":{"message":"overloaded","type":"overloaded_error"}}`, provider.ClassOverloaded},
		{"400 vllm BadRequestError", 400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`, provider.ClassRejected},
		{"401 invalid key", 401, `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`, provider.ClassAuth},
		{"500 server error", 500, `{"error":{"message":"boom","type":"server_error"}}`, provider.ClassServerError},

		{"in-stream server_error", 0, `{"error":{"message":"boom","type":"server_error","code":null}}`, provider.ClassServerError},
		{"in-stream api_error", 0, `{"error":{"message":"boom","type":"api_error"}}`, provider.ClassServerError},
		{"in-stream rate_limit_error", 0, `{"error":{"message":"slow","type":"rate_limit_error"}}`, provider.ClassRateLimited},
		{"in-stream insufficient_quota", 0, `{"error":{"message":"quota","type":"insufficient_quota"}}`, provider.ClassQuotaExhausted},
		{"in-stream invalid_request_error", 0, `{"error":{"message":"bad","type":"invalid_request_error"}}`, provider.ClassRejected},
		{"in-stream context_length_exceeded", 0, `{"error":{"message":"long","code":"context_length_exceeded"}}`, provider.ClassRejected},
		{"in-stream engine_overloaded", 0, `{"error":{"message":"busy","type":"engine_overloaded"}}`, provider.ClassOverloaded},
		{"in-stream google UNAVAILABLE via OpenRouter", 0, `{"error":{"message":"busy","type":"UNAVAILABLE"}}`, provider.ClassOverloaded},
		{"openrouter numeric code", 0, `{"error":{"code":502,"message":"Provider returned error"}}`, provider.ClassServerError},
		{"an unknown type falls back to the numeric code", 0, `{"error":{"type":"mystery","code":503,"message":"m"}}`, provider.ClassOverloaded},
		{"the type wins over the numeric code", 0, `{"error":{"type":"overloaded_error","code":500,"message":"m"}}`, provider.ClassOverloaded},
		{"an unknown type without a code", 0, `{"error":{"type":"mystery","message":"m"}}`, provider.ClassUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *provider.Error
			if tc.status == 0 {
				err := inStreamError([]byte(tc.body))
				got, _ = err.(*provider.Error)
			} else {
				got = &provider.Error{Kind: provider.KindHTTP, Status: tc.status}
				parseErrorBody([]byte(tc.body), got)
			}
			if got == nil || got.Class != tc.want {
				t.Errorf("class of %s = %+v, want %v", tc.body, got, tc.want)
			}
		})
	}
}
