package mock

import (
	"context"
	"testing"

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
