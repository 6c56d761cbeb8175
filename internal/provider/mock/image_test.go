package mock

import (
	"context"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestEchoShowsImages: echo replies with the last user message's text and
// its images in their places, each described (ImageText).
func TestEchoShowsImages(t *testing.T) {
	r := pt.Collect(context.Background(), New(), pt.ImageRequest(ModelEcho, true))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if want := "Compare [image image/png 8 bytes] with [image https://example.com/cat.jpg]."; r.Text != want {
		t.Errorf("echo %q, want %q", r.Text, want)
	}
}

// TestScriptShowsToolResultImages: past its script, the model answers
// from the tool results, their images in their places as echo shows a
// user's.
func TestScriptShowsToolResultImages(t *testing.T) {
	req := pt.ToolImageRequest(ModelEcho, true)
	req.Tools = []provider.Tool{{Name: "screenshot"}, {Name: "title"}}
	req.Options = map[string]any{"script": []any{map[string]any{"tool_calls": []any{map[string]any{"name": "screenshot"}}}}}
	r := pt.Collect(context.Background(), New(), req)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if want := "Screen: [image image/png 8 bytes] and [image https://example.com/cat.jpg].\nHome"; r.Text != want {
		t.Errorf("answer %q, want %q", r.Text, want)
	}
}
