package gemini_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestImagesInOrder: a user message's text and images go as its parts, in
// order: text parts and inlineData parts with their MIME types (Gemini
// has no detail hint: none is sent).
func TestImagesInOrder(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1beta"), pt.ImageRequest("gemini-2.5-flash", false))
	const want = `{"contents":[{"role":"user","parts":[` +
		`{"text":"Compare "},` +
		`{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},` +
		`{"text":" with "},` +
		`{"inlineData":{"mimeType":"image/jpeg","data":"/9j/"}},` +
		`{"text":"."}]}]}`
	if string(got.Body) != want {
		t.Errorf("body\n %s\nwant\n %s", got.Body, want)
	}
}

// TestImageURLRefused: Gemini takes images inline only, so a request with
// an image at a URL is refused before anything is sent, with a field
// error naming the image's URL and the provider, never sent without it.
func TestImageURLRefused(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	p := newProvider(t, u.URL+"/v1beta")
	req := pt.ImageRequest("gemini-2.5-flash", true)
	err := p.(provider.RequestValidator).ValidateRequest(req)
	var fe *provider.FieldError
	if !errors.As(err, &fe) || fe.Field != "messages[0].parts[3].image.url" || !strings.Contains(fe.Description, "gemini") {
		t.Fatalf("ValidateRequest = %v, want a field error on messages[0].parts[3].image.url naming gemini", err)
	}
	if _, err := p.Stream(t.Context(), req); !errors.As(err, &fe) {
		t.Fatalf("Stream = %v, want the field error", err)
	}
	if n := len(u.Requests()); n != 0 {
		t.Errorf("%d requests reached the upstream, want none", n)
	}
}
