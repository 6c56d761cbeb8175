package gemini_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// recorded is what a recorded real stream (testdata/recorded, see its
// SOURCES.md) must decode to; the whole event sequence is in the golden
// file testdata/golden/<file>.events.
type recorded struct {
	file string
	text string
	// reasoningHas is a piece of the reasoning's text ("" for a block
	// that is a signature alone); signed says the block has a signature.
	reasoning    bool
	reasoningHas string
	signed       bool
	calls        []provider.ToolCall
	finish       provider.FinishReason
	usage        provider.Usage
}

var recordings = []recorded{
	// Thought parts are reasoning; the signature on the first answer part
	// signs them.
	{file: "gemini25pro_thought_parts.sse", reasoning: true, reasoningHas: "**Clarifying User Goals**", signed: true,
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 34, OutputTokens: 469 + 787, ReasoningTokens: 787}},
	// Gemini 3 signs an empty last text part: no text, a signature kept.
	{file: "gemini3_signature_on_empty_text_part.sse", text: "There are **3** \"r\"s in strawberry.\n\nSt**r**awbe**rr**y", reasoning: true, signed: true,
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 9, OutputTokens: 23 + 302, ReasoningTokens: 302}},
	{file: "gemini3pro_function_call_signature_turn1.sse",
		calls:  []provider.ToolCall{{ID: "call_0", Name: "get_country", Arguments: "{}"}},
		finish: provider.FinishToolCalls, usage: provider.Usage{InputTokens: 29, OutputTokens: 10 + 202, ReasoningTokens: 202}},
	{file: "gemini3flash_function_call_signature_turn1.sse",
		calls:  []provider.ToolCall{{ID: "call_0", Name: "multiply", Arguments: `{"y": 3,"x": 5}`}},
		finish: provider.FinishToolCalls, usage: provider.Usage{InputTokens: 60, OutputTokens: 16 + 32, ReasoningTokens: 32}},
	{file: "gemini3pro_function_call_signature_turn2.sse", text: "The capital of Mexico is Mexico City.",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 257, OutputTokens: 8}},
}

// replayRecorded replays a recorded stream (pt.ReplayRecorded) and
// renames the ids the adapter generated for Gemini's id-less calls, which
// are random (provider.NewCallID), to call_0, call_1, ... in the order the
// calls came, so that the golden files hold: a recorded call's id that
// was not generated stays as it is, and fails their comparison.
func replayRecorded(t *testing.T, file string, req *provider.Request) (pt.Result, *provider.Activity) {
	t.Helper()
	r, act := pt.ReplayRecorded(t, file, newProvider, req)
	generated := regexp.MustCompile(`^call_[0-9a-f]{24}$`)
	names := map[string]string{}
	rename := func(id string) string {
		if !generated.MatchString(id) {
			return id
		}
		if _, ok := names[id]; !ok {
			names[id] = "call_" + strconv.Itoa(len(names))
		}
		return names[id]
	}
	for i := range r.Events {
		if r.Events[i].Kind == provider.EventToolCall {
			r.Events[i].ToolCall.ID = rename(r.Events[i].ToolCall.ID)
		}
	}
	for i := range r.ToolCalls {
		r.ToolCalls[i].ID = rename(r.ToolCalls[i].ID)
	}
	return r, act
}

// TestRecordedStreams replays each recorded real stream over loopback HTTP
// and checks what the adapter makes of it: thought parts as reasoning
// (never text), thoughtSignatures kept (on the reasoning, or on the
// function call they came on), usage with thoughts counted as output, and
// the whole event sequence against its golden file (go test -update
// rewrites them).
func TestRecordedStreams(t *testing.T) {
	for _, tc := range recordings {
		t.Run(strings.TrimSuffix(tc.file, ".sse"), func(t *testing.T) {
			r, act := replayRecorded(t, tc.file, pt.NewRequest("gemini-3-pro-preview"))
			if r.Err != nil {
				t.Fatalf("stream failed: %v", r.Err)
			}
			if tc.text != "" && r.Text != tc.text {
				t.Errorf("text = %q, want %q", r.Text, tc.text)
			}
			if tc.reasoning != (len(r.Reasoning) == 1) || len(r.Reasoning) > 1 {
				t.Fatalf("reasoning %+v, want one block: %v", r.Reasoning, tc.reasoning)
			}
			if tc.reasoning {
				b := r.Reasoning[0]
				if b.Format != provider.FormatGemini || !strings.Contains(b.Text, tc.reasoningHas) || (b.Signature != "") != tc.signed {
					t.Errorf("reasoning %+v, want format gemini, text containing %q, signed %v", b, tc.reasoningHas, tc.signed)
				}
				if b.Text != "" && strings.Contains(r.Text, b.Text[:min(len(b.Text), 40)]) {
					t.Error("the thoughts leaked into the text")
				}
			}
			for i, c := range r.ToolCalls {
				if c.Signature == "" {
					t.Errorf("tool call %d has no signature: Gemini 3 refuses the next turn without it", i)
				}
			}
			pt.CheckRecorded(t, tc.file, r, act, pt.RecordedWant{Calls: tc.calls, Finish: tc.finish, Usage: tc.usage}, *update)
		})
	}
}

// TestCachedContentUsage: a stream whose usage reports cached content
// (the recorded generateContent body, sent as the stream's one event, as
// SOURCES.md says it may be) counts the cached tokens as part of the input.
func TestCachedContentUsage(t *testing.T) {
	b, err := os.ReadFile("testdata/recorded/gemini25flash_cached_content_usage.generatecontent.json")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatal(err)
	}
	u := pt.Replay(t, pt.Reply{Body: []byte("data: " + compact.String() + "\r\n\r\n")})
	r := pt.Collect(t.Context(), newProvider(t, u.URL), pt.NewRequest("gemini-2.5-flash"))
	want := provider.Usage{InputTokens: 3520, OutputTokens: 2 + 42, ReasoningTokens: 42, CachedInputTokens: 3512}
	if r.Err != nil || r.Text != "Paris." || r.Usage != want {
		t.Errorf("text %q usage %+v err %v, want Paris. and %+v", r.Text, r.Usage, r.Err, want)
	}
}

// TestFunctionCallSignatureRoundTrip plays the recorded two-turn function
// call of Gemini 3 Flash: turn 1's call, decoded, goes back in turn 2 with
// its thoughtSignature exactly as it streamed, which is also exactly the
// string the recorded turn 2 request (verbatim bytes, accepted by the API)
// sent; the whole body is a golden file.
func TestFunctionCallSignatureRoundTrip(t *testing.T) {
	turn1, _ := replayRecorded(t, "gemini3flash_function_call_signature_turn1.sse", pt.NewRequest("gemini-3-flash-preview"))
	if turn1.Err != nil || len(turn1.ToolCalls) != 1 {
		t.Fatalf("turn 1: %+v, %v", turn1.ToolCalls, turn1.Err)
	}
	call := turn1.ToolCalls[0]
	recorded, err := os.ReadFile("testdata/recorded/gemini3flash_function_call_signature_turn2.request.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(recorded, []byte(`"thoughtSignature":"`+call.Signature+`"`)) {
		t.Fatalf("the signature streamed in turn 1 is not the recorded turn 2 request's")
	}
	req := &provider.Request{
		Model: "gemini-3-flash-preview",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: "What is 5 times 3?"},
			{Role: provider.RoleAssistant, Content: turn1.Text, Reasoning: turn1.Reasoning, ToolCalls: turn1.ToolCalls},
			{Role: provider.RoleTool, ToolCallID: call.ID, Content: "15"},
		},
		Tools: []provider.Tool{{Name: "multiply", Description: "Multiply two numbers.",
			Parameters: json.RawMessage(`{"properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"type":"object"}`)}},
		Options: map[string]any{"safetySettings": []any{map[string]any{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_NONE"}}},
		Attempt: 1,
	}
	u := pt.Replay(t, pt.Fixture{File: "recorded/gemini3pro_function_call_signature_turn2.sse"}.Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionCall *struct {
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
				ThoughtSignature string `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Contents) != 3 || body.Contents[1].Role != "model" || len(body.Contents[1].Parts) != 1 {
		t.Fatalf("contents %+v, want user, model (one part), user", body.Contents)
	}
	p := body.Contents[1].Parts[0]
	if p.FunctionCall == nil || p.FunctionCall.Name != "multiply" || !pt.SameJSON(string(p.FunctionCall.Args), `{"y":3,"x":5}`) {
		t.Errorf("model part %+v, want the multiply call", p)
	}
	if !bytes.Contains(got.Body, []byte(`"thoughtSignature":"`+call.Signature+`"`)) || p.ThoughtSignature != call.Signature {
		t.Error("the function call's thoughtSignature did not go back byte for byte")
	}
	pt.GoldenJSON(t, "request_signature_turn2.golden.json", got.Body, *update)
}

// TestTextSignatureGoesBack: the signature of a text part (Gemini 2.5's
// first answer part, Gemini 3's empty last part) goes back on the turn's
// text part; the thoughts themselves do not.
func TestTextSignatureGoesBack(t *testing.T) {
	for _, file := range []string{"gemini25pro_thought_parts.sse", "gemini3_signature_on_empty_text_part.sse"} {
		t.Run(file, func(t *testing.T) {
			turn1, _ := pt.ReplayRecorded(t, file, newProvider, pt.NewRequest("gemini-2.5-pro"))
			req := pt.NewRequest("gemini-2.5-pro")
			req.Messages = append(req.Messages,
				provider.Message{Role: provider.RoleAssistant, Content: turn1.Text, Reasoning: turn1.Reasoning},
				provider.Message{Role: provider.RoleUser, Content: "And then?"})
			u := pt.Replay(t, pt.Fixture{File: "recorded/gemini3pro_function_call_signature_turn2.sse"}.Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
			var body struct {
				Contents []struct {
					Role  string           `json:"role"`
					Parts []map[string]any `json:"parts"`
				} `json:"contents"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			model := body.Contents[1]
			if model.Role != "model" || len(model.Parts) != 1 || model.Parts[0]["text"] != turn1.Text || model.Parts[0]["thoughtSignature"] != turn1.Reasoning[0].Signature {
				t.Errorf("model turn %v, want one text part with the text and the signature", model)
			}
			if turn1.Reasoning[0].Text != "" && bytes.Contains(got.Body, []byte("Clarifying User Goals")) {
				t.Error("the thoughts were sent back")
			}
		})
	}
}

// TestSignaturesGoBackWhereTheyCame: with the reply's order (the final
// message's parts), Gemini 3's signature on its empty last text part goes
// back on an empty part after the text, where it came, not on the text.
func TestSignaturesGoBackWhereTheyCame(t *testing.T) {
	turn1, _ := pt.ReplayRecorded(t, "gemini3_signature_on_empty_text_part.sse", newProvider, pt.NewRequest("gemini-3-pro-preview"))
	if want := []provider.Part{{Kind: provider.PartText, Text: turn1.Text}, {Kind: provider.PartReasoning, Index: 0}}; !reflect.DeepEqual(turn1.Parts, want) {
		t.Fatalf("parts %+v, want the text, then the signature", turn1.Parts)
	}
	req := pt.NewRequest("gemini-3-pro-preview")
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: turn1.Text, Reasoning: turn1.Reasoning, Parts: turn1.Parts},
		provider.Message{Role: provider.RoleUser, Content: "And then?"})
	u := pt.Replay(t, pt.Fixture{File: "recorded/gemini3pro_function_call_signature_turn2.sse"}.Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
	var body struct {
		Contents []struct {
			Parts []map[string]any `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"text": turn1.Text}, {"text": "", "thoughtSignature": turn1.Reasoning[0].Signature}}
	if parts := body.Contents[1].Parts; !reflect.DeepEqual(parts, want) {
		t.Errorf("model turn parts %v, want %v", parts, want)
	}
}
