package anthropic_test

import (
	"testing"

	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestToolResultImagesInOrder: a tool result with images goes as a
// tool_result block whose content is its text and image blocks, in order
// (an inline image as a base64 source, a URL as a url source); a result
// without images keeps its string content. Both results are one user
// turn, as the API wants the answers to one turn's tool calls.
func TestToolResultImagesInOrder(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), pt.ToolImageRequest("claude-sonnet-4-5", true))
	const want = `{"model":"claude-sonnet-4-5","max_tokens":4096,"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Open the page"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"screenshot","input":{}},{"type":"tool_use","id":"call_2","name":"title","input":{}}]},` +
		`{"role":"user","content":[` +
		`{"type":"tool_result","tool_use_id":"call_1","content":[` +
		`{"type":"text","text":"Screen: "},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
		`{"type":"text","text":" and "},` +
		`{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},` +
		`{"type":"text","text":"."}]},` +
		`{"type":"tool_result","tool_use_id":"call_2","content":"Home"}]}],` +
		`"stream":true}`
	if string(got.Body) != want {
		t.Errorf("body\n %s\nwant\n %s", got.Body, want)
	}
}
