package openai_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// streamDetails rebuilds, from a recorded OpenRouter stream and
// independently of the adapter, its reasoning_details as OpenRouter
// documents them: the fragments of each index merged (text, summary and
// data concatenated, the other fields as given), in index order, each
// with only the fields that have a value.
func streamDetails(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/recorded/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var details []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ReasoningDetails []map[string]any `json:"reasoning_details"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			for _, d := range ch.Delta.ReasoningDetails {
				i := int(d["index"].(float64))
				for len(details) <= i {
					details = append(details, map[string]any{"index": float64(len(details))})
				}
				for k, v := range d {
					s, isString := v.(string)
					switch {
					case !isString || s == "":
					case k == "text" || k == "summary" || k == "data":
						prev, _ := details[i][k].(string)
						details[i][k] = prev + s
					default:
						details[i][k] = s
					}
				}
			}
		}
	}
	return details
}

// TestReasoningDetailsRoundTrip: OpenRouter's reasoning_details of a
// recorded stream (Claude's readable thinking with its signature; o3's
// encrypted reasoning with its id) reach the reply as reasoning blocks and
// go back in the next request's assistant message as OpenRouter streamed
// them, without the same text again under `reasoning`.
func TestReasoningDetailsRoundTrip(t *testing.T) {
	for _, file := range []string{"openrouter_claude_reasoning_processing_comments.sse", "openrouter_o3_reasoning_encrypted.sse"} {
		t.Run(strings.TrimSuffix(file, ".sse"), func(t *testing.T) {
			reply, _ := pt.ReplayRecorded(t, file, newProvider, pt.NewRequest("recorded"))
			if reply.Err != nil {
				t.Fatal(reply.Err)
			}
			want := streamDetails(t, file)
			if len(want) == 0 || len(reply.Reasoning) != len(want) {
				t.Fatalf("reasoning %+v; the stream has %d details", reply.Reasoning, len(want))
			}
			req := pt.NewRequest("recorded")
			req.Messages = append(req.Messages,
				provider.Message{Role: provider.RoleAssistant, Content: reply.Text, Reasoning: reply.Reasoning, Parts: reply.Parts},
				provider.Message{Role: provider.RoleUser, Content: "And then?"})
			u := pt.Replay(t, pt.Fixture{File: "text.sse"}.Reply(t))
			got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
			var body struct {
				Messages []map[string]any `json:"messages"`
			}
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatal(err)
			}
			assistant := body.Messages[2]
			var sent []map[string]any
			for _, d := range assistant["reasoning_details"].([]any) {
				sent = append(sent, d.(map[string]any))
			}
			if !reflect.DeepEqual(sent, want) {
				t.Errorf("reasoning_details sent:\n %v\nstreamed:\n %v", sent, want)
			}
			if _, dup := assistant["reasoning"]; dup {
				t.Error("the reasoning went back twice, also under `reasoning`")
			}
		})
	}
}
