package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/gemini"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestRequestMapping(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1beta"), pt.RichRequest("gemini-2.5-flash"))
	pt.GoldenJSON(t, "request_rich.golden.json", got.Body, *update)
	if want := "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"; got.URI != want {
		t.Errorf("URI = %s, want %s", got.URI, want)
	}
	if k := got.Header.Get("X-Goog-Api-Key"); k != testKey {
		t.Errorf("x-goog-api-key = %q, want the key", k)
	}
}

// reviewSchema uses const, which Gemini takes as a one-value enum, and
// keywords Gemini does not enforce (minLength, pattern).
const reviewSchema = `{"type":"object","properties":{"kind":{"const":"review"},"sentiment":{"type":"string","enum":["positive","negative"]},` +
	`"score":{"type":"number","minimum":0,"maximum":1},"summary":{"type":"string","minLength":10,"pattern":"^[A-Z]"}},` +
	`"required":["kind","sentiment","score"]}`

// treeSchema is recursive: Gemini cannot take it natively.
const treeSchema = `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}},"$ref":"#/$defs/node"}`

// TestStructuredOutputRequest: the schema goes out as generationConfig's
// responseMimeType and responseJsonSchema in Gemini's subset; a schema
// Gemini cannot take goes into the system instruction instead.
func TestStructuredOutputRequest(t *testing.T) {
	tests := []struct {
		name, golden, schema string
		native               bool
	}{
		{"native", "request_schema.golden.json", reviewSchema, true},
		{"recursive, in the prompt", "request_schema_prompt.golden.json", treeSchema, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := pt.NewRequest("gemini-2.5-flash")
			req.Tools = nil
			req.ResponseFormat = &provider.ResponseFormat{Name: "review", Schema: json.RawMessage(tc.schema)}
			u := pt.Replay(t, fixtures[pt.Text].Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1beta"), req)
			pt.GoldenJSON(t, tc.golden, got.Body, *update)
			var body struct {
				SystemInstruction struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"systemInstruction"`
				GenerationConfig struct {
					ResponseMIMEType   string         `json:"responseMimeType"`
					ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
				} `json:"generationConfig"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			system := body.SystemInstruction.Parts[0].Text
			gc := body.GenerationConfig
			if !tc.native {
				if gc.ResponseMIMEType != "" || gc.ResponseJSONSchema != nil || !strings.Contains(system, `"$ref":"#/$defs/node"`) {
					t.Errorf("generationConfig %+v, system %q: want the schema in the system instruction only", gc, system)
				}
				return
			}
			if gc.ResponseMIMEType != "application/json" || gc.ResponseJSONSchema == nil {
				t.Fatalf("generationConfig = %+v, want application/json and the schema", gc)
			}
			kind, _ := gc.ResponseJSONSchema["properties"].(map[string]any)["kind"].(map[string]any)
			if fmt.Sprint(kind["enum"]) != "[review]" {
				t.Errorf("kind = %v, want const as a one-value enum", kind)
			}
			if system != "You are terse." {
				t.Errorf("system instruction = %q, want it unchanged", system)
			}
		})
	}
}

func TestModelNames(t *testing.T) {
	for model, want := range map[string]string{
		"gemini-2.5-flash":        "/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"models/gemini-2.5-flash": "/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"tunedModels/my-model-7":  "/tunedModels/my-model-7:streamGenerateContent?alt=sse",
		// Each segment is escaped: nothing in a name starts a query or
		// fragment, or joins two segments.
		"tunedModels/a b?c#d%2F..": "/tunedModels/a%20b%3Fc%23d%252F..:streamGenerateContent?alt=sse",
	} {
		u := pt.Replay(t, fixtures[pt.Text].Reply(t))
		got := pt.CaptureRequest(t, u, newProvider(t, u.URL), pt.NewRequest(model))
		if got.URI != want {
			t.Errorf("model %q: URI %s, want %s", model, got.URI, want)
		}
	}
}

// TestModelPathsAreRefusedBeforeAnyRequest: a model name with an empty, "."
// or ".." segment could steer the URL to another model or API; it is a
// field error on "model", and the upstream receives nothing.
func TestModelPathsAreRefusedBeforeAnyRequest(t *testing.T) {
	for _, model := range []string{
		"gemini-2.5-flash/../../v1beta/models/gemini-2.5-pro",
		"models/../tunedModels/x", "models//x", "./x", "x/",
	} {
		u := pt.Replay(t, fixtures[pt.Text].Reply(t))
		_, err := newProvider(t, u.URL).Stream(t.Context(), pt.NewRequest(model))
		var fe *provider.FieldError
		if !errors.As(err, &fe) || fe.Field != "model" {
			t.Errorf("model %q: error %v, want a field error on model", model, err)
		}
		if n := len(u.Requests()); n != 0 {
			t.Errorf("model %q: the upstream received %d requests", model, n)
		}
	}
}

func TestKeyIsRequired(t *testing.T) {
	if _, err := gemini.New(provider.Config{Name: "gemini", Kind: gemini.Kind}); err == nil {
		t.Error("New without api_key_env succeeded, want an error")
	}
}

func TestToolArgumentsMustBeAnObject(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	req := pt.RichRequest("gemini-2.5-flash")
	req.Messages[3].ToolCalls[0].Arguments = `{"city":`
	_, err := newProvider(t, u.URL).Stream(t.Context(), req)
	var fe *provider.FieldError
	if !errors.As(err, &fe) || fe.Field != "messages[3].tool_calls[0].arguments" {
		t.Errorf("error = %v, want a field error on messages[3].tool_calls[0].arguments", err)
	}
}

// TestAtMostOneFunctionCall: the Gemini API has no switch for at most one
// tool call per reply, so a request that asks for it gets the reply's
// first function call (with its signature) and not the ones after it, and
// sends the API nothing it does not know; a request that does not ask
// gets every call.
func TestAtMostOneFunctionCall(t *testing.T) {
	tests := []struct {
		name   string
		choice provider.ToolChoice
		calls  []string // the names called
	}{
		{"asked", provider.ToolChoice{DisableParallel: true}, []string{"get_weather"}},
		{"asked, with a call required", provider.ToolChoice{Mode: provider.ToolChoiceRequired, DisableParallel: true}, []string{"get_weather"}},
		{"not asked", provider.ToolChoice{}, []string{"get_weather", "get_time"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.Replay(t, fixtures[pt.ToolCalls].Reply(t))
			req := pt.NewRequest("gemini-2.5-flash")
			req.ToolChoice = tc.choice
			r := pt.Collect(context.Background(), newProvider(t, u.URL+"/v1beta"), req)
			if r.Err != nil || r.Finish != provider.FinishToolCalls {
				t.Fatalf("finish %v, err %v; want tool calls", r.Finish, r.Err)
			}
			var names []string
			for _, c := range r.ToolCalls {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.calls) {
				t.Fatalf("calls %v, want %v", names, tc.calls)
			}
			if r.ToolCalls[0].Signature == "" {
				t.Error("the first call lost its thought signature")
			}
			var body struct {
				ToolConfig map[string]map[string]json.RawMessage `json:"toolConfig"`
			}
			if err := json.Unmarshal(u.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			for k := range body.ToolConfig["functionCallingConfig"] {
				if k != "mode" {
					t.Errorf("functionCallingConfig.%s sent; the API knows mode and allowedFunctionNames only", k)
				}
			}
		})
	}
}

// TestStopSequencesWithinGeminisBound: Gemini's generationConfig takes up
// to 5 stopSequences and answers 400 to more ("the number of
// stop_sequences must not exceed 5"), after a round trip; the request
// allows 16. More than 5 are refused before any attempt, naming
// generation.stop and the bound.
func TestStopSequencesWithinGeminisBound(t *testing.T) {
	for _, n := range []int{5, 6, 16} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p := newProvider(t, "https://generativelanguage.googleapis.com/v1beta").(provider.RequestValidator)
			req := pt.NewRequest("gemini-2.5-flash")
			for i := range n {
				req.Generation.Stop = append(req.Generation.Stop, fmt.Sprintf("<stop%d>", i))
			}
			err := p.ValidateRequest(req)
			var fe *provider.FieldError
			switch {
			case n <= 5 && err != nil:
				t.Errorf("ValidateRequest = %v, want nil", err)
			case n > 5 && (!errors.As(err, &fe) || fe.Field != "generation.stop" || !strings.Contains(fe.Description, "at most 5")):
				t.Errorf("ValidateRequest = %v, want a FieldError on generation.stop naming the bound 5", err)
			}
		})
	}
}
