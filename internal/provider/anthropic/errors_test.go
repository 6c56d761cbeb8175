package anthropic

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestErrorTable checks the adapter's error table: Anthropic's error types,
// as `error` events under HTTP 200 and as error responses, each with its
// failure class.
func TestErrorTable(t *testing.T) {
	pt.CheckErrorTable(t, []pt.ErrorCase{
		{Name: "in-stream overloaded_error", Body: `{"type":"overloaded_error","message":"Overloaded"}`, Want: provider.ClassOverloaded},
		{Name: "in-stream api_error", Body: `{"type":"api_error","message":"m"}`, Want: provider.ClassServerError},
		{Name: "in-stream timeout_error", Body: `{"type":"timeout_error","message":"m"}`, Want: provider.ClassServerError},
		{Name: "in-stream rate_limit_error", Body: `{"type":"rate_limit_error","message":"m"}`, Want: provider.ClassRateLimited},
		{Name: "in-stream billing_error", Body: `{"type":"billing_error","message":"m"}`, Want: provider.ClassQuotaExhausted},
		{Name: "in-stream invalid_request_error", Body: `{"type":"invalid_request_error","message":"m"}`, Want: provider.ClassRejected},
		{Name: "in-stream not_found_error", Body: `{"type":"not_found_error","message":"m"}`, Want: provider.ClassNotFound},
		{Name: "in-stream request_too_large", Body: `{"type":"request_too_large","message":"m"}`, Want: provider.ClassRejected},
		{Name: "in-stream authentication_error", Body: `{"type":"authentication_error","message":"m"}`, Want: provider.ClassAuth},
		{Name: "in-stream permission_error", Body: `{"type":"permission_error","message":"m"}`, Want: provider.ClassAuth},
		{Name: "in-stream type it does not document", Body: `{"type":"brand_new_error","message":"m"}`, Want: provider.ClassUnknown},

		{Name: "529 overloaded", Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"m"}}`, Want: provider.ClassOverloaded},
		{Name: "429 rate limited", Status: 429, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"m"}}`, Want: provider.ClassRateLimited},
		{Name: "429 billing_error", Status: 429, Body: `{"type":"error","error":{"type":"billing_error","message":"m"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "402 billing_error", Status: 402, Body: `{"type":"error","error":{"type":"billing_error","message":"m"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "500 api_error", Status: 500, Body: `{"type":"error","error":{"type":"api_error","message":"m"}}`, Want: provider.ClassServerError},
		{Name: "401 authentication_error", Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"m"}}`, Want: provider.ClassAuth},
		{Name: "400 invalid_request_error", Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"m"}}`, Want: provider.ClassRejected},
		// The context window, which Anthropic names in words only.
		{Name: "400 prompt is too long", Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208656 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"}`, Want: provider.ClassContextLength},
		{Name: "400 input and max_tokens exceed the context limit", Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 197202 + 8192 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`, Want: provider.ClassContextLength},
		{Name: "400 another invalid request naming a prompt", Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages: the prompt is too long for a system block"}}`, Want: provider.ClassRejected},
		{Name: "502 from a proxy, not JSON", Status: 502, Body: `<html>bad gateway</html>`, Want: provider.ClassServerError},
	}, parseErrorBody, func(object []byte) error {
		return decode(event("error", `{"type":"error","error":`+string(object)+`}`)).Err
	})
}
