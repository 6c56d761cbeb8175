package openai

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestErrorTable checks the adapter's error table: each error response and
// in-stream error gets its failure class straight from its status, type
// and code.
func TestErrorTable(t *testing.T) {
	pt.CheckErrorTable(t, []pt.ErrorCase{
		{Name: "429 rate limited", Status: 429, Body: `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`, Want: provider.ClassRateLimited},
		{Name: "429 insufficient_quota type", Status: 429, Body: `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "429 insufficient_quota code only", Status: 429, Body: `{"error":{"message":"quota","type":"requests","code":"insufficient_quota"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "429 billing_hard_limit_reached", Status: 429, Body: `{"error":{"message":"billing","type":"billing_hard_limit_reached"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "402 DeepSeek insufficient balance", Status: 402, Body: `{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "402 OpenRouter credits", Status: 402, Body: `{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "in-stream OpenRouter 402", Status: 0, Body: `{"error":{"code":402,"message":"Insufficient credits"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "a quota type under another status", Status: 400, Body: `{"error":{"message":"quota","type":"insufficient_quota"}}`, Want: provider.ClassRejected},
		{Name: "503 from a proxy, not JSON", Status: 503, Body: `<html>upstream down</html>`, Want: provider.ClassOverloaded},
		{Name: "529 overloaded", Status: 529, Body: `{"error":{"message":"overloaded","type":"overloaded_error"}}`, Want: provider.ClassOverloaded},
		// The context window: OpenAI's code, llama.cpp's type, and the
		// servers that say it in words only (vLLM, DeepSeek, Mistral).
		{Name: "400 OpenAI context_length_exceeded", Status: 400, Body: `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, Want: provider.ClassContextLength},
		{Name: "400 llama.cpp exceed_context_size_error", Status: 400, Body: `{"error":{"code":400,"message":"request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9412,"n_ctx":8192}}`, Want: provider.ClassContextLength},
		{Name: "400 vLLM context overflow in words", Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, Want: provider.ClassContextLength},
		{Name: "400 DeepSeek context overflow in words", Status: 400, Body: `{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (62000 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, Want: provider.ClassContextLength},
		{Name: "a context-length code under 429 stays a rate limit", Status: 429, Body: `{"error":{"message":"slow down","type":"requests","code":"context_length_exceeded"}}`, Want: provider.ClassRateLimited},
		{Name: "400 vllm BadRequestError", Status: 400, Body: `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`, Want: provider.ClassRejected},
		{Name: "401 invalid key", Status: 401, Body: `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`, Want: provider.ClassAuth},
		{Name: "500 server error", Status: 500, Body: `{"error":{"message":"boom","type":"server_error"}}`, Want: provider.ClassServerError},
		{Name: "400 Groq tool_use_failed", Status: 400, Body: `{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=x{}>"}}`, Want: provider.ClassInvalidOutput},
		{Name: "in-stream Groq tool_use_failed", Status: 0, Body: `{"error":{"message":"Tool choice is required, but model did not call a tool","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"","status_code":400}}`, Want: provider.ClassInvalidOutput},

		{Name: "in-stream server_error", Status: 0, Body: `{"error":{"message":"boom","type":"server_error","code":null}}`, Want: provider.ClassServerError},
		{Name: "in-stream api_error", Status: 0, Body: `{"error":{"message":"boom","type":"api_error"}}`, Want: provider.ClassServerError},
		{Name: "in-stream rate_limit_error", Status: 0, Body: `{"error":{"message":"slow","type":"rate_limit_error"}}`, Want: provider.ClassRateLimited},
		{Name: "in-stream insufficient_quota", Status: 0, Body: `{"error":{"message":"quota","type":"insufficient_quota"}}`, Want: provider.ClassQuotaExhausted},
		{Name: "in-stream invalid_request_error", Status: 0, Body: `{"error":{"message":"bad","type":"invalid_request_error"}}`, Want: provider.ClassRejected},
		{Name: "in-stream context_length_exceeded", Status: 0, Body: `{"error":{"message":"long","code":"context_length_exceeded"}}`, Want: provider.ClassContextLength},
		{Name: "in-stream OpenRouter context overflow in words", Status: 0, Body: `{"error":{"code":400,"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens."}}`, Want: provider.ClassContextLength},
		{Name: "in-stream engine_overloaded", Status: 0, Body: `{"error":{"message":"busy","type":"engine_overloaded"}}`, Want: provider.ClassOverloaded},
		{Name: "in-stream google UNAVAILABLE via OpenRouter", Status: 0, Body: `{"error":{"message":"busy","type":"UNAVAILABLE"}}`, Want: provider.ClassOverloaded},
		{Name: "openrouter numeric code", Status: 0, Body: `{"error":{"code":502,"message":"Provider returned error"}}`, Want: provider.ClassServerError},
		{Name: "an unknown type falls back to the numeric code", Status: 0, Body: `{"error":{"type":"mystery","code":503,"message":"m"}}`, Want: provider.ClassOverloaded},
		{Name: "the type wins over the numeric code", Status: 0, Body: `{"error":{"type":"overloaded_error","code":500,"message":"m"}}`, Want: provider.ClassOverloaded},
		{Name: "an unknown type without a code", Status: 0, Body: `{"error":{"type":"mystery","message":"m"}}`, Want: provider.ClassUnknown},
	}, parseErrorBody, func(object []byte) error {
		return decode("data: " + string(object) + "\n\n").Err
	})
}
