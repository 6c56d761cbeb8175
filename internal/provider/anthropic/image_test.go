package anthropic_test

import (
	"testing"

	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestImagesInOrder: a user message's text and images go as its content
// blocks, in order: text blocks and image blocks, an inline image as a
// base64 source with its media type, a URL as a url source (Anthropic has
// no detail hint: none is sent).
func TestImagesInOrder(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), pt.ImageRequest("claude-sonnet-4-5", true))
	const want = `{"model":"claude-sonnet-4-5","max_tokens":4096,"messages":[{"role":"user","content":[` +
		`{"type":"text","text":"Compare "},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
		`{"type":"text","text":" with "},` +
		`{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},` +
		`{"type":"text","text":"."}]}],` +
		`"stream":true}`
	if string(got.Body) != want {
		t.Errorf("body\n %s\nwant\n %s", got.Body, want)
	}
}
