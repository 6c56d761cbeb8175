package httpx_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// testBody stands in for an adapter's request struct.
type testBody struct {
	Model       string         `json:"model"`
	Messages    []string       `json:"messages"`
	Temperature *float64       `json:"temperature,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
	Output      map[string]any `json:"output,omitempty"`
}

var testOwned = httpx.Owned{"model": "model", "messages": "messages", "output.format": "response_format"}

func TestEncodeMergesProviderOptions(t *testing.T) {
	temp := 0.5
	tests := []struct {
		name string
		body testBody
		opts string
		want string
	}{
		{"no options: the struct as it is", testBody{Model: "m"}, `{}`, `{"model":"m","messages":null}`},
		{"top-level keys are added", testBody{Model: "m"}, `{"seed":7,"reasoning_effort":"high"}`,
			`{"messages":null,"model":"m","reasoning_effort":"high","seed":7}`},
		{"an object merges into an object key by key", testBody{Model: "m", Config: map[string]any{"maxTokens": 5}},
			`{"config":{"topK":40,"thinking":{"budget":1024}}}`,
			`{"config":{"maxTokens":5,"thinking":{"budget":1024},"topK":40},"messages":null,"model":"m"}`},
		{"an object next to an owned path", testBody{Model: "m"}, `{"output":{"effort":"high"}}`,
			`{"messages":null,"model":"m","output":{"effort":"high"}}`},
		{"extra_headers is not a body field", testBody{Model: "m", Temperature: &temp}, `{"extra_headers":{"anthropic-beta":"x"}}`,
			`{"model":"m","messages":null,"temperature":0.5}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts map[string]any
			if err := json.Unmarshal([]byte(tc.opts), &opts); err != nil {
				t.Fatal(err)
			}
			enc, err := httpx.Encode(tc.body, opts, testOwned)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if string(enc.Body) != tc.want {
				t.Errorf("body\n %s\nwant\n %s", enc.Body, tc.want)
			}
		})
	}
}

func TestEncodeRefusesWhatLLMRelaySets(t *testing.T) {
	temp := 0.5
	body := testBody{Model: "m", Temperature: &temp, Config: map[string]any{"maxTokens": 5}}
	tests := []struct{ name, opts, field string }{
		{"an owned key", `{"model":"x"}`, "provider_options.model"},
		{"an owned key even with its field unset", `{"messages":[]}`, "provider_options.messages"},
		{"a key the request set through its own field", `{"temperature":1}`, "provider_options.temperature"},
		{"a nested key the request set", `{"config":{"maxTokens":9}}`, "provider_options.config.maxTokens"},
		{"a nested owned path", `{"output":{"format":{}}}`, "provider_options.output.format"},
		{"a scalar over an object with an owned path", `{"output":"x"}`, "provider_options.output"},
		{"a scalar over an object the request set", `{"config":1}`, "provider_options.config"},
		{"extra_headers that is not an object", `{"extra_headers":["a"]}`, "provider_options.extra_headers"},
		{"a header value that is not a string", `{"extra_headers":{"x-a":1}}`, "provider_options.extra_headers.x-a"},
		{"a credentials header", `{"extra_headers":{"authorization":"Bearer x"}}`, "provider_options.extra_headers.authorization"},
		{"the key header of another provider", `{"extra_headers":{"X-Goog-Api-Key":"k"}}`, "provider_options.extra_headers.X-Goog-Api-Key"},
		{"Azure API Management's subscription key", `{"extra_headers":{"Ocp-Apim-Subscription-Key":"k"}}`, "provider_options.extra_headers.Ocp-Apim-Subscription-Key"},
		{"Azure Resource Manager's auxiliary tokens", `{"extra_headers":{"x-ms-authorization-auxiliary":"Bearer x"}}`, "provider_options.extra_headers.x-ms-authorization-auxiliary"},
		{"a gateway's key (LiteLLM)", `{"extra_headers":{"x-litellm-api-key":"sk-x"}}`, "provider_options.extra_headers.x-litellm-api-key"},
		{"a gateway's key (Portkey)", `{"extra_headers":{"x-portkey-api-key":"k"}}`, "provider_options.extra_headers.x-portkey-api-key"},
		{"a gateway's key (Cloudflare AI Gateway)", `{"extra_headers":{"cf-aig-authorization":"Bearer x"}}`, "provider_options.extra_headers.cf-aig-authorization"},
		{"a gateway's key (Helicone)", `{"extra_headers":{"Helicone-Auth":"Bearer x"}}`, "provider_options.extra_headers.Helicone-Auth"},
		{"a gateway's key (Kong)", `{"extra_headers":{"apikey":"k"}}`, "provider_options.extra_headers.apikey"},
		{"Google's IAM token", `{"extra_headers":{"X-Goog-Iam-Authorization-Token":"t"}}`, "provider_options.extra_headers.X-Goog-Iam-Authorization-Token"},
		{"AWS's session token", `{"extra_headers":{"X-Amz-Security-Token":"t"}}`, "provider_options.extra_headers.X-Amz-Security-Token"},
		{"OpenAI's organization billed", `{"extra_headers":{"openai-organization":"org-other"}}`, "provider_options.extra_headers.openai-organization"},
		{"OpenAI's project billed", `{"extra_headers":{"OpenAI-Project":"proj_other"}}`, "provider_options.extra_headers.OpenAI-Project"},
		{"Google's quota project billed", `{"extra_headers":{"X-Goog-User-Project":"other-project"}}`, "provider_options.extra_headers.X-Goog-User-Project"},
		{"a framing header", `{"extra_headers":{"Content-Length":"1"}}`, "provider_options.extra_headers.Content-Length"},
		{"a proxy header", `{"extra_headers":{"Proxy-Connection":"x"}}`, "provider_options.extra_headers.Proxy-Connection"},
		{"a bad header name", `{"extra_headers":{"a b":"x"}}`, "provider_options.extra_headers.a b"},
		{"a header value with a line break", `{"extra_headers":{"x-a":"1\r\nHost: evil"}}`, "provider_options.extra_headers.x-a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts map[string]any
			if err := json.Unmarshal([]byte(tc.opts), &opts); err != nil {
				t.Fatal(err)
			}
			_, err := httpx.Encode(body, opts, testOwned)
			var fe *provider.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || fe.Description == "" {
				t.Errorf("Encode = %v, want a *provider.FieldError naming %s", err, tc.field)
			}
		})
	}
}

func TestEncodeExtraHeaders(t *testing.T) {
	enc, err := httpx.Encode(testBody{}, map[string]any{"extra_headers": map[string]any{"anthropic-beta": "interleaved-thinking-2025-05-14", "X-Title": "app"}}, testOwned)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Header.Get("Anthropic-Beta") != "interleaved-thinking-2025-05-14" || enc.Header.Get("X-Title") != "app" || len(enc.Header) != 2 {
		t.Errorf("headers %v, want anthropic-beta and X-Title", enc.Header)
	}
}
