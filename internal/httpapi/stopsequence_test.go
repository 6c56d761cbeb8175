package httpapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestSDKStopSequence: a reply an Anthropic-format upstream ends at one of
// the request's stop sequences (stop_reason stop_sequence, stop_sequence
// "0.32a0": the anthropic adapter's composed fixture) reaches
// anthropic-sdk-go through the Anthropic door as Anthropic sent it, in
// the message it accumulates from the stream (message_delta) and in the
// message not streamed: StopReason "stop_sequence", StopSequence the
// sequence. A sequence the request did not ask for is not relayed
// (end_turn, null), and openai-go through the OpenAI door reads stop, the
// only finish reason OpenAI's format has for it.
func TestSDKStopSequence(t *testing.T) {
	sse, err := os.ReadFile("../provider/anthropic/testdata/recorded/stop_sequence.composed.sse")
	if err != nil {
		t.Fatal(err)
	}
	claude := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: sse} })
	t.Setenv("LLMRELAY_TEST_CLAUDE_KEY", "sk-ant-test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "claude", Kind: "anthropic", BaseURL: claude.URL, APIKeyEnv: "LLMRELAY_TEST_CLAUDE_KEY"})
	})
	client := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0))
	stops := []string{"</answer>", "0.32a0"}
	params := func(stop []string) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{
			Model: "claude/claude-haiku-4-5", MaxTokens: 256, StopSequences: stop,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Which version is it?"))},
		}
	}
	streamed := func(t *testing.T, p anthropic.MessageNewParams) anthropic.Message {
		t.Helper()
		return accumulated(t, client.Messages.NewStreaming(ctxOf(t), p))
	}
	whole := func(t *testing.T, p anthropic.MessageNewParams) anthropic.Message {
		t.Helper()
		msg, err := client.Messages.New(ctxOf(t), p)
		if err != nil {
			t.Fatal(err)
		}
		return *msg
	}
	for _, tc := range []struct {
		name     string
		send     func(*testing.T, anthropic.MessageNewParams) anthropic.Message
		stop     []string
		reason   anthropic.StopReason
		sequence string
	}{
		{"streamed", streamed, stops, anthropic.StopReasonStopSequence, "0.32a0"},
		{"not streamed", whole, stops, anthropic.StopReasonStopSequence, "0.32a0"},
		{"streamed, a sequence the request did not ask for", streamed, []string{"</answer>"}, anthropic.StopReasonEndTurn, ""},
		{"not streamed, without stop sequences", whole, nil, anthropic.StopReasonEndTurn, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(claude.Requests())
			msg := tc.send(t, params(tc.stop))
			if msg.StopReason != tc.reason || msg.StopSequence != tc.sequence || len(msg.Content) != 1 || msg.Content[0].Text != "The version is **" {
				t.Errorf("stop_reason %q stop_sequence %q, want %q %q; message %s", msg.StopReason, msg.StopSequence, tc.reason, tc.sequence, msg.RawJSON())
			}
			reqs := claude.Requests()
			if len(reqs) != n+1 {
				t.Fatalf("the upstream got %d requests, want 1", len(reqs)-n)
			}
			var body struct {
				StopSequences []string `json:"stop_sequences"`
			}
			if err := json.Unmarshal(reqs[n].Body, &body); err != nil || !slices.Equal(body.StopSequences, tc.stop) {
				t.Errorf("the upstream got stop_sequences %q (%v), want %q", body.StopSequences, err, tc.stop)
			}
		})
	}

	t.Run("openai-go reads stop", func(t *testing.T) {
		oc := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
		c, err := oc.Chat.Completions.New(ctxOf(t), openai.ChatCompletionNewParams{
			Model:    "claude/claude-haiku-4-5",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Which version is it?")},
			Stop:     openai.ChatCompletionNewParamsStopUnion{OfStringArray: stops},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.Choices[0].FinishReason != "stop" || c.Choices[0].Message.Content != "The version is **" {
			t.Errorf("finish_reason %q content %q, want stop and the text", c.Choices[0].FinishReason, c.Choices[0].Message.Content)
		}
	})
}

// TestMockStopsAtStopSequences: the mock ends a reply at the request's
// stop sequence as a provider does, so what the Anthropic door makes of a
// matched sequence can be tried with no provider: anthropic-sdk-go reads
// the text before it, StopReason "stop_sequence" and the sequence.
func TestMockStopsAtStopSequences(t *testing.T) {
	base, _ := doors(t, nil)
	client := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0))
	m, err := client.Messages.New(ctxOf(t), anthropic.MessageNewParams{
		Model: "mock/echo", MaxTokens: 64, StopSequences: []string{"Observation:"},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Thought: look it up\nObservation: 42"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Content) != 1 || m.Content[0].Text != "Thought: look it up\n" || m.StopReason != "stop_sequence" || m.StopSequence != "Observation:" {
		t.Errorf("message %s, want the text before Observation:, stop_reason stop_sequence and the sequence", m.RawJSON())
	}
}

// TestStopSequencesOverTheBoundNameTheDoorsMember: more stop sequences
// than the target takes (Gemini 5) are refused before any attempt on the
// engine's generation.stop; each door names its own member, the one the
// client wrote: stop (Chat Completions), stop_sequences (Messages). The
// Responses API has no stop sequences: its door refuses the member as
// unknown. (The doors named the member before the bound was checked: this
// keeps them doing so for the refusal.)
func TestStopSequencesOverTheBoundNameTheDoorsMember(t *testing.T) {
	gemini := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Status: 500} })
	t.Setenv("LLMRELAY_TEST_GEMINI_KEY", "gm-test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "gem", Kind: "gemini", BaseURL: gemini.URL, APIKeyEnv: "LLMRELAY_TEST_GEMINI_KEY"})
	})
	const stops = `["a","b","c","d","e","f"]`
	for _, tc := range []struct{ name, path, body, param string }{
		{"Chat Completions", "/v1/chat/completions", `{"model":"gem/gemini-2.5-flash","stop":` + stops + `,"messages":[{"role":"user","content":"q"}]}`, "stop"},
		{"Chat Completions, streamed", "/v1/chat/completions", `{"model":"gem/gemini-2.5-flash","stream":true,"stop":` + stops + `,"messages":[{"role":"user","content":"q"}]}`, "stop"},
		{"Messages", "/v1/messages", `{"model":"gem/gemini-2.5-flash","max_tokens":9,"stop_sequences":` + stops + `,"messages":[{"role":"user","content":"q"}]}`, "stop_sequences"},
		{"Responses", "/v1/responses", `{"model":"gem/gemini-2.5-flash","stop":` + stops + `,"input":"q"}`, "stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, base, request{path: tc.path, key: sdkKey, body: tc.body, headers: map[string]string{"Anthropic-Version": "2023-06-01"}})
			v := r.json(t)
			msg, _ := path(v, "error.message").(string)
			param := path(v, "error.param")
			if tc.path == "/v1/messages" {
				param = tc.param // Anthropic's errors name the member in the message only
			}
			if r.status != 400 || path(v, "error.type") != "invalid_request_error" || param != tc.param || !strings.HasPrefix(msg, tc.param+": ") {
				t.Errorf("%d %s, want a 400 on %s", r.status, r.body, tc.param)
			}
			if tc.path != "/v1/responses" && (!strings.Contains(msg, "at most 5") || r.header.Get("Llmrelay-Attempts") != "0") {
				t.Errorf("%v %s, want the bound and no attempt", r.header, r.body)
			}
		})
	}
	if n := len(gemini.Requests()); n != 0 {
		t.Errorf("the upstream got %d requests, want none", n)
	}
}
