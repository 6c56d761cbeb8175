package engine

import (
	"errors"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/spend"
)

// imageMessage is a user message "Compare [png] with [url]." of parts.
func imageMessage(png []byte) *llmrelayv1.Message {
	text := func(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Part: &llmrelayv1.Part_Text{Text: s}} }
	img := func(i *llmrelayv1.Image) *llmrelayv1.Part {
		return &llmrelayv1.Part{Part: &llmrelayv1.Part_Image{Image: i}}
	}
	return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: "Compare  with .", Parts: []*llmrelayv1.Part{
		text("Compare "),
		img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: png}, MediaType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW}),
		text(" with "),
		img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/cat.jpg"}, Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO}),
		text("."),
	}}
}

// TestImagesReachTheAdapters: a user message's images become the provider
// message's Images, placed among its text by its parts, in order.
func TestImagesReachTheAdapters(t *testing.T) {
	req := &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{imageMessage([]byte("png"))}}
	out, err := providerRequest(req, "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := out.Messages[0]
	wantParts := []provider.Part{{Kind: provider.PartText, Text: "Compare "}, {Kind: provider.PartImage, Index: 0},
		{Kind: provider.PartText, Text: " with "}, {Kind: provider.PartImage, Index: 1}, {Kind: provider.PartText, Text: "."}}
	wantImages := []provider.Image{{Data: []byte("png"), MediaType: "image/png", Detail: "low"}, {URL: "https://example.com/cat.jpg", Detail: "auto"}}
	if !reflect.DeepEqual(m.Parts, wantParts) || !reflect.DeepEqual(m.Images, wantImages) || m.Content != "Compare  with ." {
		t.Errorf("converted parts %+v images %+v content %q", m.Parts, m.Images, m.Content)
	}

	t.Run("each detail goes by OpenAI's name for it", func(t *testing.T) {
		for d, want := range map[llmrelayv1.ImageDetail]string{
			llmrelayv1.ImageDetail_IMAGE_DETAIL_UNSPECIFIED: "",
			llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW:         "low",
			llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH:        "high",
			llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO:        "auto",
			llmrelayv1.ImageDetail_IMAGE_DETAIL_ORIGINAL:    "original",
		} {
			msg := imageMessage([]byte("png"))
			msg.Parts[1].GetImage().Detail = d
			out, err := providerRequest(&llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{msg}}, "m", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Messages[0].Images[0].Detail; got != want {
				t.Errorf("%s: Detail %q, want %q", d, got, want)
			}
		}
	})

	t.Run("text parts must add up to content", func(t *testing.T) {
		msg := imageMessage([]byte("png"))
		msg.Content = "Compare with."
		_, err := providerRequest(&llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{msg}}, "m", nil)
		var fe *provider.FieldError
		if !errors.As(err, &fe) || fe.Field != "messages[0].parts[2].text" {
			t.Errorf("error %v, want a field error on messages[0].parts[2].text", err)
		}
	})
}

// TestImagesAreEstimatedAtAFixedCount: an estimate counts an image as
// spend.ImageTokens, not by its bytes: a 4 MiB image reserves what a tiny
// one does.
func TestImagesAreEstimatedAtAFixedCount(t *testing.T) {
	small := &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{imageMessage([]byte("p"))}}
	large := &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{imageMessage(make([]byte, 4<<20))}}
	s, l := estimatedBytes(small), estimatedBytes(large)
	// The large one's length prefixes (of its data, image, part and
	// message) are a few bytes longer.
	if l-s > 32 {
		t.Errorf("estimated bytes: a 4 MiB image %d, a 1-byte one %d: want (nearly) the same", l, s)
	}
	if min := int64(2 * spend.ImageTokens * spend.InputBytesPerToken); s < min {
		t.Errorf("estimated bytes %d, want at least %d for two images", s, min)
	}
	text := &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}}}
	if got, want := estimatedBytes(text), int64(proto.Size(text)); got != want {
		t.Errorf("a text request: %d bytes, want its encoded size %d", got, want)
	}
}

// toolResultMessage is the result of tool call call_1, a screenshot
// between its text: "Clicked. [png] Page: Home".
func toolResultMessage(png []byte) *llmrelayv1.Message {
	return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: "call_1", Content: "Clicked. Page: Home", Parts: []*llmrelayv1.Part{
		{Part: &llmrelayv1.Part_Text{Text: "Clicked. "}},
		{Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: png}, MediaType: "image/png"}}},
		{Part: &llmrelayv1.Part_Text{Text: "Page: Home"}},
	}}
}

// TestToolResultImagesReachTheAdapters: a tool result's images become the
// provider message's Images, placed among its text by its parts, as a
// user message's do; an image in an assistant message stays refused.
func TestToolResultImagesReachTheAdapters(t *testing.T) {
	req := &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_USER, Content: "click"},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, ToolCalls: []*llmrelayv1.ToolCall{{Id: "call_1", Name: "click", Arguments: "{}"}}},
		toolResultMessage([]byte("png")),
	}}
	out, err := providerRequest(req, "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := out.Messages[2]
	wantParts := []provider.Part{{Kind: provider.PartText, Text: "Clicked. "}, {Kind: provider.PartImage, Index: 0}, {Kind: provider.PartText, Text: "Page: Home"}}
	wantImages := []provider.Image{{Data: []byte("png"), MediaType: "image/png"}}
	if m.Role != provider.RoleTool || m.ToolCallID != "call_1" || m.Content != "Clicked. Page: Home" ||
		!reflect.DeepEqual(m.Parts, wantParts) || !reflect.DeepEqual(m.Images, wantImages) {
		t.Errorf("converted %+v, want the tool result with parts %+v and images %+v", m, wantParts, wantImages)
	}

	t.Run("text parts must add up to content", func(t *testing.T) {
		msg := toolResultMessage([]byte("png"))
		msg.Content = "Clicked."
		_, err := providerRequest(&llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{req.Messages[0], req.Messages[1], msg}}, "m", nil)
		var fe *provider.FieldError
		if !errors.As(err, &fe) || fe.Field != "messages[2].parts[0].text" {
			t.Errorf("error %v, want a field error on messages[2].parts[0].text", err)
		}
	})
	t.Run("not in an assistant message", func(t *testing.T) {
		msg := toolResultMessage([]byte("png"))
		msg.Role, msg.ToolCallId = llmrelayv1.Role_ROLE_ASSISTANT, ""
		_, err := providerRequest(&llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{msg}}, "m", nil)
		var fe *provider.FieldError
		if !errors.As(err, &fe) || fe.Field != "messages[0].parts[1].image" {
			t.Errorf("error %v, want a field error on messages[0].parts[1].image", err)
		}
	})
}

// TestToolResultImagesAreEstimatedAtAFixedCount: an estimate counts a
// tool result's image as it counts a user's, spend.ImageTokens whatever
// its bytes.
func TestToolResultImagesAreEstimatedAtAFixedCount(t *testing.T) {
	request := func(png []byte) *llmrelayv1.GenerateRequest {
		return &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{toolResultMessage(png)}}
	}
	s, l := estimatedBytes(request([]byte("p"))), estimatedBytes(request(make([]byte, 4<<20)))
	if l-s > 32 {
		t.Errorf("estimated bytes: a 4 MiB screenshot %d, a 1-byte one %d: want (nearly) the same", l, s)
	}
	if min := int64(spend.ImageTokens * spend.InputBytesPerToken); s < min {
		t.Errorf("estimated bytes %d, want at least %d for one image", s, min)
	}
}

// TestImageDataMustBeItsMediaType: inline bytes of one of the four image
// types labelled as another are refused before any attempt, naming the
// field and both types (Anthropic answers 400 to PNG bytes labelled
// image/jpeg, after a round trip); bytes that are their media type, or of
// no type the sniffer knows as an image, pass.
func TestImageDataMustBeItsMediaType(t *testing.T) {
	pngBytes := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpegBytes := []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	gifBytes := []byte("GIF89a\x01\x00\x01\x00")
	webpBytes := []byte("RIFF\x24\x00\x00\x00WEBPVP8 ")
	for _, tc := range []struct {
		name, mediaType string
		data            []byte
		wantErr         string
	}{
		{"png as png", "image/png", pngBytes, ""},
		{"jpeg as jpeg", "image/jpeg", jpegBytes, ""},
		{"gif as gif", "image/gif", gifBytes, ""},
		{"webp as webp", "image/webp", webpBytes, ""},
		{"png as jpeg", "image/jpeg", pngBytes, "holds image/png data, but media_type says image/jpeg"},
		{"jpeg as png", "image/png", jpegBytes, "holds image/jpeg data, but media_type says image/png"},
		{"webp as gif", "image/gif", webpBytes, "holds image/webp data, but media_type says image/gif"},
		{"unknown bytes keep their label", "image/png", []byte("png"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := imageMessage(tc.data)
			msg.Parts[1].GetImage().MediaType = tc.mediaType
			_, err := providerRequest(&llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{msg}}, "m", nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			var fe *provider.FieldError
			if !errors.As(err, &fe) || fe.Field != "messages[0].parts[1].image.data" || fe.Description != tc.wantErr {
				t.Errorf("error %v, want a field error on messages[0].parts[1].image.data: %s", err, tc.wantErr)
			}
		})
	}
}

// TestServerToolImagesAreEstimatedAtAFixedCount: an attempt of a later
// turn estimated without the provider's count (its stream ended before
// its usage) counts a server tool's screenshot in the transcript as
// spend.ImageTokens, as it counts a client's, not by its bytes: a 4 MiB
// screenshot is not a million input tokens charged to the key's budget.
func TestServerToolImagesAreEstimatedAtAFixedCount(t *testing.T) {
	req := &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "click"}}}
	inputBytes := func(png []byte) int64 {
		result := toolResultMessage(png)
		// What the call's tool budget counted for the result (toolBudget.take):
		// its ids, its text and its image's bytes.
		spent := int64(len("call_1") + len("click") + len(result.GetContent()) + len(png))
		c := &call{req: req, tools: &tools{transcript: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, ToolCalls: []*llmrelayv1.ToolCall{{Id: "call_1", Name: "click", Arguments: "{}"}}},
			result,
		}, spent: spent}}
		return c.inputBytes()
	}
	s, l := inputBytes([]byte("p")), inputBytes(make([]byte, 4<<20))
	if l != s {
		t.Errorf("estimated bytes: with a 4 MiB screenshot %d, with a 1-byte one %d: want the same", l, s)
	}
	if min := int64(spend.ImageTokens * spend.InputBytesPerToken); s < min {
		t.Errorf("estimated bytes %d, want at least %d for one image", s, min)
	}
}
