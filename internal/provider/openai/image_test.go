package openai_test

import (
	"testing"

	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestImagesInOrder: a user message's text and images go as one list
// content, in order: text parts and image_url parts, an inline image as a
// data: URL, each with its detail hint.
func TestImagesInOrder(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), pt.ImageRequest("gpt-4o-mini", true))
	const want = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[` +
		`{"type":"text","text":"Compare "},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}},` +
		`{"type":"text","text":" with "},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"high"}},` +
		`{"type":"text","text":"."}]}],` +
		`"stream":true,"stream_options":{"include_usage":true}}`
	if string(got.Body) != want {
		t.Errorf("body\n %s\nwant\n %s", got.Body, want)
	}
}
