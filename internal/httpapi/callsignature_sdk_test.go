package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// geminiToolLoop starts a loopback Gemini upstream whose odd requests (the
// first, the third, ...) get the recorded Gemini 3 Pro turn that calls a
// tool with a thoughtSignature on its functionCall part, and whose even
// ones a plain text turn; it returns the upstream and that signature.
func geminiToolLoop(t *testing.T) (*pt.Upstream, string) {
	t.Helper()
	turn1, text, signature := geminiCallTurn(t)
	return pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
		if n%2 == 0 {
			return pt.Reply{Body: turn1}
		}
		return pt.Reply{Body: text}
	}), signature
}

// geminiCallTurn returns the recorded Gemini 3 Pro turn that calls a tool
// with a thoughtSignature on its functionCall part, a plain text turn, and
// that signature.
func geminiCallTurn(t *testing.T) (turn1, text []byte, signature string) {
	t.Helper()
	turn1, err := os.ReadFile("../provider/gemini/testdata/recorded/gemini3pro_function_call_signature_turn1.sse")
	if err != nil {
		t.Fatal(err)
	}
	if text, err = os.ReadFile("../provider/gemini/testdata/text.sse"); err != nil {
		t.Fatal(err)
	}
	var first struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					ThoughtSignature string `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(bytes.TrimPrefix(bytes.SplitN(turn1, []byte("\n"), 2)[0], []byte("data: ")), &first); err != nil {
		t.Fatal(err)
	}
	if signature = first.Candidates[0].Content.Parts[0].ThoughtSignature; signature == "" {
		t.Fatal("the recorded turn has no thoughtSignature")
	}
	return turn1, text, signature
}

// extraSignature returns the thought_signature of a tool call's
// extra_content, as Google's OpenAI-compatible API writes it.
func extraSignature(t *testing.T, raw string) string {
	t.Helper()
	var tc struct {
		ExtraContent struct {
			Google struct {
				ThoughtSignature string `json:"thought_signature"`
			} `json:"google"`
		} `json:"extra_content"`
	}
	if err := json.Unmarshal([]byte(raw), &tc); err != nil {
		t.Fatalf("tool call %s: %v", raw, err)
	}
	return tc.ExtraContent.Google.ThoughtSignature
}

// TestOpenAIChatSDKGeminiCallSignature: an agent loop on a Gemini 3 model
// through the Chat Completions door. Gemini 3 refuses (400) a turn whose
// function call comes back without the thoughtSignature it was given;
// the door carries it where Google's own OpenAI-compatible API does,
// tool_calls[i].extra_content.google.thought_signature: on the call in a
// reply, on the call's first chunk in a stream. The application sends
// the assistant message back as it came, and the next upstream request
// has the signature on its functionCall part, exactly as it streamed.
//
// openai-go's ChatCompletionMessage.ToParam (and its stream accumulator)
// keep no extra members, so a Go application sends the message back as
// raw JSON (param.Override), which is what the npm SDK sends when an
// application pushes choices[0].message, or its stream helper's
// finalMessage(), onto its messages: the SDK's types pass extra members
// through.
func TestOpenAIChatSDKGeminiCallSignature(t *testing.T) {
	upstream, signature := geminiToolLoop(t)
	t.Setenv("LLMRELAY_TEST_GEMINI_KEY", "test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "gem", Kind: "gemini", BaseURL: upstream.URL, APIKeyEnv: "LLMRELAY_TEST_GEMINI_KEY"})
	})
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name: "get_country", Parameters: openai.FunctionParameters{"type": "object"}})}
	ask := openai.UserMessage("What is the capital of the user country? Call the tool")

	for i, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "not streamed", true: "streamed"}[streamed], func(t *testing.T) {
			params := openai.ChatCompletionNewParams{Model: "gem/gemini-3-pro-preview", Tools: tools,
				Messages: []openai.ChatCompletionMessageParamUnion{ask}}
			// back is the assistant message as the application sends it
			// back; callID its call's id.
			var back json.RawMessage
			var callID string
			if streamed {
				stream := client.Chat.Completions.NewStreaming(ctxOf(t), params)
				var acc openai.ChatCompletionAccumulator
				var extra json.RawMessage
				for stream.Next() {
					chunk := stream.Current()
					acc.AddChunk(chunk)
					for _, c := range chunk.Choices {
						for _, tc := range c.Delta.ToolCalls {
							if tc.ID == "" {
								continue
							}
							// The call's first chunk, with its id.
							if got := extraSignature(t, tc.RawJSON()); got != signature {
								t.Errorf("the call's first chunk %s has thought_signature %q, want the one Gemini sent (%d bytes)", tc.RawJSON(), got, len(signature))
							}
							extra = json.RawMessage(tc.JSON.ExtraFields["extra_content"].Raw())
						}
					}
				}
				if err := stream.Err(); err != nil {
					t.Fatal(err)
				}
				calls := acc.Choices[0].Message.ToolCalls
				if len(calls) != 1 {
					t.Fatalf("the stream made %d tool calls, want 1", len(calls))
				}
				callID = calls[0].ID
				// As the npm SDK's stream helper accumulates a call: its
				// first chunk's members, the arguments joined.
				back, _ = json.Marshal(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
					"id": calls[0].ID, "type": "function", "extra_content": extra,
					"function": map[string]any{"name": calls[0].Function.Name, "arguments": calls[0].Function.Arguments},
				}}})
			} else {
				r, err := client.Chat.Completions.New(ctxOf(t), params)
				if err != nil {
					t.Fatal(err)
				}
				msg := r.Choices[0].Message
				if len(msg.ToolCalls) != 1 {
					t.Fatalf("message %s, want one tool call", msg.RawJSON())
				}
				if got := extraSignature(t, msg.ToolCalls[0].RawJSON()); got != signature {
					t.Errorf("the reply's call %s has thought_signature %q, want the one Gemini sent (%d bytes)", msg.ToolCalls[0].RawJSON(), got, len(signature))
				}
				callID, back = msg.ToolCalls[0].ID, json.RawMessage(msg.RawJSON())
			}
			params.Messages = append(params.Messages,
				param.Override[openai.ChatCompletionMessageParamUnion](back),
				openai.ToolMessage(`{"country":"France"}`, callID))
			if _, err := client.Chat.Completions.New(ctxOf(t), params); err != nil {
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

// wantCallSignatureBack checks body, the Gemini request of a tool loop's
// second turn (the user's question, the model's function call, its
// response), for the function call sent back with signature, the
// thoughtSignature it came with.
func wantCallSignatureBack(t *testing.T, body []byte, signature string) {
	t.Helper()
	var next struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionCall     json.RawMessage `json:"functionCall"`
				ThoughtSignature string          `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &next); err != nil {
		t.Fatal(err)
	}
	if len(next.Contents) != 3 || next.Contents[1].Role != "model" || len(next.Contents[1].Parts) != 1 ||
		next.Contents[1].Parts[0].FunctionCall == nil {
		t.Fatalf("next request's contents %s", body)
	}
	if got := next.Contents[1].Parts[0].ThoughtSignature; got != signature {
		t.Errorf("the function call went back with thoughtSignature %q, want the one it came with (%d bytes)", got, len(signature))
	}
}

// TestAnthropicSDKGeminiCallSignature: an agent loop on a Gemini 3 model
// through the Anthropic door, as anthropic-sdk-go's applications write it:
// append the reply's ToParam() (a stream's accumulated message's) and the
// tool results, ask again. A tool_use block has no member for the
// thoughtSignature Gemini 3 requires back, so the door puts it in a
// thinking block before the call, which the SDK sends back unchanged, and
// the next upstream request has it on its functionCall part, exactly as it
// streamed. The same messages sent to an anthropic upstream carry nothing
// new: the block is llmrelay's, not reasoning.
func TestAnthropicSDKGeminiCallSignature(t *testing.T) {
	gemini, signature := geminiToolLoop(t)
	claudeText, err := os.ReadFile("../provider/anthropic/testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	claude := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: claudeText} })
	t.Setenv("LLMRELAY_TEST_GEMINI_KEY", "test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers,
			provider.Config{Name: "gem", Kind: "gemini", BaseURL: gemini.URL, APIKeyEnv: "LLMRELAY_TEST_GEMINI_KEY"},
			provider.Config{Name: "claude", Kind: "anthropic", BaseURL: claude.URL, APIKeyEnv: "LLMRELAY_TEST_GEMINI_KEY"})
	})
	client := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0))
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_country", InputSchema: anthropic.ToolInputSchemaParam{}}}}
	ask := anthropic.NewUserMessage(anthropic.NewTextBlock("What is the capital of the user country? Call the tool"))

	for i, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "not streamed", true: "streamed"}[streamed], func(t *testing.T) {
			params := anthropic.MessageNewParams{Model: "gem/gemini-3-pro-preview", MaxTokens: 1024, Tools: tools,
				Messages: []anthropic.MessageParam{ask}}
			var reply anthropic.Message
			if streamed {
				reply = accumulated(t, client.Messages.NewStreaming(ctxOf(t), params))
			} else {
				r, err := client.Messages.New(ctxOf(t), params)
				if err != nil {
					t.Fatal(err)
				}
				reply = *r
			}
			// The call's signature in a thinking block without text before
			// the call.
			if len(reply.Content) != 2 || reply.Content[0].Type != "thinking" || reply.Content[0].Thinking != "" ||
				!strings.HasPrefix(reply.Content[0].Signature, "llmrelay/call/") || !strings.HasSuffix(reply.Content[0].Signature, "/"+signature) ||
				reply.Content[1].Type != "tool_use" || reply.Content[1].Name != "get_country" || reply.StopReason != "tool_use" {
				t.Fatalf("reply %s, want a thinking block with the call's signature (%d bytes) and the tool_use", reply.RawJSON(), len(signature))
			}
			callID := reply.Content[1].ID
			params.Messages = append(params.Messages, reply.ToParam(),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock(callID, `{"country":"France"}`, false)))
			if _, err := client.Messages.New(ctxOf(t), params); err != nil {
				t.Fatal(err)
			}
			reqs := gemini.Requests()
			if len(reqs) != 2*(i+1) {
				t.Fatalf("the upstream got %d requests", len(reqs))
			}
			wantCallSignatureBack(t, reqs[len(reqs)-1].Body, signature)

			// The same conversation to an anthropic upstream: the tool_use
			// alone, no thinking block.
			params.Model = "claude/claude-sonnet-4-5"
			if _, err := client.Messages.New(ctxOf(t), params); err != nil {
				t.Fatal(err)
			}
			claudeReqs := claude.Requests()
			var body struct {
				Messages json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(claudeReqs[len(claudeReqs)-1].Body, &body); err != nil {
				t.Fatal(err)
			}
			want := `[{"role":"user","content":[{"type":"text","text":"What is the capital of the user country? Call the tool"}]},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"` + callID + `","name":"get_country","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + callID + `","content":"{\"country\":\"France\"}"}]}]`
			if string(body.Messages) != want {
				t.Errorf("anthropic upstream messages\n %s\nwant\n %s", body.Messages, want)
			}
		})
	}
}
