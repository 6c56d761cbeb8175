package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"

	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestToolResultImagesFollowInAUserMessage: Chat Completions' tool
// messages take text only, so a tool result with images goes as its text
// in its tool message, and its images, in order and each with its detail,
// in a user message after the turn's last tool message, introduced by the
// call they came from; a result without images is unchanged.
func TestToolResultImagesFollowInAUserMessage(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), pt.ToolImageRequest("gpt-4o-mini", true))
	const want = `{"model":"gpt-4o-mini","messages":[` +
		`{"role":"user","content":"Open the page"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"screenshot","arguments":"{}"}},` +
		`{"id":"call_2","type":"function","function":{"name":"title","arguments":"{}"}}]},` +
		`{"role":"tool","content":"Screen:  and .","tool_call_id":"call_1"},` +
		`{"role":"tool","content":"Home","tool_call_id":"call_2"},` +
		`{"role":"user","content":[{"type":"text","text":"Images in the result of tool call call_1:"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"high"}}]}],` +
		`"stream":true,"stream_options":{"include_usage":true}}`
	if string(got.Body) != want {
		t.Errorf("body\n %s\nwant\n %s", got.Body, want)
	}
}

// TestToolResultImagesBeforeTheNextMessage: the images' user message comes
// right after the run of tool messages, before the conversation goes on,
// one per run, each result's images after their own introduction.
func TestToolResultImagesBeforeTheNextMessage(t *testing.T) {
	req := pt.ToolImageRequest("gpt-4o-mini", false)
	req.Messages[3].Images = []provider.Image{{Data: []byte("GIF8"), MediaType: "image/gif"}}
	req.Messages[3].Parts = []provider.Part{{Kind: provider.PartText, Text: "Home"}, {Kind: provider.PartImage, Index: 0}}
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleUser, Content: "Which is newer?"})
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
	var body struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"role":"tool","content":"Screen:  and .","tool_call_id":"call_1"}`,
		`{"role":"tool","content":"Home","tool_call_id":"call_2"}`,
		`{"role":"user","content":[{"type":"text","text":"Images in the result of tool call call_1:"},` +
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
			`{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/"}},` +
			`{"type":"text","text":"Images in the result of tool call call_2:"},` +
			`{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lGOA=="}}]}`,
		`{"role":"user","content":"Which is newer?"}`,
	}
	if len(body.Messages) != 6 {
		t.Fatalf("%d messages, want 6: %s", len(body.Messages), got.Body)
	}
	for i, w := range want {
		if g := string(body.Messages[2+i]); g != w {
			t.Errorf("messages[%d]\n %s\nwant\n %s", 2+i, g, w)
		}
	}
}
