package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// streamedResponse reads a Responses stream to its end: the events'
// types in order, the text of its output_text deltas, and the response
// of its terminal event (response.completed, .incomplete or .failed).
type streamedResponse struct {
	types    []string
	text     string
	terminal responses.Response
}

func readResponseStream(t *testing.T, stream *ssestream.Stream[responses.ResponseStreamEventUnion]) (streamedResponse, error) {
	t.Helper()
	var got streamedResponse
	var seq int64
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("event %d (%s) has sequence_number %d", seq, ev.Type, ev.SequenceNumber)
		}
		seq++
		got.types = append(got.types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			got.text += ev.AsResponseOutputTextDelta().Delta
		case "response.completed", "response.incomplete", "response.failed":
			got.terminal = ev.Response
		}
	}
	return got, stream.Err()
}

// TestOpenAIResponsesSDK: openai-go's Responses client, unchanged but for
// its base URL, against POST /v1/responses of the production wiring.
func TestOpenAIResponsesSDK(t *testing.T) {
	length, err := os.ReadFile("../provider/openai/testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	length = bytes.Replace(length, []byte(`"finish_reason":"stop"`), []byte(`"finish_reason":"length"`), 1)
	upstream := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: length} })
	t.Setenv("LLMRELAY_TEST_GPT_KEY", "sk-test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "gpt", Kind: "openai", BaseURL: upstream.URL, APIKeyEnv: "LLMRELAY_TEST_GPT_KEY"})
	})
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey))
	params := responses.ResponseNewParams{
		Model: "mock/echo",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(sdkText)},
	}

	t.Run("text, not streamed", func(t *testing.T) {
		var resp *http.Response
		r, err := client.Responses.New(ctxOf(t), params, ooption.WithResponseInto(&resp))
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != sdkText || r.Status != responses.ResponseStatusCompleted || r.Object != "response" {
			t.Errorf("response %s", r.RawJSON())
		}
		if id := resp.Header.Get("X-Request-Id"); r.ID != "resp_"+id || resp.Header.Get("Llmrelay-Provider") != "mock" {
			t.Errorf("id %q, headers %v", r.ID, resp.Header)
		}
		if len(r.Output) != 1 || r.Output[0].Type != "message" || !strings.HasPrefix(r.Output[0].ID, "msg_") || r.Output[0].Status != "completed" {
			t.Errorf("output %s", r.RawJSON())
		}
		if u := r.Usage; u.OutputTokens == 0 || u.TotalTokens != u.InputTokens+u.OutputTokens {
			t.Errorf("usage %+v", u)
		}
	})

	t.Run("streamed text, its events in OpenAI's order", func(t *testing.T) {
		got, err := readResponseStream(t, client.Responses.NewStreaming(ctxOf(t), params))
		if err != nil {
			t.Fatal(err)
		}
		if got.text != sdkText || got.terminal.OutputText() != sdkText || got.terminal.Usage.OutputTokens == 0 {
			t.Errorf("text %q, terminal %s", got.text, got.terminal.RawJSON())
		}
		var order []string
		for _, typ := range got.types {
			if len(order) == 0 || order[len(order)-1] != typ {
				order = append(order, typ)
			}
		}
		want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
		if strings.Join(order, " ") != strings.Join(want, " ") {
			t.Errorf("events %v\nwant    %v", order, want)
		}
	})

	t.Run("a function tool round trip", func(t *testing.T) {
		p := params
		p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("weather",
			map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false)}
		first, err := client.Responses.New(ctxOf(t), p, ooption.WithJSONSet("llmrelay", faults(map[string]any{
			"output": "", "tool_calls": []map[string]any{{"id": "call_1", "name": "weather", "arguments": `{"city":"Paris"}`}},
		})))
		if err != nil {
			t.Fatal(err)
		}
		if len(first.Output) != 1 || first.Output[0].Type != "function_call" {
			t.Fatalf("first response %s", first.RawJSON())
		}
		call := first.Output[0].AsFunctionCall()
		if call.CallID != "call_1" || call.Name != "weather" || call.Arguments != `{"city":"Paris"}` || !strings.HasPrefix(call.ID, "fc_") {
			t.Fatalf("call %s", call.RawJSON())
		}
		out := responses.ResponseInputItemParamOfFunctionCallOutput("18C")
		out.OfFunctionCallOutput.CallID = openai.String(call.CallID)
		p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(sdkText, responses.EasyInputMessageRoleUser),
			{OfFunctionCall: ptr(call.ToParam())},
			out,
			responses.ResponseInputItemParamOfMessage("thanks", responses.EasyInputMessageRoleUser),
		}}
		second, err := client.Responses.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if got := second.OutputText(); got != "thanks" {
			t.Errorf("second response %q", got)
		}
	})

	t.Run("a function call streamed", func(t *testing.T) {
		p := params
		p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("weather", map[string]any{"type": "object"}, false)}
		stream := client.Responses.NewStreaming(ctxOf(t), p, ooption.WithJSONSet("llmrelay", faults(map[string]any{
			"output": "", "tool_calls": []map[string]any{{"id": "call_1", "name": "weather", "arguments": `{"city":"Paris"}`}},
		})))
		args := ""
		var done responses.ResponseFunctionCallArgumentsDoneEvent
		for stream.Next() {
			switch ev := stream.Current(); ev.Type {
			case "response.function_call_arguments.delta":
				args += ev.Delta
			case "response.function_call_arguments.done":
				done = ev.AsResponseFunctionCallArgumentsDone()
			case "response.completed":
				if len(ev.Response.Output) != 1 || ev.Response.Output[0].AsFunctionCall().Arguments != `{"city":"Paris"}` {
					t.Errorf("completed %s", ev.RawJSON())
				}
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if args != `{"city":"Paris"}` || done.Arguments != args {
			t.Errorf("arguments %q, done %s", args, done.RawJSON())
		}
	})

	t.Run("structured output with text.format json_schema", func(t *testing.T) {
		p := params
		p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "city", Strict: openai.Bool(true), Schema: citySchema},
		}}
		r, err := client.Responses.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		checkCity(t, r.OutputText())
	})

	t.Run("a reply cut at max_output_tokens is incomplete", func(t *testing.T) {
		p := params
		p.Model, p.MaxOutputTokens = "gpt/gpt-4o-mini", openai.Int(6)
		r, err := client.Responses.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != responses.ResponseStatusIncomplete || r.IncompleteDetails.Reason != "max_output_tokens" || r.Output[0].Status != "incomplete" {
			t.Errorf("response %s", r.RawJSON())
		}
		got, err := readResponseStream(t, client.Responses.NewStreaming(ctxOf(t), p))
		if err != nil {
			t.Fatal(err)
		}
		if last := got.types[len(got.types)-1]; last != "response.incomplete" || got.terminal.IncompleteDetails.Reason != "max_output_tokens" {
			t.Errorf("streamed: last event %s, terminal %s", last, got.terminal.RawJSON())
		}
	})

	for _, tc := range []struct {
		name                      string
		params                    responses.ResponseNewParams
		opts                      []ooption.RequestOption
		status                    int
		typ, code, param, message string
	}{
		{"previous_response_id", responses.ResponseNewParams{Model: "mock/echo", Input: params.Input, PreviousResponseID: openai.String("resp_1")}, nil,
			400, "invalid_request_error", "invalid_request", "previous_response_id", "llmrelay keeps no response state"},
		{"a built-in tool", responses.ResponseNewParams{Model: "mock/echo", Input: params.Input, Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: "web_search"}}}}, nil,
			400, "invalid_request_error", "invalid_request", "tools[0].type", `"web_search" tools are not supported`},
		{"an upstream failure", params, []ooption.RequestOption{ooption.WithJSONSet("llmrelay", faults(map[string]any{"status": 503}, map[string]any{"status": 503}, map[string]any{"status": 503}))},
			503, "server_error", "retries_exhausted", "", "overloaded"},
	} {
		t.Run(tc.name+" is a typed error", func(t *testing.T) {
			var n counter
			_, err := client.Responses.New(ctxOf(t), tc.params, append(tc.opts, ooption.WithMiddleware(n.openai))...)
			var e *openai.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *openai.Error", err)
			}
			if e.StatusCode != tc.status || e.Type != tc.typ || e.Code != tc.code || e.Param != tc.param || !strings.Contains(e.Message, tc.message) {
				t.Errorf("%d %s %s %q %q, want %d %s %s %q %q", e.StatusCode, e.Type, e.Code, e.Param, e.Message, tc.status, tc.typ, tc.code, tc.param, tc.message)
			}
			if got := n.n.Load(); got != 1 {
				t.Errorf("%d requests, want 1", got)
			}
		})
	}

	t.Run("a mid-stream failure is response.failed, then an error the SDK raises", func(t *testing.T) {
		got, err := readResponseStream(t, client.Responses.NewStreaming(ctxOf(t), params,
			ooption.WithJSONSet("llmrelay", faults(map[string]any{"error_after": 2}, map[string]any{}))))
		var se *ssestream.StreamError
		if !errors.As(err, &se) || !strings.Contains(string(se.Event.Data), `"reason":"MIDSTREAM_FAILED"`) || se.Event.Type != "error" {
			t.Fatalf("error %v, want the stream's error event", err)
		}
		if got.text != sdkFirst || got.terminal.Status != responses.ResponseStatusFailed || got.terminal.Error.Code != "midstream_failed" {
			t.Errorf("shown %q, terminal %s", got.text, got.terminal.RawJSON())
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestOpenAIResponsesSDKGeminiCallSignature: a Codex-style loop on a
// Gemini 3 model through the Responses door. Gemini 3 refuses (400) a
// turn whose function call comes back without the thoughtSignature it was
// given, and the Responses API has no member for it on a function_call
// item: the application sends the reply's output back as it came (with
// openai-go's ToParam) and its function call outputs, and the next
// upstream request has the signature on its functionCall part, exactly
// as it streamed, whether the reply was streamed or not.
func TestOpenAIResponsesSDKGeminiCallSignature(t *testing.T) {
	upstream, signature := geminiToolLoop(t)
	t.Setenv("LLMRELAY_TEST_GEMINI_KEY", "test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "gem", Kind: "gemini", BaseURL: upstream.URL, APIKeyEnv: "LLMRELAY_TEST_GEMINI_KEY"})
	})
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
	tools := []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_country", Parameters: map[string]any{"type": "object"}}}}
	ask := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("What is the capital of the user country? Call the tool", responses.EasyInputMessageRoleUser)}

	for i, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "not streamed", true: "streamed"}[streamed], func(t *testing.T) {
			params := responses.ResponseNewParams{Model: "gem/gemini-3-pro-preview", Tools: tools,
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: ask}}
			var r *responses.Response
			var err error
			if streamed {
				got, err := readResponseStream(t, client.Responses.NewStreaming(ctxOf(t), params))
				if err != nil {
					t.Fatal(err)
				}
				r = &got.terminal
			} else if r, err = client.Responses.New(ctxOf(t), params); err != nil {
				t.Fatal(err)
			}
			input := append(responses.ResponseInputParam{}, ask...)
			calls := 0
			var outputs responses.ResponseInputParam
			for _, item := range r.Output {
				switch item.Type {
				case "reasoning":
					input = append(input, responses.ResponseInputItemUnionParam{OfReasoning: ptr(item.AsReasoning().ToParam())})
				case "message":
					input = append(input, responses.ResponseInputItemUnionParam{OfOutputMessage: ptr(item.AsMessage().ToParam())})
				case "function_call":
					calls++
					input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCall: ptr(item.AsFunctionCall().ToParam())})
					out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"country":"France"}`)
					out.OfFunctionCallOutput.CallID = openai.String(item.CallID)
					outputs = append(outputs, out)
				}
			}
			input = append(input, outputs...)
			if calls != 1 {
				t.Fatalf("output %s, want one function call", r.RawJSON())
			}
			params.Input.OfInputItemList = input
			if _, err := client.Responses.New(ctxOf(t), params); err != nil {
				t.Fatal(err)
			}
			reqs := upstream.Requests()
			if len(reqs) != 2*(i+1) {
				t.Fatalf("the upstream got %d requests", len(reqs))
			}
			wantCallSignatureBack(t, reqs[len(reqs)-1].Body, signature)
		})
	}
}

// TestOpenAIResponsesSDKEchoesSettings: a response repeats the settings of
// its request that llmrelay applied, as OpenAI's response object does, in
// the reply that is not streamed and in the streamed one's
// response.created, response.in_progress and response.completed; a
// setting the request left out is null, or the API's default where
// llmrelay does the same.
func TestOpenAIResponsesSDKEchoesSettings(t *testing.T) {
	text, err := os.ReadFile("../provider/openai/testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	upstream := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: text} })
	t.Setenv("LLMRELAY_TEST_GPT_KEY", "sk-test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "gpt", Kind: "openai", BaseURL: upstream.URL, APIKeyEnv: "LLMRELAY_TEST_GPT_KEY"})
	})
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
	input := responses.ResponseNewParamsInputUnion{OfString: openai.String(sdkText)}
	weather := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}

	// each runs a case's request, not streamed and streamed, and checks
	// the response object, and each of the stream's, with check.
	each := func(t *testing.T, params responses.ResponseNewParams, check func(t *testing.T, r responses.Response)) {
		t.Helper()
		t.Run("not streamed", func(t *testing.T) {
			r, err := client.Responses.New(ctxOf(t), params)
			if err != nil {
				t.Fatal(err)
			}
			check(t, *r)
		})
		t.Run("streamed", func(t *testing.T) {
			stream := client.Responses.NewStreaming(ctxOf(t), params)
			var seen []string
			for stream.Next() {
				switch ev := stream.Current(); ev.Type {
				case "response.created", "response.in_progress", "response.completed":
					seen = append(seen, ev.Type)
					t.Run(ev.Type, func(t *testing.T) { check(t, ev.Response) })
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 3 {
				t.Errorf("events %v", seen)
			}
		})
	}

	t.Run("every setting", func(t *testing.T) {
		params := responses.ResponseNewParams{
			Model: "gpt/gpt-4o-mini", Input: input,
			Instructions:    openai.String("be brief"),
			Temperature:     openai.Float(0.7),
			TopP:            openai.Float(0.9),
			MaxOutputTokens: openai.Int(500),
			MaxToolCalls:    openai.Int(3),
			Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
				Name: "weather", Description: openai.String("the weather in a city"), Parameters: weather, Strict: openai.Bool(true),
			}}},
			ToolChoice:        responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "weather"}},
			ParallelToolCalls: openai.Bool(false),
			Reasoning:         shared.ReasoningParam{Effort: shared.ReasoningEffortLow},
			Text:              responses.ResponseTextConfigParam{Verbosity: responses.ResponseTextConfigVerbosityLow},
			Metadata:          shared.Metadata{"team": "agents"},
			User:              openai.String("u-9"),
			PromptCacheKey:    openai.String("pck"),
			SafetyIdentifier:  openai.String("sid"),
			Store:             openai.Bool(true),
			Truncation:        responses.ResponseNewParamsTruncationDisabled,
		}
		each(t, params, func(t *testing.T, r responses.Response) {
			if r.Instructions.OfString != "be brief" || r.Temperature != 0.7 || r.TopP != 0.9 || r.MaxOutputTokens != 500 || r.MaxToolCalls != 3 {
				t.Errorf("instructions %q, temperature %v, top_p %v, max_output_tokens %d, max_tool_calls %d",
					r.Instructions.OfString, r.Temperature, r.TopP, r.MaxOutputTokens, r.MaxToolCalls)
			}
			// strict false: llmrelay does not hold arguments to the parameters.
			if len(r.Tools) != 1 {
				t.Fatalf("tools %s", r.JSON.Tools.Raw())
			}
			if f := r.Tools[0].AsFunction(); f.Type != "function" || f.Name != "weather" || f.Description != "the weather in a city" ||
				!sameJSON(f.Parameters, weather) || f.Strict || !f.JSON.Strict.Valid() {
				t.Errorf("tools %s", r.JSON.Tools.Raw())
			}
			if tc := r.ToolChoice; tc.Type != "function" || tc.Name != "weather" {
				t.Errorf("tool_choice %s", r.JSON.ToolChoice.Raw())
			}
			if r.ParallelToolCalls || !r.JSON.ParallelToolCalls.Valid() {
				t.Errorf("parallel_tool_calls %s", r.JSON.ParallelToolCalls.Raw())
			}
			if r.Reasoning.Effort != shared.ReasoningEffortLow || r.Reasoning.JSON.Summary.Valid() {
				t.Errorf("reasoning %s", r.JSON.Reasoning.Raw())
			}
			if r.Text.Verbosity != responses.ResponseTextConfigVerbosityLow || r.Text.JSON.Format.Valid() {
				t.Errorf("text %s", r.JSON.Text.Raw())
			}
			if !maps.Equal(r.Metadata, shared.Metadata{"team": "agents"}) || r.User != "u-9" || r.PromptCacheKey != "pck" || r.SafetyIdentifier != "sid" {
				t.Errorf("metadata %v, user %q, prompt_cache_key %q, safety_identifier %q", r.Metadata, r.User, r.PromptCacheKey, r.SafetyIdentifier)
			}
			// Nothing is stored, whatever store says.
			if store := r.JSON.ExtraFields["store"].Raw(); store != "false" || r.Truncation != responses.ResponseTruncationDisabled || r.Background || r.JSON.PreviousResponseID.Valid() {
				t.Errorf("store %s, truncation %q, background %v, previous_response_id %s", store, r.Truncation, r.Background, r.JSON.PreviousResponseID.Raw())
			}
		})
	})

	for _, tc := range []struct {
		name   string
		format responses.ResponseFormatTextConfigUnionParam
		want   string
	}{
		{"text.format json_schema, strict: llmrelay validates the reply", responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "city", Schema: citySchema, Strict: openai.Bool(false)},
		}, "json_schema"},
		{"text.format json_object", responses.ResponseFormatTextConfigUnionParam{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}, "json_object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := responses.ResponseNewParams{Model: "mock/echo", Input: input, Text: responses.ResponseTextConfigParam{Format: tc.format}}
			each(t, params, func(t *testing.T, r responses.Response) {
				f := r.Text.Format
				if f.Type != tc.want || r.Text.JSON.Verbosity.Valid() {
					t.Fatalf("text %s", r.JSON.Text.Raw())
				}
				if tc.want == "json_schema" && (f.Name != "city" || !f.Strict || !sameJSON(f.Schema, citySchema)) {
					t.Errorf("text %s", r.JSON.Text.Raw())
				}
			})
		})
	}

	t.Run("no settings: nulls and the defaults llmrelay keeps", func(t *testing.T) {
		each(t, responses.ResponseNewParams{Model: "mock/echo", Input: input}, func(t *testing.T, r responses.Response) {
			for name, f := range map[string]respjson.Field{
				"instructions": r.JSON.Instructions, "temperature": r.JSON.Temperature, "top_p": r.JSON.TopP,
				"max_output_tokens": r.JSON.MaxOutputTokens, "max_tool_calls": r.JSON.MaxToolCalls, "reasoning": r.JSON.Reasoning,
			} {
				if f.Raw() != "null" {
					t.Errorf("%s %s, want null", name, f.Raw())
				}
			}
			for name, f := range map[string]respjson.Field{
				"text": r.JSON.Text, "user": r.JSON.User, "prompt_cache_key": r.JSON.PromptCacheKey, "safety_identifier": r.JSON.SafetyIdentifier,
			} {
				if f.Raw() != "" {
					t.Errorf("%s %s, want none", name, f.Raw())
				}
			}
			if r.ToolChoice.OfToolChoiceMode != responses.ToolChoiceOptionsAuto || r.JSON.Tools.Raw() != "[]" || !r.ParallelToolCalls ||
				r.JSON.Metadata.Raw() != "{}" || r.Truncation != responses.ResponseTruncationDisabled || !r.JSON.TopLogprobs.Valid() || r.TopLogprobs != 0 {
				t.Errorf("tool_choice %s, tools %s, parallel_tool_calls %v, metadata %s, truncation %q, top_logprobs %s",
					r.JSON.ToolChoice.Raw(), r.JSON.Tools.Raw(), r.ParallelToolCalls, r.JSON.Metadata.Raw(), r.Truncation, r.JSON.TopLogprobs.Raw())
			}
		})
	})
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b any) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
}
