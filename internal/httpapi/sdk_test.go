package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	assestream "github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// The official Go SDKs (openai-go, anthropic-sdk-go), unchanged but for
// base URL and key, against the HTTP doors of the production wiring,
// served on a loopback port. The mock provider's scripted faults reach it
// through the llmrelay request member, which the SDKs send as an extra
// body field (option.WithJSONSet).

const (
	sdkKey  = "sk-llmrelay-sdk-test"
	sdkText = "the quick brown fox jumps over the lazy dog"
	// sdkFirst is what the mock streams of sdkText before {"error_after": 2}.
	sdkFirst = "the quick "
)

// doors starts llmrelay with the mock provider, one API key, instant
// waits between attempts, and its HTTP doors on a loopback port (opts
// added); it returns their base URL.
func doors(t *testing.T, edit func(*config.Config), opts ...server.Option) (string, *servertest.Instance) {
	t.Helper()
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	cfg.Auth.Keys = []config.APIKey{{Name: "sdk", SHA256: auth.HashKey(sdkKey), Scopes: []string{"generate", "models.list"}, Models: []string{"*"}}}
	if edit != nil {
		edit(cfg)
	}
	in := servertest.Start(t, cfg, append([]server.Option{server.WithRetryTimer(retrytest.Instant{})}, opts...)...)
	return in.HTTP(t), in
}

// finishLines is a log handler that passes each "finished call" line to
// the test, its attributes as text (a group's members as group.member).
type finishLines chan map[string]string

func (finishLines) Enabled(context.Context, slog.Level) bool { return true }
func (l finishLines) WithAttrs([]slog.Attr) slog.Handler     { return l }
func (l finishLines) WithGroup(string) slog.Handler          { return l }

func (l finishLines) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "finished call" {
		return nil
	}
	line := map[string]string{}
	var add func(prefix string, a slog.Attr)
	add = func(prefix string, a slog.Attr) {
		v := a.Value.Resolve()
		if v.Kind() != slog.KindGroup {
			line[prefix+a.Key] = v.String()
			return
		}
		for _, m := range v.Group() {
			add(prefix+a.Key+".", m)
		}
	}
	r.Attrs(func(a slog.Attr) bool { add("", a); return true })
	select {
	case l <- line:
	default: // the test reads the lines it asked for
	}
	return nil
}

// next returns the next "finished call" line.
func (l finishLines) next(t *testing.T) map[string]string {
	t.Helper()
	select {
	case line := <-l:
		return line
	case <-ctxOf(t).Done():
		t.Fatal("no finished call line")
		return nil
	}
}

// faults scripts the mock provider's attempts.
func faults(f ...map[string]any) map[string]any {
	return map[string]any{"provider_options": map[string]any{"faults": f}}
}

// counter counts the HTTP requests an SDK makes.
type counter struct{ n atomic.Int32 }

func (c *counter) openai(req *http.Request, next ooption.MiddlewareNext) (*http.Response, error) {
	c.n.Add(1)
	return next(req)
}

func (c *counter) anthropic(req *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
	c.n.Add(1)
	return next(req)
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestOpenAISDK(t *testing.T) {
	base, in := doors(t, nil)
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey))
	user := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(sdkText)}
	params := openai.ChatCompletionNewParams{Model: "mock/echo", Messages: user}

	t.Run("streamed text with usage in the final chunk", func(t *testing.T) {
		p := params
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := client.Chat.Completions.NewStreaming(ctxOf(t), p)
		var acc openai.ChatCompletionAccumulator
		chunks := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			chunks++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != sdkText || chunks < 9 {
			t.Errorf("%d chunks, text %q", chunks, got)
		}
		if u := acc.Usage; u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Errorf("usage %+v", u)
		}
	})

	t.Run("text, not streamed, with llmrelay's headers", func(t *testing.T) {
		var resp *http.Response
		c, err := client.Chat.Completions.New(ctxOf(t), params, ooption.WithResponseInto(&resp))
		if err != nil {
			t.Fatal(err)
		}
		if c.Choices[0].Message.Content != sdkText || c.Choices[0].FinishReason != "stop" {
			t.Errorf("reply %+v", c.Choices[0])
		}
		for h, want := range map[string]string{"Llmrelay-Attempts": "1", "Llmrelay-Provider": "mock", "Llmrelay-Model": "echo"} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
		if id := resp.Header.Get("X-Request-Id"); len(id) != 36 || !strings.HasSuffix(c.ID, id) {
			t.Errorf("x-request-id %q, id %q", id, c.ID)
		}
	})

	t.Run("a tool call round trip", func(t *testing.T) {
		tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: "weather", Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		})}
		p := params
		p.Tools = tools
		first, err := client.Chat.Completions.New(ctxOf(t), p, ooption.WithJSONSet("llmrelay", faults(map[string]any{
			"output": "", "tool_calls": []map[string]any{{"id": "call_1", "name": "weather", "arguments": `{"city":"Paris"}`}},
		})))
		if err != nil {
			t.Fatal(err)
		}
		msg := first.Choices[0].Message
		if first.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
			t.Fatalf("first reply %s", first.RawJSON())
		}
		p.Messages = append(append(user, msg.ToParam()), openai.ToolMessage("18C", msg.ToolCalls[0].ID), openai.UserMessage("thanks"))
		second, err := client.Chat.Completions.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if got := second.Choices[0].Message.Content; got != "thanks" {
			t.Errorf("second reply %q", got)
		}
	})

	t.Run("an assistant message whose content parts hold a refusal", func(t *testing.T) {
		refused := openai.ChatCompletionAssistantMessageParam{Content: openai.ChatCompletionAssistantMessageParamContentUnion{
			OfArrayOfContentParts: []openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{
				{OfRefusal: &openai.ChatCompletionContentPartRefusalParam{Refusal: "I can't help with that."}},
			},
		}}
		p := params
		p.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("help me"), {OfAssistant: &refused}, openai.UserMessage("thanks anyway")}
		r, err := client.Chat.Completions.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Choices[0].Message.Content; got != "thanks anyway" {
			t.Errorf("reply %q", got)
		}
	})

	t.Run("structured output with response_format json_schema", func(t *testing.T) {
		p := params
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
			JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "city", Strict: openai.Bool(true), Schema: citySchema},
		}}
		c, err := client.Chat.Completions.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		checkCity(t, c.Choices[0].Message.Content)
	})

	for _, tc := range []struct {
		name               string
		client             openai.Client
		params             openai.ChatCompletionNewParams
		opts               []ooption.RequestOption
		status             int
		typ, code, message string
	}{
		{"a bad key", openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey("sk-wrong")), params, nil,
			401, "authentication_error", "invalid_api_key", "unknown API key"},
		{"an unknown model", client, openai.ChatCompletionNewParams{Model: "mock/nope", Messages: user}, nil,
			404, "not_found_error", "model_not_found", `unknown model "nope"`},
		{"an unknown provider, which names the endpoint listing the models", client, openai.ChatCompletionNewParams{Model: "openai/gpt-4o-mini", Messages: user}, nil,
			404, "not_found_error", "model_not_found", `unknown provider "openai"; ListModels (GET /v1/models over HTTP) lists the models you may use`},
		{"a quota error", client, params, []ooption.RequestOption{ooption.WithJSONSet("llmrelay", faults(map[string]any{"status": 429, "error_type": "insufficient_quota"}))},
			429, "insufficient_quota", "insufficient_quota", "quota or spend limit exhausted"},
		{"a request longer than the context window", client, params, []ooption.RequestOption{ooption.WithJSONSet("llmrelay", faults(map[string]any{"status": 400, "error_type": "context_length_exceeded"}))},
			400, "invalid_request_error", "context_length_exceeded", "longer than the model's context window"},
		{"an invalid request", client, openai.ChatCompletionNewParams{Model: "mock/echo", Messages: user, N: openai.Int(2)}, nil,
			400, "invalid_request_error", "invalid_request", "n: llmrelay returns one choice"},
	} {
		t.Run(tc.name+" is a typed error", func(t *testing.T) {
			var n counter
			_, err := tc.client.Chat.Completions.New(ctxOf(t), tc.params, append(tc.opts, ooption.WithMiddleware(n.openai))...)
			var e *openai.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *openai.Error", err)
			}
			if e.StatusCode != tc.status || e.Type != tc.typ || e.Code != tc.code || !strings.Contains(e.Message, tc.message) {
				t.Errorf("%d %s %s %q, want %d %s %s %q", e.StatusCode, e.Type, e.Code, e.Message, tc.status, tc.typ, tc.code, tc.message)
			}
			if id := e.Response.Header.Get("X-Request-Id"); len(id) != 36 {
				t.Errorf("x-request-id %q", id)
			}
			if got := n.n.Load(); got != 1 {
				t.Errorf("%d requests, want 1", got)
			}
		})
	}

	t.Run("the SDK's retry loop makes one request when llmrelay gave up", func(t *testing.T) {
		var n counter
		_, err := client.Chat.Completions.New(ctxOf(t), params, ooption.WithMiddleware(n.openai),
			ooption.WithJSONSet("llmrelay", faults(map[string]any{"status": 503}, map[string]any{"status": 503}, map[string]any{"status": 503})))
		var e *openai.Error
		if !errors.As(err, &e) || e.StatusCode != 503 || e.Code != "retries_exhausted" {
			t.Fatalf("error %v", err)
		}
		if got := n.n.Load(); got != 1 {
			t.Errorf("%d requests, want 1 (x-should-retry: %q)", got, e.Response.Header.Get("X-Should-Retry"))
		}
		if got := e.Response.Header.Get("Llmrelay-Attempts"); got != "3" {
			t.Errorf("llmrelay-attempts %q, want 3", got)
		}
	})

	t.Run("a 503 then success streams cleanly", func(t *testing.T) {
		var n counter
		var resp *http.Response
		stream := client.Chat.Completions.NewStreaming(ctxOf(t), params, ooption.WithMiddleware(n.openai), ooption.WithResponseInto(&resp),
			ooption.WithJSONSet("llmrelay", faults(map[string]any{"status": 503}, map[string]any{})))
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
			if _, ok := stream.Current().JSON.ExtraFields["llmrelay"]; ok {
				t.Errorf("a chunk carries the llmrelay member without the opt-in: %s", stream.Current().RawJSON())
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != sdkText || n.n.Load() != 1 {
			t.Errorf("text %q after %d requests", got, n.n.Load())
		}
		if got := resp.Header.Get("Llmrelay-Attempts"); got != "2" {
			t.Errorf("llmrelay-attempts %q, want 2", got)
		}
	})

	t.Run("a mid-stream failure raises an error", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctxOf(t), params,
			ooption.WithJSONSet("llmrelay", faults(map[string]any{"error_after": 2}, map[string]any{})))
		text := ""
		for stream.Next() {
			if c := stream.Current(); len(c.Choices) > 0 {
				text += c.Choices[0].Delta.Content
			}
		}
		var se *ssestream.StreamError
		if err := stream.Err(); !errors.As(err, &se) || !strings.Contains(string(se.Event.Data), `"reason":"MIDSTREAM_FAILED"`) {
			t.Fatalf("error %v, want the stream's error event", err)
		}
		// The engine ended the call at the failed attempt: no second
		// provider call whose reply the client could not have been shown.
		if !strings.Contains(string(se.Event.Data), `"attempts":"1"`) {
			t.Errorf("error event %s, want the call ended after its first attempt", se.Event.Data)
		}
		if text != sdkFirst {
			t.Errorf("shown %q, want %q", text, sdkFirst)
		}
	})

	t.Run("with the opt-in, the restart shows and the text is the last attempt's", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctxOf(t), params, ooption.WithHeader("llmrelay-midstream", "restart"),
			ooption.WithJSONSet("llmrelay", faults(map[string]any{"error_after": 2}, map[string]any{})))
		text, restarts := "", 0
		var last extension
		for stream.Next() {
			c := stream.Current()
			if f, ok := c.JSON.ExtraFields["llmrelay"]; ok {
				last = extension{}
				if err := json.Unmarshal([]byte(f.Raw()), &last); err != nil {
					t.Fatal(err)
				}
				if last.Restart != nil && last.Restart.Discard {
					restarts++
					text = ""
				}
			}
			if len(c.Choices) > 0 {
				text += c.Choices[0].Delta.Content
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if restarts != 1 || text != sdkText || last.Attempts != 2 {
			t.Errorf("%d restarts, text %q, last extension %+v", restarts, text, last)
		}
	})

	t.Run("the models", func(t *testing.T) {
		page, err := client.Models.List(ctxOf(t))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		if !strings.Contains(strings.Join(ids, " "), "mock/echo") {
			t.Errorf("models %v", ids)
		}
	})

	t.Run("one model, by its id with a slash", func(t *testing.T) {
		m, err := client.Models.Get(ctxOf(t), "mock/echo")
		if err != nil {
			t.Fatal(err)
		}
		if m.ID != "mock/echo" || m.Object != "model" || m.OwnedBy != "mock" {
			t.Errorf("model %s", m.RawJSON())
		}
	})

	t.Run("a model that does not exist is a typed 404 from one request", func(t *testing.T) {
		var n counter
		_, err := client.Models.Get(ctxOf(t), "mock/nope", ooption.WithMiddleware(n.openai))
		var e *openai.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v, want an *openai.Error", err)
		}
		if e.StatusCode != 404 || e.Code != "model_not_found" || !strings.Contains(e.Message, `"mock/nope"`) {
			t.Errorf("%d %s %s %q", e.StatusCode, e.Type, e.Code, e.Message)
		}
		if got := n.n.Load(); got != 1 {
			t.Errorf("%d requests, want 1", got)
		}
	})

	// The calls counted with their interface.
	calls := testutil.CollectAndCount(in.Server.Metrics().Registry(), metrics.NameCalls)
	if calls == 0 {
		t.Errorf("no %s series", metrics.NameCalls)
	}
}

// extension is the llmrelay member of a stream event.
type extension struct {
	Attempt  int `json:"attempt"`
	Attempts int `json:"attempts"`
	Restart  *struct {
		Reason      string `json:"reason"`
		NextAttempt int    `json:"next_attempt"`
		Discard     bool   `json:"discard"`
	} `json:"restart"`
}

var citySchema = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"city": map[string]any{"type": "string"}, "population": map[string]any{"type": "integer"}},
	"required":             []string{"city", "population"},
	"additionalProperties": false,
}

func checkCity(t *testing.T, text string) {
	t.Helper()
	var v struct {
		City       *string `json:"city"`
		Population *int    `json:"population"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil || v.City == nil || v.Population == nil {
		t.Errorf("structured output %q: %v", text, err)
	}
}

// accumulated reads stream to its end and returns the message its events
// make, as the SDK's own accumulation does; a failed stream fails the test.
func accumulated(t *testing.T, stream *assestream.Stream[anthropic.MessageStreamEventUnion]) anthropic.Message {
	t.Helper()
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	return msg
}

func TestAnthropicSDK(t *testing.T) {
	base, _ := doors(t, nil)
	client := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey))
	user := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(sdkText))}
	params := anthropic.MessageNewParams{Model: "mock/echo", MaxTokens: 256, Messages: user}

	t.Run("streamed text with usage in message_delta", func(t *testing.T) {
		stream := client.Messages.NewStreaming(ctxOf(t), params)
		msg := accumulated(t, stream)
		if len(msg.Content) != 1 || msg.Content[0].Text != sdkText || msg.StopReason != "end_turn" || msg.Usage.OutputTokens == 0 {
			t.Errorf("message %s", msg.RawJSON())
		}
	})

	t.Run("text, not streamed, with the request id", func(t *testing.T) {
		var resp *http.Response
		msg, err := client.Messages.New(ctxOf(t), params, aoption.WithResponseInto(&resp))
		if err != nil {
			t.Fatal(err)
		}
		if msg.Content[0].Text != sdkText {
			t.Errorf("message %s", msg.RawJSON())
		}
		if id := resp.Header.Get("Request-Id"); len(id) != 36 || id != resp.Header.Get("X-Request-Id") {
			t.Errorf("request-id %q", id)
		}
	})

	t.Run("a tool use round trip", func(t *testing.T) {
		p := params
		p.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: "weather", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}},
		}}}
		first, err := client.Messages.New(ctxOf(t), p, aoption.WithJSONSet("llmrelay", faults(map[string]any{
			"output": "", "tool_calls": []map[string]any{{"id": "toolu_1", "name": "weather", "arguments": `{"city":"Paris"}`}},
		})))
		if err != nil {
			t.Fatal(err)
		}
		if first.StopReason != "tool_use" || len(first.Content) != 1 || first.Content[0].Type != "tool_use" || string(first.Content[0].Input) != `{"city":"Paris"}` {
			t.Fatalf("first reply %s", first.RawJSON())
		}
		p.Messages = append(user, first.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock(first.Content[0].ID, "18C", false), anthropic.NewTextBlock("thanks")))
		second, err := client.Messages.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if second.Content[0].Text != "thanks" {
			t.Errorf("second reply %s", second.RawJSON())
		}
	})

	t.Run("structured output with output_config.format", func(t *testing.T) {
		p := params
		p.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: citySchema}}
		msg, err := client.Messages.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		checkCity(t, msg.Content[0].Text)
	})

	wrong := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("sk-wrong"))
	for _, tc := range []struct {
		name    string
		client  anthropic.Client
		params  anthropic.MessageNewParams
		opts    []aoption.RequestOption
		status  int
		typ     anthropic.ErrorType
		message string
	}{
		{"a bad key", wrong, params, nil, 401, "authentication_error", "unknown API key"},
		{"an unknown model", client, anthropic.MessageNewParams{Model: "mock/nope", MaxTokens: 9, Messages: user}, nil, 404, "not_found_error", `unknown model "nope"`},
		{"a quota error", client, params, []aoption.RequestOption{aoption.WithJSONSet("llmrelay", faults(map[string]any{"status": 429, "error_type": "insufficient_quota"}))},
			402, "billing_error", "quota or spend limit exhausted"},
		{"a request longer than the context window", client, params, []aoption.RequestOption{aoption.WithJSONSet("llmrelay", faults(map[string]any{"status": 400, "error_type": "context_length_exceeded"}))},
			400, "invalid_request_error", "longer than the model's context window"},
		{"llmrelay gave up", client, params, []aoption.RequestOption{aoption.WithJSONSet("llmrelay", faults(map[string]any{"status": 503}, map[string]any{"status": 503}, map[string]any{"status": 503}))},
			529, "overloaded_error", "gave up after 3 attempts"},
	} {
		t.Run(tc.name+" is a typed error from one request", func(t *testing.T) {
			var n counter
			_, err := tc.client.Messages.New(ctxOf(t), tc.params, append(tc.opts, aoption.WithMiddleware(n.anthropic))...)
			var e *anthropic.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *anthropic.Error", err)
			}
			if e.StatusCode != tc.status || e.Type() != tc.typ || !strings.Contains(e.Message, tc.message) {
				t.Errorf("%d %s %q, want %d %s %q", e.StatusCode, e.Type(), e.Message, tc.status, tc.typ, tc.message)
			}
			if len(e.RequestID) != 36 {
				t.Errorf("request id %q", e.RequestID)
			}
			if got := n.n.Load(); got != 1 {
				t.Errorf("%d requests, want 1", got)
			}
		})
	}

	t.Run("a 503 then success streams cleanly", func(t *testing.T) {
		var n counter
		stream := client.Messages.NewStreaming(ctxOf(t), params, aoption.WithMiddleware(n.anthropic),
			aoption.WithJSONSet("llmrelay", faults(map[string]any{"status": 503}, map[string]any{})))
		msg := accumulated(t, stream)
		if len(msg.Content) != 1 || msg.Content[0].Text != sdkText || n.n.Load() != 1 {
			t.Errorf("message %s after %d requests", msg.RawJSON(), n.n.Load())
		}
	})

	t.Run("a mid-stream failure raises an error", func(t *testing.T) {
		stream := client.Messages.NewStreaming(ctxOf(t), params, aoption.WithJSONSet("llmrelay", faults(map[string]any{"error_after": 2}, map[string]any{})))
		var msg anthropic.Message
		for stream.Next() {
			_ = msg.Accumulate(stream.Current())
		}
		err := stream.Err()
		if err == nil || !strings.Contains(err.Error()+errorJSON(err), "overloaded_error") {
			t.Fatalf("error %v, want the stream's overloaded_error", err)
		}
		if len(msg.Content) != 1 || msg.Content[0].Text != sdkFirst {
			t.Errorf("shown %s", msg.RawJSON())
		}
	})

	t.Run("with the opt-in, the restart shows and the text is the last attempt's", func(t *testing.T) {
		stream := client.Messages.NewStreaming(ctxOf(t), params, aoption.WithHeader("llmrelay-midstream", "restart"),
			aoption.WithJSONSet("llmrelay", faults(map[string]any{"error_after": 2}, map[string]any{})))
		var msg anthropic.Message
		restartAt := -1
		for stream.Next() {
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				t.Fatal(err)
			}
			var x struct {
				Llmrelay *extension `json:"llmrelay"`
			}
			if err := json.Unmarshal([]byte(ev.RawJSON()), &x); err != nil {
				t.Fatal(err)
			}
			if x.Llmrelay != nil && x.Llmrelay.Restart != nil && x.Llmrelay.Restart.Discard {
				restartAt = len(msg.Content) // the blocks so far are discarded
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if restartAt < 0 {
			t.Fatalf("no restart in %s", msg.RawJSON())
		}
		text := ""
		for _, b := range msg.Content[restartAt:] {
			text += b.Text
		}
		if text != sdkText {
			t.Errorf("the last attempt's text %q, want %q", text, sdkText)
		}
	})

	t.Run("the models, in Anthropic's shape", func(t *testing.T) {
		page, err := client.Models.List(ctxOf(t), anthropic.ModelListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) == 0 || page.Data[0].Type != "model" {
			t.Errorf("models %s", page.RawJSON())
		}
	})

	t.Run("one model, by its id with a slash, in Anthropic's shape", func(t *testing.T) {
		m, err := client.Models.Get(ctxOf(t), "mock/echo", anthropic.ModelGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		if m.ID != "mock/echo" || m.Type != "model" || m.DisplayName != "mock/echo" || m.CreatedAt.IsZero() {
			t.Errorf("model %s", m.RawJSON())
		}
	})

	t.Run("a model that does not exist is a typed 404 from one request", func(t *testing.T) {
		var n counter
		_, err := client.Models.Get(ctxOf(t), "mock/nope", anthropic.ModelGetParams{}, aoption.WithMiddleware(n.anthropic))
		var e *anthropic.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v, want an *anthropic.Error", err)
		}
		if e.StatusCode != 404 || e.Type() != "not_found_error" || len(e.RequestID) != 36 {
			t.Errorf("%d %s %q %s", e.StatusCode, e.Type(), e.RequestID, e.RawJSON())
		}
		if got := n.n.Load(); got != 1 {
			t.Errorf("%d requests, want 1", got)
		}
	})

	t.Run("count_tokens at a model that cannot count is a typed 404 from one request", func(t *testing.T) {
		var n counter
		_, err := client.Messages.CountTokens(ctxOf(t), anthropic.MessageCountTokensParams{
			Model:    "mock/echo",
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
		}, aoption.WithMiddleware(n.anthropic))
		var e *anthropic.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v, want an *anthropic.Error", err)
		}
		if e.StatusCode != 404 || e.Type() != "not_found_error" || !strings.Contains(e.RawJSON(), "model mock/echo cannot count tokens") {
			t.Errorf("%d %s %s", e.StatusCode, e.Type(), e.RawJSON())
		}
		if got := n.n.Load(); got != 1 {
			t.Errorf("%d requests, want 1", got)
		}
	})
}

// errorJSON is the body of an SDK error, when it has one.
func errorJSON(err error) string {
	var e *anthropic.Error
	if errors.As(err, &e) {
		return e.RawJSON()
	}
	return ""
}

// TestSDKMetadataLabelsTheLogLine: the labels a request carries (OpenAI's
// metadata and user, in both its APIs, Anthropic's metadata.user_id) are in the call's
// "finished call" line, as a gRPC call's metadata is.
func TestSDKMetadataLabelsTheLogLine(t *testing.T) {
	lines := make(finishLines, 16)
	base, _ := doors(t, nil, server.WithLogger(slog.New(lines)))

	oc := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey))
	if _, err := oc.Chat.Completions.New(ctxOf(t), openai.ChatCompletionNewParams{
		Model: "mock/echo", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(sdkText)},
		User: openai.String("u-42"), Metadata: map[string]string{"team": "search"},
	}); err != nil {
		t.Fatal(err)
	}
	line := lines.next(t)
	if line["interface"] != "openai" || line["metadata.user"] != "u-42" || line["metadata.team"] != "search" {
		t.Errorf("finish line %v, want metadata.user=u-42 metadata.team=search", line)
	}

	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey))
	stream := ac.Messages.NewStreaming(ctxOf(t), anthropic.MessageNewParams{
		Model: "mock/echo", MaxTokens: 256, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(sdkText))},
		Metadata: anthropic.MetadataParam{UserID: anthropic.String("u-7")},
	})
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	line = lines.next(t)
	if line["interface"] != "anthropic" || line["metadata.user_id"] != "u-7" {
		t.Errorf("finish line %v, want metadata.user_id=u-7", line)
	}

	if _, err := oc.Responses.New(ctxOf(t), responses.ResponseNewParams{
		Model: "mock/echo", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(sdkText)},
		User: openai.String("u-9"), Metadata: map[string]string{"team": "agents"},
	}); err != nil {
		t.Fatal(err)
	}
	line = lines.next(t)
	if line["interface"] != "openai-responses" || line["metadata.user"] != "u-9" || line["metadata.team"] != "agents" || line["http.path"] != "/v1/responses" {
		t.Errorf("finish line %v, want interface=openai-responses metadata.user=u-9 metadata.team=agents", line)
	}
}

// panicKind is a provider kind whose every attempt panics: a stand-in for a
// bug anywhere below the doors.
const panicKind = "test-doors-panic"

type panicProvider struct{}

func (panicProvider) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	panic("provider bug")
}

func init() {
	provider.Register(panicKind, func(provider.Config) (provider.Provider, error) { return panicProvider{}, nil })
}

// TestSDKBugIsAnInternalError: a bug that panics below the doors is an
// INTERNAL error, 500, as the gRPC door's recovery makes it: the SDK
// raises its server error once, rather than taking a cut connection for a
// network failure and sending the call again; the call is logged and its
// admission released (a key allowed one stream at a time can call again).
func TestSDKBugIsAnInternalError(t *testing.T) {
	lines := make(finishLines, 16)
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "boom", Kind: panicKind, Models: []string{"any"}})
		cfg.Auth.Keys[0].MaxConcurrentStreams = 1
	}, server.WithLogger(slog.New(lines)))
	var n counter
	oc := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMiddleware(n.openai))
	params := openai.ChatCompletionNewParams{Model: "boom/any", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(sdkText)}}
	for _, stream := range []bool{false, true} {
		n.n.Store(0)
		var err error
		if stream {
			s := oc.Chat.Completions.NewStreaming(ctxOf(t), params)
			for s.Next() {
			}
			err = s.Err()
		} else {
			_, err = oc.Chat.Completions.New(ctxOf(t), params)
		}
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError || apiErr.Type != "server_error" {
			t.Fatalf("stream %v: error %v, want a 500 server_error", stream, err)
		}
		if got := n.n.Load(); got != 1 {
			t.Errorf("stream %v: the SDK made %d requests, want 1", stream, got)
		}
		if line := lines.next(t); line["http.status"] != "500" || line["reason"] != "INTERNAL" {
			t.Errorf("stream %v: finish line %v", stream, line)
		}
	}
	// The key's one stream was given back each time.
	if _, err := oc.Chat.Completions.New(ctxOf(t), openai.ChatCompletionNewParams{Model: "mock/echo", Messages: params.Messages}); err != nil {
		t.Fatalf("after the panics: %v", err)
	}
}

// TestSDKThrottledKeyIsNotRetried: once an address's failed
// authentications are throttled, a wrong key is refused
// AUTHENTICATION_THROTTLED with the wait in retry-after; calling again
// with the same key cannot succeed, so the SDK must not (x-should-retry:
// false): its retries would be more failures for the throttle.
func TestSDKThrottledKeyIsNotRetried(t *testing.T) {
	// Two failures, then a try earned back every 10 s: the address stays
	// throttled for the whole test.
	base, _ := doors(t, func(cfg *config.Config) { cfg.Auth.Throttle.Burst, cfg.Auth.Throttle.PerSecond = 2, 0.1 })
	var n counter
	oc := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey("sk-wrong"), ooption.WithMiddleware(n.openai))
	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("sk-wrong"), aoption.WithMiddleware(n.anthropic), aoption.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "mock/echo", MaxTokens: 9, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	// Fail without retries until the throttle refuses.
	throttled := false
	for i := 0; i < 200 && !throttled; i++ {
		_, err := ac.Messages.New(ctxOf(t), params)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
			t.Fatalf("error %v, want a 401", err)
		}
		throttled = strings.Contains(apiErr.RawJSON(), "AUTHENTICATION_THROTTLED")
	}
	if !throttled {
		t.Fatal("the failed authentications were never throttled")
	}
	n.n.Store(0)
	_, err := oc.Chat.Completions.New(ctxOf(t), openai.ChatCompletionNewParams{Model: "mock/echo", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "authentication_throttled" {
		t.Fatalf("error %v, want a 401 authentication_throttled", err)
	}
	if got := n.n.Load(); got != 1 {
		t.Errorf("the SDK made %d requests, want 1", got)
	}
}

// TestSDKLongWaitIsLeftToTheApplication: a key's rate limit that frees
// its next call only after more than a minute says so in retry-after, but
// not x-should-retry: true, which the Anthropic SDKs obey by sleeping
// however long retry-after says, twice, inside the application's call.
func TestSDKLongWaitIsLeftToTheApplication(t *testing.T) {
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Auth.Keys[0].RequestsPerSecond, cfg.Auth.Keys[0].Burst = 1.0/600, 1 // a call every 10 minutes
	})
	var n counter
	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMiddleware(n.anthropic))
	params := anthropic.MessageNewParams{Model: "mock/echo", MaxTokens: 9, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	if _, err := ac.Messages.New(ctxOf(t), params); err != nil {
		t.Fatal(err)
	}
	n.n.Store(0)
	_, err := ac.Messages.New(ctxOf(t), params)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("error %v, want a 429", err)
	}
	if got := n.n.Load(); got != 1 {
		t.Errorf("the SDK made %d requests, want 1", got)
	}
	if h := apiErr.Response.Header; h.Get("X-Should-Retry") != "false" || h.Get("Retry-After") == "" {
		t.Errorf("x-should-retry %q, retry-after %q", h.Get("X-Should-Retry"), h.Get("Retry-After"))
	}
}

// TestSDKStreamedRefusalIsItsOwnBlock: a reply with text and then a
// refusal streams as the message a reply that is not streamed is: the
// refusal in a text block of its own, not glued to the text before it.
func TestSDKStreamedRefusalIsItsOwnBlock(t *testing.T) {
	base, _ := doors(t, nil)
	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey))
	params := anthropic.MessageNewParams{Model: "mock/echo", MaxTokens: 256, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi there"))}}
	script := aoption.WithJSONSet("llmrelay", faults(map[string]any{"refusal": "I won't."}))
	whole, err := ac.Messages.New(ctxOf(t), params, script)
	if err != nil {
		t.Fatal(err)
	}
	stream := ac.Messages.NewStreaming(ctxOf(t), params, script)
	var streamed anthropic.Message
	for stream.Next() {
		if err := streamed.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	texts := func(m *anthropic.Message) []string {
		var out []string
		for _, b := range m.Content {
			out = append(out, b.Type+":"+b.Text)
		}
		return out
	}
	want := []string{"text:hi there", "text:I won't."}
	if got := texts(whole); !slices.Equal(got, want) {
		t.Errorf("whole reply %q, want %q", got, want)
	}
	if got := texts(&streamed); !slices.Equal(got, want) || streamed.StopReason != whole.StopReason {
		t.Errorf("streamed %q (%s), want %q (%s)", got, streamed.StopReason, want, whole.StopReason)
	}
}
