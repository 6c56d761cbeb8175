package httpapi_test

import (
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// A route's default response_format is a streamed HTTP reply's schema
// too: the door's rule for clients that cannot take back what they were
// shown (no re-asks; the reply is still validated) holds for it as for a
// request's own schema. The route's schema used to be re-asked: the
// stream ended MIDSTREAM_FAILED instead of with the reply the route's
// on_invalid: return_text promises, and the server logged an INTERNAL
// failure.
func TestStreamedReplyToARouteWithADefaultSchemaIsNotReasked(t *testing.T) {
	cfg, err := config.Parse([]byte(`
providers:
  - {name: mock, kind: mock}
routes:
  - name: tickets
    targets: [{model: mock/echo}]
    defaults:
      response_format:
        name: ticket
        on_invalid: return_text
        json_schema: {type: object, properties: {title: {type: string}}, required: [title]}
`))
	if err != nil {
		t.Fatal(err)
	}
	in := servertest.Start(t, cfg, server.WithRetryTimer(retrytest.Instant{}))
	base := in.HTTP(t)
	const faults = `"llmrelay":{"provider_options":{"faults":[{"output":"not a ticket"},{"output":"{\"title\":\"late\"}"}]}}`
	for _, tc := range []struct{ name, path, body string }{
		{"openai", "/v1/chat/completions", `{"model":"tickets","stream":true,"messages":[{"role":"user","content":"x"}],` + faults + `}`},
		{"anthropic", "/v1/messages", `{"model":"tickets","stream":true,"max_tokens":99,"messages":[{"role":"user","content":"x"}],` + faults + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, base, request{path: tc.path, body: tc.body, headers: map[string]string{"Anthropic-Version": "2023-06-01"}})
			if r.status != 200 || strings.Contains(r.body, "MIDSTREAM_FAILED") || strings.Contains(r.body, `"error"`) ||
				!strings.Contains(r.body, "ticket") || strings.Contains(r.body, "late") {
				t.Errorf("%d %s\nwant the first reply's text, as on_invalid: return_text gives it, and no re-ask", r.status, r.body)
			}
			if got := r.header.Get("Llmrelay-Attempts"); got != "1" {
				t.Errorf("llmrelay-attempts %q, want 1", got)
			}
		})
	}

	// A request's own schema: validated, not re-asked (OpenAI's format has
	// no on_invalid: the call fails with the validation's reason).
	t.Run("the request's own schema", func(t *testing.T) {
		body := `{"model":"mock/echo","stream":true,"messages":[{"role":"user","content":"x"}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"ticket","schema":{"type":"object","required":["title"]}}},` + faults + `}`
		r := call(t, base, request{path: "/v1/chat/completions", body: body})
		if r.status != 200 || !strings.Contains(r.body, "OUTPUT_VALIDATION_FAILED") || strings.Contains(r.body, "late") {
			t.Errorf("%d %s\nwant the first reply, then OUTPUT_VALIDATION_FAILED, no re-ask", r.status, r.body)
		}
	})
}
