package servertools

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBound: a result is cut to at most the limit, on a character
// boundary, with the note to the model when the note fits.
func TestBound(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes
	tests := []struct {
		name     string
		s        string
		limit    int
		wantNote bool
	}{
		{name: "fits", s: "short", limit: 10},
		{name: "cut with the note", s: long, limit: 1024, wantNote: true},
		{name: "too small for the note: cut alone", s: long, limit: 21},
		{name: "nothing left", s: long, limit: 0},
		{name: "below nothing", s: long, limit: -5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Bound(tt.s, tt.limit)
			if len(tt.s) <= tt.limit {
				if got != tt.s {
					t.Fatalf("Bound changed a result that fits: %q", got)
				}
				return
			}
			if len(got) > max(tt.limit, 0) || !utf8.ValidString(got) {
				t.Fatalf("Bound(%d) = %d bytes, valid UTF-8 %v", tt.limit, len(got), utf8.ValidString(got))
			}
			if hasNote := strings.Contains(got, "[llmrelay: the tool's result was cut here"); hasNote != tt.wantNote {
				t.Errorf("note %v, want %v: %q", hasNote, tt.wantNote, got)
			}
		})
	}
}

// png is the smallest PNG header http.DetectContentType knows as one.
var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// TestResultOfImages: an MCP image the model may be sent becomes an image
// part in its place, the text parts concatenated are the content (today's
// lines without the image's); any other image keeps its line of text.
func TestResultOfImages(t *testing.T) {
	text := func(s string) Part { return Part{Text: s} }
	image := func(mt string) Part { return Part{Image: &Image{MediaType: mt, Data: png}} }
	tests := []struct {
		name    string
		content []mcp.Content
		want    Result
	}{
		{name: "text, image, text",
			content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.ImageContent{MIMEType: "image/png", Data: png}, &mcp.TextContent{Text: "b"}},
			want:    Result{Content: "a\nb", Parts: []Part{text("a"), image("image/png"), text("\nb")}}},
		{name: "image alone",
			content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: png}},
			want:    Result{Content: "", Parts: []Part{image("image/png")}}},
		{name: "two images, then text; the media type's case and spaces do not matter",
			content: []mcp.Content{&mcp.ImageContent{MIMEType: " Image/PNG", Data: png}, &mcp.ImageContent{MIMEType: "image/png", Data: png}, &mcp.TextContent{Text: "b"}},
			want:    Result{Content: "b", Parts: []Part{image("image/png"), image("image/png"), text("b")}}},
		{name: "a media type a request's image may not have: described",
			content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.ImageContent{MIMEType: "image/svg+xml", Data: []byte("<svg/>")}},
			want:    Result{Content: "a\n[image: image/svg+xml, 6 bytes, not shown]"}},
		{name: "bytes that are not of the type said: described",
			content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/jpeg", Data: png}},
			want:    Result{Content: "[image: image/jpeg, 16 bytes, not shown]"}},
		{name: "no bytes: described",
			content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png"}},
			want:    Result{Content: "[image: image/png, 0 bytes, not shown]"}},
		{name: "audio between text and image keeps its line",
			content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")}, &mcp.ImageContent{MIMEType: "image/png", Data: png}},
			want:    Result{Content: "[audio: audio/wav, 4 bytes, not shown]", Parts: []Part{text("[audio: audio/wav, 4 bytes, not shown]"), image("image/png")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resultOf(&mcp.CallToolResult{Content: tt.content})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("resultOf:\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

// TestResultCut: a result with images is cut where the limit falls, in
// its text or before an image that does not fit whole (Cut), or in its
// text alone, its images free (max_tool_result_bytes); nothing after the
// cut is kept, and the content stays the text parts concatenated.
func TestResultCut(t *testing.T) {
	img := Part{Image: &Image{MediaType: "image/png", Data: bytes.Repeat([]byte{1}, 100)}}
	long, tail := strings.Repeat("x", 200), strings.Repeat("y", 100)
	mk := func() Result { return Result{Content: long + tail, Parts: []Part{{Text: long}, img, {Text: tail}}} }
	tests := []struct {
		name        string
		limit       int
		images      bool
		wantCut     bool
		wantImages  int
		wantContent string
	}{
		{name: "fits", limit: 400, images: true, wantContent: long + tail, wantImages: 1},
		{name: "the image does not fit: cut before it", limit: 290, images: true, wantCut: true, wantContent: long + cutNote(290, 400)},
		{name: "cut in the text before the image", limit: 150, images: true, wantCut: true, wantContent: long[:150-len(cutNote(150, 400))] + cutNote(150, 400)},
		{name: "nothing left", limit: 0, images: true, wantCut: true, wantContent: ""},
		{name: "text alone: the image is free", limit: 300, images: false, wantContent: long + tail, wantImages: 1},
		{name: "text alone: cut after the image", limit: 290, images: false, wantCut: true, wantImages: 1,
			wantContent: long + tail[:290-len(cutNote(290, 300))-200] + cutNote(290, 300)},
		{name: "text alone: cut before the image leaves it out", limit: 150, images: false, wantCut: true,
			wantContent: long[:150-len(cutNote(150, 300))] + cutNote(150, 300)},
		{name: "text alone, no bound", limit: 0, images: false, wantContent: long + tail, wantImages: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mk()
			cut := r.cut(tt.limit, tt.images)
			images := 0
			var text strings.Builder
			for _, p := range r.Parts {
				if p.Image != nil {
					images++
				} else {
					text.WriteString(p.Text)
				}
			}
			if cut != tt.wantCut || images != tt.wantImages || r.Content != tt.wantContent || (r.Parts != nil && text.String() != r.Content) {
				t.Errorf("cut %v, %d images, content %q (parts' text %q); want cut %v, %d images, %q", cut, images, r.Content, text.String(), tt.wantCut, tt.wantImages, tt.wantContent)
			}
			if tt.images && r.Size() > max(tt.limit, 0) {
				t.Errorf("size %d after Cut(%d)", r.Size(), tt.limit)
			}
		})
	}
}

// TestResultOfResources: an embedded resource's text reaches the model,
// whether the server sent it as text or as the bytes of a text/* blob
// (server-everything's get-resource-reference does); any other resource,
// and a link to one, is a line saying what it is.
func TestResultOfResources(t *testing.T) {
	embedded := func(rc *mcp.ResourceContents) mcp.Content { return &mcp.EmbeddedResource{Resource: rc} }
	tests := []struct {
		name    string
		content []mcp.Content
		want    string
	}{
		{name: "text",
			content: []mcp.Content{embedded(&mcp.ResourceContents{URI: "demo://t/1", MIMEType: "text/plain", Text: "Resource 1"})},
			want:    "[embedded resource: demo://t/1, text/plain]\nResource 1"},
		{name: "a text/plain blob: its text",
			content: []mcp.Content{embedded(&mcp.ResourceContents{URI: "demo://b/1", MIMEType: "text/plain", Blob: []byte("Resource 1: a blob")})},
			want:    "[embedded resource: demo://b/1, text/plain]\nResource 1: a blob"},
		{name: "a text blob with a charset: its text",
			content: []mcp.Content{embedded(&mcp.ResourceContents{URI: "demo://b/2", MIMEType: "Text/Markdown; charset=utf-8", Blob: []byte("# Title")})},
			want:    "[embedded resource: demo://b/2, Text/Markdown; charset=utf-8]\n# Title"},
		{name: "a text blob that is not UTF-8: described",
			content: []mcp.Content{embedded(&mcp.ResourceContents{URI: "demo://b/3", MIMEType: "text/plain", Blob: []byte{'a', 0xff}})},
			want:    "[embedded resource: demo://b/3, text/plain, 2 bytes, not shown]"},
		{name: "a binary blob: described",
			content: []mcp.Content{embedded(&mcp.ResourceContents{URI: "demo://b/4", MIMEType: "application/gzip", Blob: []byte("abc")})},
			want:    "[embedded resource: demo://b/4, application/gzip, 3 bytes, not shown]"},
		{name: "a link",
			content: []mcp.Content{&mcp.TextContent{Text: "Here:"}, &mcp.ResourceLink{URI: "demo://t/2", Name: "Text 2", MIMEType: "text/plain", Description: "a resource"}},
			want:    "Here:\n[resource link: demo://t/2 (Text 2), text/plain: a resource]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resultOf(&mcp.CallToolResult{Content: tt.content})
			if got.Content != tt.want || got.Parts != nil {
				t.Errorf("result %q (parts %v), want %q", got.Content, got.Parts, tt.want)
			}
		})
	}
}

// TestResultOfStructuredContent: a tool's structured content reaches the
// model once: alone when the result has no text, not again when a text
// part (or the text parts together) is the same JSON, as MCP asks tools
// to repeat it, and after the text, said to be the structured content,
// when the text says something else.
func TestResultOfStructuredContent(t *testing.T) {
	weather := map[string]any{"temperature": 33, "conditions": "Cloudy"}
	const json = `{"conditions":"Cloudy","temperature":33}`
	text := func(s string) mcp.Content { return &mcp.TextContent{Text: s} }
	tests := []struct {
		name    string
		content []mcp.Content
		want    string
	}{
		{name: "no text: the JSON", want: json},
		{name: "no text but audio: the JSON first",
			content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")}},
			want:    json + "\n[audio: audio/wav, 4 bytes, not shown]"},
		{name: "the text is the JSON: once",
			content: []mcp.Content{text(json)}, want: json},
		{name: "the text is the JSON, spaced and in another order: once, as the text",
			content: []mcp.Content{text("{\n  \"temperature\": 33.0,\n  \"conditions\": \"Cloudy\"\n}")},
			want:    "{\n  \"temperature\": 33.0,\n  \"conditions\": \"Cloudy\"\n}"},
		{name: "a summary, then the JSON as text: once",
			content: []mcp.Content{text("It is cloudy."), text(json)}, want: "It is cloudy.\n" + json},
		{name: "the JSON split over two text parts: once",
			content: []mcp.Content{text(`{"conditions":"Cloudy",`), text(`"temperature":33}`)},
			want:    `{"conditions":"Cloudy",` + "\n" + `"temperature":33}`},
		{name: "other text: the text, then the structured content",
			content: []mcp.Content{text("It is cloudy in New York.")},
			want:    "It is cloudy in New York.\n[structured content]\n" + json},
		{name: "other JSON: both",
			content: []mcp.Content{text(`{"conditions":"Sunny","temperature":33}`)},
			want:    `{"conditions":"Sunny","temperature":33}` + "\n[structured content]\n" + json},
		{name: "an embedded resource's text is not the JSON: both",
			content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://w", MIMEType: "text/plain", Text: "forecast"}}},
			want:    "[embedded resource: demo://w, text/plain]\nforecast\n[structured content]\n" + json},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resultOf(&mcp.CallToolResult{Content: tt.content, StructuredContent: weather})
			if got.Content != tt.want || got.Parts != nil {
				t.Errorf("result %q (parts %v), want %q", got.Content, got.Parts, tt.want)
			}
		})
	}
}

// TestResultOfAudience: a part whose annotations' audience leaves the
// assistant out is the user's: the model is not sent it, but is told it
// was there (and, when it was the whole result, that the tool succeeded
// or failed); the client gets it in UserContent. A part for both, for the
// assistant, or without an audience is the model's.
func TestResultOfAudience(t *testing.T) {
	to := func(roles ...mcp.Role) *mcp.Annotations { return &mcp.Annotations{Audience: roles, Priority: 0.5} }
	text := func(s string, a *mcp.Annotations) mcp.Content { return &mcp.TextContent{Text: s, Annotations: a} }
	tests := []struct {
		name     string
		result   mcp.CallToolResult
		want     string
		wantUser string
		images   int
	}{
		{name: "for the user only, the whole result",
			result:   mcp.CallToolResult{Content: []mcp.Content{text("Operation completed successfully", to("user"))}},
			want:     "[llmrelay: the tool succeeded; its result, 1 content part, is meant for the user only: it went to the user, not to the model]",
			wantUser: "Operation completed successfully"},
		{name: "for the user only, a failure",
			result: mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("Could not save", to("user")),
				&mcp.ImageContent{MIMEType: "image/png", Data: png, Annotations: to("user")}}},
			want:     "[llmrelay: the tool failed; its result, 2 content parts, is meant for the user only: it went to the user, not to the model]",
			wantUser: "Could not save\n[image: image/png, 16 bytes, not shown]"},
		{name: "for the assistant, for both, and without an audience: the model's",
			result: mcp.CallToolResult{Content: []mcp.Content{text("a", to("assistant")), text("b", to("user", "assistant")), text("c", &mcp.Annotations{Priority: 1}), text("d", nil)}},
			want:   "a\nb\nc\nd"},
		{name: "mixed: the model is told of the user's part",
			result: mcp.CallToolResult{Content: []mcp.Content{text("Debug: cache hit", to("assistant")), text("Saved.", to("user")),
				&mcp.ImageContent{MIMEType: "image/png", Data: png, Annotations: to("user", "assistant")}}},
			want:     "Debug: cache hit\n[llmrelay: 1 content part more of the result, meant for the user only, went to the user, not to the model]",
			wantUser: "Saved.", images: 1},
		{name: "the user's audio, link and resource",
			result: mcp.CallToolResult{Content: []mcp.Content{
				&mcp.AudioContent{MIMEType: "audio/mpeg", Data: []byte("ID3"), Annotations: to("user")},
				&mcp.ResourceLink{URI: "file:///r.txt", Annotations: to("user")},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///n.txt", MIMEType: "text/plain", Text: "note"}, Annotations: to("user")}}},
			want:     "[llmrelay: the tool succeeded; its result, 3 content parts, is meant for the user only: it went to the user, not to the model]",
			wantUser: "[audio: audio/mpeg, 3 bytes, not shown]\n[resource link: file:///r.txt]\n[embedded resource: file:///n.txt, text/plain]\nnote"},
		{name: "the user's text and the structured content: the model gets the structured content",
			result:   mcp.CallToolResult{Content: []mcp.Content{text(`{"n":1}`, to("user"))}, StructuredContent: map[string]any{"n": 1}},
			want:     `{"n":1}` + "\n[llmrelay: 1 content part more of the result, meant for the user only, went to the user, not to the model]",
			wantUser: `{"n":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resultOf(&tt.result)
			images := 0
			for _, p := range got.Parts {
				if p.Image != nil {
					images++
				}
			}
			if got.Content != tt.want || got.UserContent != tt.wantUser || images != tt.images {
				t.Errorf("content %q, for the user %q, %d images;\nwant %q, %q, %d images", got.Content, got.UserContent, images, tt.want, tt.wantUser, tt.images)
			}
		})
	}
}
