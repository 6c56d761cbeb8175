package interceptors

import (
	"errors"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// imageRequest is a user message "look: [image] and [image]?" with an
// inline PNG and an https image.
func imageRequest() *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model: "mock/echo",
		Messages: []*llmrelayv1.Message{{
			Role:    llmrelayv1.Role_ROLE_USER,
			Content: "look:  and ?",
			Parts: []*llmrelayv1.Part{
				{Part: &llmrelayv1.Part_Text{Text: "look: "}},
				{Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")}, MediaType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW,
				}}},
				{Part: &llmrelayv1.Part_Text{Text: " and "}},
				{Part: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/cat.jpg"}}}},
				{Part: &llmrelayv1.Part_Text{Text: "?"}},
			},
		}},
	}
}

// toolResult makes r's first message the result of a tool call, its
// parts those of imageRequest's user message (a screenshot and its
// caption, as a browser tool returns them).
func toolResult(r *llmrelayv1.GenerateRequest) {
	r.Messages[0].Role = llmrelayv1.Role_ROLE_TOOL
	r.Messages[0].ToolCallId = "call_1"
}

// image returns the i-th part's image of r's first message.
func image(r *llmrelayv1.GenerateRequest, i int) *llmrelayv1.Image {
	return r.Messages[0].Parts[i].GetImage()
}

// TestValidateImages checks the rules of images in user messages and tool
// results: each
// mistake is one violation naming the field (or the message, for a
// message's rule), and a well-formed image request passes.
func TestValidateImages(t *testing.T) {
	c := serve(t, &fakeService{}, Validate(newValidator(t)))
	t.Run("valid request passes", func(t *testing.T) {
		req := imageRequest()
		for _, mt := range []string{"image/jpeg", "image/gif", "image/webp"} {
			image(req, 1).MediaType = mt
			if _, err := c.generate(testCtx(t), req); err != nil {
				t.Fatalf("media type %s: %v", mt, err)
			}
		}
		image(req, 3).MediaType = "image/jpeg" // optional with a URL, checked when set
		if _, err := c.generate(testCtx(t), req); err != nil {
			t.Fatalf("a URL with its media type: %v", err)
		}
	})
	t.Run("https URLs naming a host pass", func(t *testing.T) {
		for _, u := range []string{"https://a", "https://example.com:8443/x.png?q#f", "https://[::1]/x", "https://user:pw@example.com/x", "https://ex%41mple.com/x"} {
			req := imageRequest()
			image(req, 3).Source = &llmrelayv1.Image_Url{Url: u}
			if _, err := c.generate(testCtx(t), req); err != nil {
				t.Errorf("%s: %v", u, err)
			}
		}
	})
	t.Run("detail original passes", func(t *testing.T) {
		req := imageRequest()
		image(req, 1).Detail = llmrelayv1.ImageDetail_IMAGE_DETAIL_ORIGINAL
		image(req, 3).Detail = llmrelayv1.ImageDetail_IMAGE_DETAIL_ORIGINAL
		if _, err := c.generate(testCtx(t), req); err != nil {
			t.Fatalf("an inline and a URL image with detail original: %v", err)
		}
	})
	t.Run("a tool result with images passes", func(t *testing.T) {
		req := imageRequest()
		toolResult(req)
		if _, err := c.generate(testCtx(t), req); err != nil {
			t.Fatalf("a tool result of text and images: %v", err)
		}
	})
	tests := []struct {
		name        string
		mutate      func(*llmrelayv1.GenerateRequest)
		field, rule string
	}{
		{"http URL", func(r *llmrelayv1.GenerateRequest) {
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "http://example.com/cat.jpg"}
		},
			"messages[0].parts[3].image.url", "image.url_https"},
		{"data URL", func(r *llmrelayv1.GenerateRequest) {
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "data:image/png;base64,iVBORw0KGgo="}
		}, "messages[0].parts[3].image.url", "image.url_https"},
		{"https URL without a host", func(r *llmrelayv1.GenerateRequest) {
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "https://"}
		}, "messages[0].parts[3].image.url", "image.url_host"},
		{"https URL with an empty host and a path", func(r *llmrelayv1.GenerateRequest) {
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "https:///x.png"}
		}, "messages[0].parts[3].image.url", "image.url_host"},
		{"https URL with a port and no host", func(r *llmrelayv1.GenerateRequest) {
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "https://:443/x"}
		}, "messages[0].parts[3].image.url", "image.url_host"},
		{"https URL with user info and no host", func(r *llmrelayv1.GenerateRequest) {
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "https://user@/x"}
		}, "messages[0].parts[3].image.url", "image.url_host"},
		{"hostless https URL in a tool result", func(r *llmrelayv1.GenerateRequest) {
			toolResult(r)
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "https://?q"}
		}, "messages[0].parts[3].image.url", "image.url_host"},
		{"URL over 8192 characters", func(r *llmrelayv1.GenerateRequest) {
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "https://example.com/" + strings.Repeat("a", 8192)}
		}, "messages[0].parts[3].image.url", "string.max_len"},
		{"empty data", func(r *llmrelayv1.GenerateRequest) { image(r, 1).Source = &llmrelayv1.Image_Data{} },
			"messages[0].parts[1].image.data", "bytes.min_len"},
		{"no source", func(r *llmrelayv1.GenerateRequest) { image(r, 3).Source = nil }, "messages[0].parts[3].image.source", "required"},
		{"inline without media type", func(r *llmrelayv1.GenerateRequest) { image(r, 1).MediaType = "" },
			"messages[0].parts[1].image", "image.inline_media_type"},
		{"media type not an image type", func(r *llmrelayv1.GenerateRequest) { image(r, 1).MediaType = "image/svg+xml" },
			"messages[0].parts[1].image.media_type", "string.in"},
		{"undefined detail", func(r *llmrelayv1.GenerateRequest) { image(r, 1).Detail = 9 },
			"messages[0].parts[1].image.detail", "enum.defined_only"},
		{"image in an assistant message", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Role = llmrelayv1.Role_ROLE_ASSISTANT },
			"messages[0]", "message.image_user_or_tool"},
		{"image in a system message", func(r *llmrelayv1.GenerateRequest) {
			r.Messages[0].Role = llmrelayv1.Role_ROLE_SYSTEM
			r.Messages[0].Parts = r.Messages[0].Parts[:2]
		}, "messages[0]", "message.assistant_only"},
		{"tool call part in a user message", func(r *llmrelayv1.GenerateRequest) {
			r.Messages[0].Parts = append(r.Messages[0].Parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_ToolCall{}})
		}, "messages[0]", "message.user_parts"},
		{"tool call part in a tool result", func(r *llmrelayv1.GenerateRequest) {
			toolResult(r)
			r.Messages[0].Parts = append(r.Messages[0].Parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_ToolCall{}})
		}, "messages[0]", "message.tool_parts"},
		{"http URL in a tool result", func(r *llmrelayv1.GenerateRequest) {
			toolResult(r)
			image(r, 3).Source = &llmrelayv1.Image_Url{Url: "http://example.com/cat.jpg"}
		}, "messages[0].parts[3].image.url", "image.url_https"},
		{"inline image without media type in a tool result", func(r *llmrelayv1.GenerateRequest) {
			toolResult(r)
			image(r, 1).MediaType = ""
		}, "messages[0].parts[1].image", "image.inline_media_type"},
	}
	t.Run("data over 20 MiB", func(t *testing.T) {
		// Larger than the harness's gRPC message cap: asked of the
		// validator the link runs.
		req := imageRequest()
		image(req, 1).Source = &llmrelayv1.Image_Data{Data: make([]byte, 20<<20+1)}
		var ve *protovalidate.ValidationError
		if err := newValidator(t).Validate(req); !errors.As(err, &ve) || len(ve.Violations) != 1 ||
			protovalidate.FieldPathString(ve.Violations[0].Proto.GetField()) != "messages[0].parts[1].image.data" ||
			ve.Violations[0].Proto.GetRuleId() != "bytes.max_len" {
			t.Fatalf("Validate = %v, want one bytes.max_len violation on messages[0].parts[1].image.data", err)
		}
		image(req, 1).Source = &llmrelayv1.Image_Data{Data: make([]byte, 20<<20)}
		if err := newValidator(t).Validate(req); err != nil {
			t.Fatalf("20 MiB exactly: %v", err)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := imageRequest()
			tt.mutate(req)
			_, err := c.generate(testCtx(t), req)
			st := wantStatus(t, err, codes.InvalidArgument, ReasonInvalidRequest)
			vs := findDetail[*errdetails.BadRequest](st).GetFieldViolations()
			for _, v := range vs {
				if v.GetField() == tt.field && v.GetReason() == tt.rule {
					return
				}
			}
			t.Errorf("violations %v, want one on %s [%s]", vs, tt.field, tt.rule)
		})
	}
}
