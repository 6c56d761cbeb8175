package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

const anyModelConfig = `
providers:
  - {name: mock, kind: mock}
  - {name: open, kind: openai, base_url: "http://127.0.0.1:9"}
auth:
  keys:
    - {name: gpt, sha256: %s, scopes: [models.list], models: ["mock/echo", "open/gpt-4o*"]}
    - {name: mock-only, sha256: %s, scopes: [models.list], models: ["mock/*"]}
`

// TestModelsListAnyModelProvider: a provider whose config lists no models
// accepts any model name; GET /v1/models names it in an llmrelay member
// beside the list's data, whose every id stays one to call, in OpenAI's
// shape and in Anthropic's, and only to a key that may use a model of it.
func TestModelsListAnyModelProvider(t *testing.T) {
	cfg, err := config.Parse(fmt.Appendf(nil, anyModelConfig, auth.HashKey("sk-gpt"), auth.HashKey("sk-mock")))
	if err != nil {
		t.Fatal(err)
	}
	base := servertest.Start(t, cfg).HTTP(t)
	const member = `{"any_model_providers":[{"provider":"open","provider_kind":"openai","key_patterns":["open/gpt-4o*"]}]}`
	for _, tc := range []struct {
		name, key string
		headers   map[string]string
		member    string
	}{
		{"OpenAI's shape", "sk-gpt", nil, member},
		{"Anthropic's shape", "sk-gpt", map[string]string{"Anthropic-Version": "2023-06-01"}, member},
		{"a key that may use none of its models", "sk-mock", nil, ""},
		{"a key that may use none of its models, Anthropic's shape", "sk-mock", map[string]string{"Anthropic-Version": "2023-06-01"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, base, request{method: http.MethodGet, path: "/v1/models", key: tc.key, headers: tc.headers})
			var list struct {
				Data     []struct{ ID string }
				Llmrelay json.RawMessage
			}
			if err := json.Unmarshal([]byte(r.body), &list); r.status != 200 || err != nil {
				t.Fatalf("%d %v %s", r.status, err, r.body)
			}
			if got := string(list.Llmrelay); got != tc.member {
				t.Errorf("llmrelay member %s, want %s", got, tc.member)
			}
			for _, m := range list.Data {
				if strings.HasPrefix(m.ID, "open/") {
					t.Errorf("data lists %s: it accepts any model name", m.ID)
				}
			}
		})
	}
}
