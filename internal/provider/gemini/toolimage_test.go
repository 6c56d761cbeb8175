package gemini_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestToolResultImagesInFunctionResponseParts: a tool result's images go,
// in order, as inlineData parts of its functionResponse (Gemini 3's
// multimodal function responses), its text as the response's output; a
// result without images has no parts.
func TestToolResultImagesInFunctionResponseParts(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1beta"), pt.ToolImageRequest("gemini-3-flash-preview", false))
	const want = `{"contents":[` +
		`{"role":"user","parts":[{"text":"Open the page"}]},` +
		`{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"screenshot","args":{}}},{"functionCall":{"id":"call_2","name":"title","args":{}}}]},` +
		`{"role":"user","parts":[` +
		`{"functionResponse":{"id":"call_1","name":"screenshot","response":{"output":"Screen:  and ."},"parts":[` +
		`{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},` +
		`{"inlineData":{"mimeType":"image/jpeg","data":"/9j/"}}]}},` +
		`{"functionResponse":{"id":"call_2","name":"title","response":{"output":"Home"}}}]}]}`
	if string(got.Body) != want {
		t.Errorf("body\n %s\nwant\n %s", got.Body, want)
	}
}

// TestToolResultImageURLRefused: an image at a URL in a tool result is
// refused before anything is sent, naming the image's URL and the
// provider, as in a user message.
func TestToolResultImageURLRefused(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	p := newProvider(t, u.URL+"/v1beta")
	req := pt.ToolImageRequest("gemini-3-flash-preview", true)
	err := p.(provider.RequestValidator).ValidateRequest(req)
	var fe *provider.FieldError
	if !errors.As(err, &fe) || fe.Field != "messages[2].parts[3].image.url" || !strings.Contains(fe.Description, "gemini") {
		t.Fatalf("ValidateRequest = %v, want a field error on messages[2].parts[3].image.url naming gemini", err)
	}
	if _, err := p.Stream(t.Context(), req); !errors.As(err, &fe) {
		t.Fatalf("Stream = %v, want the field error", err)
	}
	if n := len(u.Requests()); n != 0 {
		t.Errorf("%d requests reached the upstream, want none", n)
	}
}

// TestToolErrorInFunctionResponse: a failed tool result (Message.tool_error:
// Anthropic's is_error, MCP's isError) goes to Gemini under the response's
// "error" key, the API's convention for a function's failure, its text or
// its JSON object; a result that did not fail stays the output.
func TestToolErrorInFunctionResponse(t *testing.T) {
	req := &provider.Request{
		Model: "gemini-3-flash-preview",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: "Weather in Paris, Rome and Oslo?"},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
				{ID: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`},
				{ID: "call_2", Name: "weather", Arguments: `{"city":"Rome"}`},
				{ID: "call_3", Name: "weather", Arguments: `{"city":"Oslo"}`},
			}},
			{Role: provider.RoleTool, ToolCallID: "call_1", Content: "upstream timeout", ToolError: true},
			{Role: provider.RoleTool, ToolCallID: "call_2", Content: `{"code": 404, "message": "no station"}`, ToolError: true},
			{Role: provider.RoleTool, ToolCallID: "call_3", Content: "18C"},
		},
		Attempt: 1,
	}
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1beta"), req)
	const want = `{"contents":[` +
		`{"role":"user","parts":[{"text":"Weather in Paris, Rome and Oslo?"}]},` +
		`{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"weather","args":{"city":"Paris"}}},` +
		`{"functionCall":{"id":"call_2","name":"weather","args":{"city":"Rome"}}},` +
		`{"functionCall":{"id":"call_3","name":"weather","args":{"city":"Oslo"}}}]},` +
		`{"role":"user","parts":[` +
		`{"functionResponse":{"id":"call_1","name":"weather","response":{"error":"upstream timeout"}}},` +
		`{"functionResponse":{"id":"call_2","name":"weather","response":{"error":{"code":404,"message":"no station"}}}},` +
		`{"functionResponse":{"id":"call_3","name":"weather","response":{"output":"18C"}}}]}]}`
	if string(got.Body) != want {
		t.Errorf("body\n %s\nwant\n %s", got.Body, want)
	}
}
