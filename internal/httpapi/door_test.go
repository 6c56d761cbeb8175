package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// The doors decide nothing: what the engine decides for a gRPC call
// (fallback, key limits, model access, validation) it decides for an HTTP
// call, and the door only says it in the format.

const doorsConfig = `
providers:
  - {name: down, kind: mock, options: {fault: {status: 503}}}
  - {name: mock, kind: mock}
routes:
  - name: smart
    targets: [{model: down/echo}, {model: mock/echo}]
limits:
  max_recv_msg_bytes: 65536
  max_request_bytes: 65536
auth:
  keys:
    - {name: full, sha256: %s, scopes: [generate, models.list], models: ["*"]}
    - {name: echo-only, sha256: %s, scopes: [generate], models: ["mock/echo"]}
    - {name: slow, sha256: %s, scopes: [generate], models: ["*"], requests_per_second: 0.02, burst: 1}
    - {name: echo-lister, sha256: %s, scopes: [models.list], models: ["mock/echo"]}
`

// request is one raw HTTP call to the doors.
type request struct {
	method, path, key, body string
	headers                 map[string]string
}

type response struct {
	status int
	header http.Header
	body   string
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.body)
	}
	return v
}

func call(t *testing.T, base string, r request) response {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctxOf(t), r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

// path returns the value at a dotted path of a decoded JSON object.
func path(v map[string]any, p string) any {
	var cur any = v
	for _, k := range strings.Split(p, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func TestDoorsDecideNothing(t *testing.T) {
	cfg, err := config.Parse(fmt.Appendf(nil, doorsConfig, auth.HashKey("sk-full"), auth.HashKey("sk-echo"), auth.HashKey("sk-slow"), auth.HashKey("sk-lister")))
	if err != nil {
		t.Fatal(err)
	}
	in := servertest.Start(t, cfg, server.WithRetryTimer(retrytest.Instant{}))
	base := in.HTTP(t)
	chat := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"hello there"}]}`
	}

	t.Run("a route falls back to its next target", func(t *testing.T) {
		r := call(t, base, request{path: "/v1/chat/completions", key: "sk-full", body: chat("smart")})
		if r.status != 200 || r.header.Get("Llmrelay-Provider") != "mock" || r.header.Get("Llmrelay-Attempts") != "4" || // three on down, then mock
			path(r.json(t), "choices") == nil {
			t.Errorf("%d %v %s", r.status, r.header, r.body)
		}
	})

	t.Run("x-api-key on the OpenAI endpoint, Bearer on Anthropic's", func(t *testing.T) {
		r := call(t, base, request{path: "/v1/chat/completions", body: chat("mock/echo"), headers: map[string]string{"X-Api-Key": "sk-full"}})
		if r.status != 200 {
			t.Errorf("x-api-key: %d %s", r.status, r.body)
		}
		r = call(t, base, request{path: "/v1/messages", key: "sk-full", body: `{"model":"mock/echo","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`})
		if r.status != 200 {
			t.Errorf("bearer: %d %s", r.status, r.body)
		}
	})

	t.Run("a model the key may not use", func(t *testing.T) {
		r := call(t, base, request{path: "/v1/chat/completions", key: "sk-echo", body: chat("smart")})
		if r.status != 403 || path(r.json(t), "error.type") != "permission_error" || path(r.json(t), "error.llmrelay.reason") != "MODEL_NOT_ALLOWED" {
			t.Errorf("%d %s", r.status, r.body)
		}
	})

	t.Run("the key's rate limit says when to call again", func(t *testing.T) {
		first := call(t, base, request{path: "/v1/chat/completions", key: "sk-slow", body: chat("mock/echo")})
		second := call(t, base, request{path: "/v1/messages", key: "sk-slow", body: `{"model":"mock/echo","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`})
		if first.status != 200 || second.status != 429 || path(second.json(t), "error.type") != "rate_limit_error" {
			t.Fatalf("%d, then %d %s", first.status, second.status, second.body)
		}
		if second.header.Get("X-Should-Retry") != "true" || second.header.Get("Retry-After") == "" || second.header.Get("Retry-After-Ms") == "" {
			t.Errorf("headers %v", second.header)
		}
	})

	t.Run("the engine's validation names the wire member", func(t *testing.T) {
		r := call(t, base, request{path: "/v1/chat/completions", key: "sk-full",
			body: `{"model":"mock/echo","temperature":5,"messages":[{"role":"user","content":"x"}]}`})
		if r.status != 400 || path(r.json(t), "error.param") != "temperature" || path(r.json(t), "error.llmrelay.reason") != "INVALID_REQUEST" {
			t.Errorf("%d %s", r.status, r.body)
		}
		r = call(t, base, request{path: "/v1/messages", key: "sk-full",
			body: `{"model":"mock/echo","max_tokens":9,"system":"s","messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}},{"type":"tool_use","id":"u","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"},{"type":"tool_result","tool_use_id":"u","content":"r"}]}],
				"llmrelay":{"provider_options":{"words":"many"}}}`})
		if r.status != 400 || !strings.Contains(path(r.json(t), "error.message").(string), "llmrelay.provider_options.words") {
			t.Errorf("%d %s", r.status, r.body)
		}
	})

	// A tool result of no call went to the route's targets: the down one
	// three times, then the mock answered it (where OpenAI and Anthropic
	// answer 400, after the attempts).
	t.Run("a tool result of no call is the format's 400, before any attempt", func(t *testing.T) {
		for _, tc := range []struct{ path, body, param string }{
			{"/v1/chat/completions", `{"model":"smart","messages":[{"role":"user","content":"q"},
				{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"a","content":"r"},{"role":"tool","tool_call_id":"zzz","content":"r"}]}`, "messages[3].tool_call_id"},
			{"/v1/responses", `{"model":"smart","input":[{"role":"user","content":"q"},
				{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},
				{"type":"function_call_output","call_id":"zzz","output":"r"}]}`, "input[2]"},
			{"/v1/messages", `{"model":"smart","max_tokens":9,"messages":[{"role":"user","content":"q"},
				{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"zzz","content":"r"}]}]}`, "messages[2].content[0]"},
		} {
			r := call(t, base, request{path: tc.path, key: "sk-full", body: tc.body, headers: map[string]string{"Anthropic-Version": "2023-06-01"}})
			v := r.json(t)
			msg, _ := path(v, "error.message").(string)
			reason, param := path(v, "error.llmrelay.reason"), path(v, "error.param")
			if tc.path == "/v1/messages" {
				reason, param = path(v, "llmrelay.reason"), tc.param // Anthropic's errors name the member in the message only
			}
			if r.status != 400 || path(v, "error.type") != "invalid_request_error" || reason != "INVALID_REQUEST" || param != tc.param ||
				!strings.HasPrefix(msg, tc.param+`: "zzz" is the id of no tool call`) || r.header.Get("Llmrelay-Attempts") != "0" {
				t.Errorf("%s: %d %v %s", tc.path, r.status, r.header, r.body)
			}
		}
	})

	t.Run("a body over the server's limit", func(t *testing.T) {
		r := call(t, base, request{path: "/v1/chat/completions", key: "sk-full", body: `{"model":"mock/echo","messages":[{"role":"user","content":"` + strings.Repeat("x", 70000) + `"}]}`})
		if r.status != 413 || path(r.json(t), "error.llmrelay.reason") != "REQUEST_TOO_LARGE" {
			t.Errorf("%d %s", r.status, r.body)
		}
	})

	// A gzip body was read as it was: "not valid JSON (at byte 1)".
	t.Run("a compressed body", func(t *testing.T) {
		for _, p := range []string{"/v1/chat/completions", "/v1/messages"} {
			r := call(t, base, request{path: p, key: "sk-full", body: chat("mock/echo"),
				headers: map[string]string{"Content-Encoding": "gzip", "Anthropic-Version": "2023-06-01"}})
			if msg, _ := path(r.json(t), "error.message").(string); r.status != 415 || path(r.json(t), "error.type") != "invalid_request_error" ||
				!strings.Contains(msg, `Content-Encoding "gzip" is not supported`) {
				t.Errorf("%s: %d %s", p, r.status, r.body)
			}
		}
	})

	// Bytes that are not UTF-8 became U+FFFD: the model was asked
	// something else than the client wrote.
	t.Run("a body that is not UTF-8", func(t *testing.T) {
		for _, p := range []string{"/v1/chat/completions", "/v1/messages"} {
			body := `{"model":"mock/echo","max_tokens":9,"messages":[{"role":"user","content":"caf` + "\xe9" + `"}]}` // Latin-1
			r := call(t, base, request{path: p, key: "sk-full", body: body, headers: map[string]string{"Anthropic-Version": "2023-06-01"}})
			reason := "error.llmrelay.reason"
			if p == "/v1/messages" {
				reason = "llmrelay.reason"
			}
			if msg, _ := path(r.json(t), "error.message").(string); r.status != 400 || path(r.json(t), reason) != "INVALID_REQUEST" ||
				!strings.Contains(msg, fmt.Sprintf("not valid UTF-8 (at byte %d)", strings.Index(body, "\xe9"))) {
				t.Errorf("%s: %d %s", p, r.status, r.body)
			}
		}
		// A lone surrogate, escaped, is valid JSON and UTF-8: it stays
		// what JSON decoders make of it.
		r := call(t, base, request{path: "/v1/chat/completions", key: "sk-full", body: `{"model":"mock/echo","messages":[{"role":"user","content":"a\udc00"}]}`})
		if r.status != 200 {
			t.Errorf("an escaped lone surrogate: %d %s", r.status, r.body)
		}
	})

	t.Run("another path", func(t *testing.T) {
		r := call(t, base, request{method: http.MethodGet, path: "/v1/completions", headers: map[string]string{"Anthropic-Version": "2023-06-01"}})
		if r.status != 404 || path(r.json(t), "error.type") != "not_found_error" || r.header.Get("Request-Id") == "" {
			t.Errorf("%d %v %s", r.status, r.header, r.body)
		}
	})

	t.Run("count_tokens at a model that cannot count, in Anthropic's shape", func(t *testing.T) {
		body := `{"model":"mock/echo","messages":[{"role":"user","content":"hi"}]}`
		for _, headers := range []map[string]string{{"Anthropic-Version": "2023-06-01"}, nil} {
			r := call(t, base, request{path: "/v1/messages/count_tokens", key: "sk-full", body: body, headers: headers})
			v := r.json(t)
			msg, _ := path(v, "error.message").(string)
			if r.status != 404 || path(v, "type") != "error" || path(v, "error.type") != "not_found_error" ||
				path(v, "llmrelay.reason") != "TOKEN_COUNTING_NOT_SUPPORTED" || !strings.Contains(msg, "model mock/echo cannot count tokens") ||
				!strings.Contains(msg, "(kind mock)") ||
				r.header.Get("Request-Id") == "" || r.header.Get("X-Should-Retry") != "false" {
				t.Errorf("headers %v: %d %v %s", headers, r.status, r.header, r.body)
			}
		}
	})

	t.Run("a door's path with another method", func(t *testing.T) {
		r := call(t, base, request{method: http.MethodGet, path: "/v1/chat/completions"})
		if r.status != 405 || r.header.Get("Allow") != "POST" || path(r.json(t), "error.type") != "invalid_request_error" ||
			path(r.json(t), "error.llmrelay.reason") != "METHOD_NOT_ALLOWED" {
			t.Errorf("%d %v %s", r.status, r.header, r.body)
		}
		r = call(t, base, request{method: http.MethodDelete, path: "/v1/models", headers: map[string]string{"Anthropic-Version": "2023-06-01"}})
		if r.status != 405 || r.header.Get("Allow") != "GET, HEAD" || path(r.json(t), "error.type") != "invalid_request_error" ||
			path(r.json(t), "type") != "error" || r.header.Get("Request-Id") == "" {
			t.Errorf("%d %v %s", r.status, r.header, r.body)
		}
	})

	t.Run("the models a key may use", func(t *testing.T) {
		r := call(t, base, request{method: http.MethodGet, path: "/v1/models", key: "sk-full"})
		if r.status != 200 || !strings.Contains(r.body, `"id":"smart"`) || !strings.Contains(r.body, `"object":"list"`) {
			t.Errorf("%d %s", r.status, r.body)
		}
		r = call(t, base, request{method: http.MethodGet, path: "/v1/models", key: "sk-echo"})
		if r.status != 403 {
			t.Errorf("without models.list: %d %s", r.status, r.body)
		}
	})

	t.Run("one model a key may use, in each format", func(t *testing.T) {
		anthropicVersion := map[string]string{"Anthropic-Version": "2023-06-01"}
		for _, tc := range []struct {
			path    string
			headers map[string]string
			want    map[string]any
		}{
			// The SDKs escape the id's "/"; a URL written by hand may not.
			{"/v1/models/mock%2Fecho", nil, map[string]any{"id": "mock/echo", "object": "model", "owned_by": "mock", "created": 0.0}},
			{"/v1/models/mock/echo", nil, map[string]any{"id": "mock/echo", "object": "model", "owned_by": "mock"}},
			{"/v1/models/smart", nil, map[string]any{"id": "smart", "object": "model", "owned_by": "llmrelay"}},
			{"/v1/models/mock%2Fecho", anthropicVersion, map[string]any{"id": "mock/echo", "type": "model", "display_name": "mock/echo", "created_at": "1970-01-01T00:00:00Z"}},
			{"/v1/models/smart", anthropicVersion, map[string]any{"id": "smart", "type": "model"}},
		} {
			r := call(t, base, request{method: http.MethodGet, path: tc.path, key: "sk-full", headers: tc.headers})
			if r.status != 200 {
				t.Errorf("%s %v: %d %s", tc.path, tc.headers, r.status, r.body)
				continue
			}
			got := r.json(t)
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s %v: %s %v, want %v (%s)", tc.path, tc.headers, k, got[k], want, r.body)
				}
			}
		}
	})

	t.Run("a model a key may not use is one that does not exist", func(t *testing.T) {
		for _, headers := range []map[string]string{nil, {"Anthropic-Version": "2023-06-01"}} {
			// down/echo exists, the key may not use it; nope/echo does
			// not exist. The answers differ only by the id they quote
			// (and the request id).
			var bodies []string
			for _, id := range []string{"down/echo", "nope/echo"} {
				r := call(t, base, request{method: http.MethodGet, path: "/v1/models/" + url.PathEscape(id), key: "sk-lister", headers: headers})
				v := r.json(t)
				if r.status != 404 || path(v, "error.type") != "not_found_error" || r.header.Get("X-Should-Retry") != "false" {
					t.Errorf("%s %v: %d %v %s", id, headers, r.status, r.header, r.body)
				}
				if headers == nil && path(v, "error.code") != "model_not_found" {
					t.Errorf("%s: code %v, want model_not_found", id, path(v, "error.code"))
				}
				delete(v, "request_id")
				b, _ := json.Marshal(v)
				bodies = append(bodies, strings.ReplaceAll(string(b), id, "<id>"))
			}
			if bodies[0] != bodies[1] {
				t.Errorf("%v: a model kept from the key is told apart from one that does not exist:\n%s\n%s", headers, bodies[0], bodies[1])
			}
			// The model it may use is found.
			if r := call(t, base, request{method: http.MethodGet, path: "/v1/models/mock/echo", key: "sk-lister", headers: headers}); r.status != 200 {
				t.Errorf("mock/echo %v: %d %s", headers, r.status, r.body)
			}
		}
		// Without the models.list scope, as the list.
		if r := call(t, base, request{method: http.MethodGet, path: "/v1/models/mock/echo", key: "sk-echo"}); r.status != 403 {
			t.Errorf("without models.list: %d %s", r.status, r.body)
		}
		// Without a key, as any call.
		if r := call(t, base, request{method: http.MethodGet, path: "/v1/models/mock/echo"}); r.status != 401 {
			t.Errorf("without a key: %d %s", r.status, r.body)
		}
		// Another method on a model's path.
		r := call(t, base, request{method: http.MethodDelete, path: "/v1/models/mock/echo", key: "sk-full"})
		if r.status != 405 || r.header.Get("Allow") != "GET, HEAD" {
			t.Errorf("DELETE: %d %v %s", r.status, r.header, r.body)
		}
	})

	// Every call above is counted with its interface.
	reg := in.Server.Metrics().Registry()
	if n := testutil.CollectAndCount(reg, metrics.NameHTTPResponses); n < 5 {
		t.Errorf("%d %s series", n, metrics.NameHTTPResponses)
	}
	found := map[string]bool{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metrics.NameCalls {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "interface" {
					found[l.GetValue()] = true
				}
			}
		}
	}
	if !found["openai"] || !found["anthropic"] {
		t.Errorf("%s interfaces %v, want openai and anthropic", metrics.NameCalls, found)
	}
}

// TestAWrongMemberIsNotEchoedWhole: a request member the door does not
// know, or one deep inside that it cannot read, is named in the error and
// in the call's log line, but not whole: a 300 KB member name made a
// 600 KB error (its message and param) and a 300 KB log line, per call.
// The name's start stays, so the caller still sees which member it was,
// with its control characters (the name is JSON) made spaces.
func TestAWrongMemberIsNotEchoedWhole(t *testing.T) {
	var logs servertest.LockedBuffer
	in := servertest.Start(t, nil, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	base := in.HTTP(t)
	long := "unknown\\nmember" + strings.Repeat("x", 300_000)
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"mock/echo","messages":[{"role":"user","content":"hi"}],"` + long + `":1}`},
		{"/v1/messages", `{"model":"mock/echo","max_tokens":9,"messages":[{"role":"user","content":"hi"}],"` + long + `":1}`},
		{"/v1/chat/completions", `{"model":"mock/echo","messages":[{"role":"user","content":"hi"}],"llmrelay":{"` + long + `":1}}`},
		{"/v1/chat/completions", `{"model":"mock/echo","messages":[{"role":"user","content":"hi"}],"metadata":{"` + long + `":"v"}}`},
	} {
		r := call(t, base, request{path: c.path, body: c.body})
		if r.status != 400 || len(r.body) > 4<<10 {
			t.Errorf("%s: %d, %d bytes, want 400 within 4 KiB: %.300s", c.path, r.status, len(r.body), r.body)
			continue
		}
		msg, _ := path(r.json(t), "error.message").(string)
		if !strings.Contains(msg, "member") || strings.Contains(msg, "\n") {
			t.Errorf("%s: message %.300q, want it to name the member's start, without its newline", c.path, msg)
		}
	}
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if len(line) > 8<<10 {
			t.Errorf("a log line of %d bytes: %.300s", len(line), line)
		}
	}
}

// TestAuthenticationComesBeforeTheBody: a caller without a valid key is
// refused before its body is read: it learns nothing of what the body
// should be, and a flood of such requests writes the failed-authentication
// line of its address, not one "finished call" line per request (a body
// that did not decode was answered 400 and logged, whatever the key).
func TestAuthenticationComesBeforeTheBody(t *testing.T) {
	cfg, err := config.Parse(fmt.Appendf(nil, doorsConfig, auth.HashKey("sk-full"), auth.HashKey("sk-echo"), auth.HashKey("sk-slow"), auth.HashKey("sk-lister")))
	if err != nil {
		t.Fatal(err)
	}
	var logs servertest.LockedBuffer
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	base := in.HTTP(t)
	for i := range 10 {
		for _, c := range []struct{ path, key, body string }{
			{"/v1/chat/completions", "", `not json`},
			{"/v1/messages", "sk-wrong", `{"model":"mock/echo","unknown":1}`},
			{"/v1/chat/completions", "sk-wrong", `{"model":"Not A Model","messages":[]}`},
		} {
			r := call(t, base, request{path: c.path, key: c.key, body: c.body})
			if r.status != 401 {
				t.Fatalf("request %d to %s without a valid key: %d %s, want 401", i, c.path, r.status, r.body)
			}
		}
	}
	if n := strings.Count(logs.String(), `msg="finished call"`); n > 0 {
		t.Errorf("%d finished call lines for refused callers:\n%s", n, logs.String())
	}
	// With the key, the same body is the client's to fix.
	if r := call(t, base, request{path: "/v1/chat/completions", key: "sk-full", body: `not json`}); r.status != 400 {
		t.Errorf("with the key: %d %s, want 400", r.status, r.body)
	}
}

// TestRequestsNoEndpointServesAreCounted: a request to a path the doors do
// not serve (404) or to a door's path with another method (405) counts in
// llmrelay_http_responses_total and the duration histogram, in the format
// the client speaks, under the one endpoint "unknown" whatever its path
// (a client that makes paths up adds no series); it writes no log line, so
// a flood of them cannot flood the log.
func TestRequestsNoEndpointServesAreCounted(t *testing.T) {
	var logs servertest.LockedBuffer
	in := servertest.Start(t, nil, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	base := in.HTTP(t)
	anthropicVersion := map[string]string{"Anthropic-Version": "2023-06-01"}
	for i := range 20 {
		for _, c := range []struct {
			req    request
			status int
		}{
			{request{method: http.MethodGet, path: fmt.Sprintf("/v1/completions/%d", i)}, 404},
			{request{path: fmt.Sprintf("/openai/deployments/%d/chat/completions", i), headers: anthropicVersion}, 404},
			{request{method: http.MethodGet, path: "/v1/chat/completions"}, 405},
		} {
			if r := call(t, base, c.req); r.status != c.status {
				t.Fatalf("%s %s: %d, want %d", c.req.method, c.req.path, r.status, c.status)
			}
		}
	}
	text := in.Server.Metrics().Text()
	for _, want := range []string{
		metrics.NameHTTPResponses + `{endpoint="unknown",interface="openai",status="404"} 20`,
		metrics.NameHTTPResponses + `{endpoint="unknown",interface="anthropic",status="404"} 20`,
		metrics.NameHTTPResponses + `{endpoint="unknown",interface="openai",status="405"} 20`,
		metrics.NameHTTPDuration + `_count{endpoint="unknown",interface="openai"} 40`,
		metrics.NameHTTPDuration + `_count{endpoint="unknown",interface="anthropic"} 20`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	reg := in.Server.Metrics().Registry()
	if n := testutil.CollectAndCount(reg, metrics.NameHTTPResponses); n != 3 {
		t.Errorf("%d %s series, want 3: the paths are not labels", n, metrics.NameHTTPResponses)
	}
	if strings.Contains(logs.String(), "finished call") {
		t.Errorf("requests no endpoint serves were logged:\n%.2000s", logs.String())
	}
}
