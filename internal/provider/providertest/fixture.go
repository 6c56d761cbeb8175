package providertest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Fixture says how an HTTP adapter's harness plays a scenario: which file
// of the adapter's testdata directory the Upstream replays, with which
// status and headers, and how the stream breaks.
type Fixture struct {
	// File is the response body, a file under testdata/.
	File string
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header holds response headers.
	Header map[string]string
	// After and Fault break the stream after After chunks (see Reply).
	After int
	Fault Fault
}

// FixtureHarness returns a Harness that plays each scenario by replaying
// its Fixture from an Upstream, and builds the provider under test with
// build, given the Upstream's base URL. A scenario without a fixture fails
// the test.
func FixtureHarness(fixtures map[Scenario]Fixture, build func(t *testing.T, baseURL string) provider.Provider) Harness {
	return func(t *testing.T, s Scenario) Setup {
		t.Helper()
		f, ok := fixtures[s]
		if !ok {
			t.Fatalf("the harness has no fixture for scenario %q", s)
		}
		u := Replay(t, f.Reply(t))
		return Setup{Provider: build(t, u.URL), Request: NewRequest("test-model"), Gone: u.Gone(), Upstream: u}
	}
}

// Reply reads the fixture's file from testdata/ and returns the Reply that
// serves it.
func (f Fixture) Reply(t testing.TB) Reply {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", f.File))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	h := make(http.Header, len(f.Header))
	for k, v := range f.Header {
		h.Set(k, v)
	}
	return Reply{Status: f.Status, Header: h, Body: body, After: f.After, Fault: f.Fault}
}

// NewRequest returns the request the suite sends: a system prompt, a user
// question, and the two tools of WantToolCalls.
func NewRequest(model string) *provider.Request {
	return &provider.Request{
		Model: model,
		Messages: []provider.Message{
			{Role: provider.RoleSystem, Content: "You are terse."},
			{Role: provider.RoleUser, Content: "What is the weather and the time in Paris?"},
		},
		Tools: []provider.Tool{
			{Name: "get_weather", Description: "Current weather in a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`)},
			{Name: "get_time", Description: "Current time in a time zone.", Parameters: json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string"}},"required":["timezone"]}`)},
		},
		Attempt: 1,
	}
}

// ToolCallIDRequest is NewRequest followed by an assistant turn with two
// tool calls, of ids a and b, and their results in the other order (b's,
// then a's): for an adapter's test of the ids it sends, which must answer
// each call with its own result.
func ToolCallIDRequest(model, a, b string) *provider.Request {
	req := NewRequest(model)
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
			{ID: a, Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: b, Name: "get_weather", Arguments: `{"city":"Rome"}`},
		}},
		provider.Message{Role: provider.RoleTool, ToolCallID: b, Content: "rain"},
		provider.Message{Role: provider.RoleTool, ToolCallID: a, Content: "sun"},
	)
	return req
}

// ImagePNG is an inline image's bytes in ImageRequest: PNG's signature
// (base64 "iVBORw0KGgo=").
var ImagePNG = []byte("\x89PNG\r\n\x1a\n")

// ImageURL is the https image of ImageRequest.
const ImageURL = "https://example.com/cat.jpg"

// ImageRequest is a request of one user message of text and images in
// order, as the service converts it: "Compare " + an inline PNG (detail
// low) + " with " + the https image at ImageURL (detail high, when
// withURL) + "." . Without withURL the second image is inline too (a
// JPEG), for providers that take images inline only.
func ImageRequest(model string, withURL bool) *provider.Request {
	m := provider.Message{Role: provider.RoleUser, Content: "Compare  with ."}
	m.Parts, m.Images = twoImages("Compare ", " with ", withURL)
	return &provider.Request{Model: model, Messages: []provider.Message{m}, Attempt: 1}
}

// twoImages is the parts of a text in which two images stand, in order:
// before, an inline PNG (detail low), between, the https image at ImageURL
// (detail high) when withURL, else an inline JPEG, and ".".
func twoImages(before, between string, withURL bool) ([]provider.Part, []provider.Image) {
	second := provider.Image{URL: ImageURL, Detail: "high"}
	if !withURL {
		second = provider.Image{Data: []byte("\xff\xd8\xff"), MediaType: "image/jpeg"}
	}
	return []provider.Part{
			{Kind: provider.PartText, Text: before},
			{Kind: provider.PartImage, Index: 0},
			{Kind: provider.PartText, Text: between},
			{Kind: provider.PartImage, Index: 1},
			{Kind: provider.PartText, Text: "."},
		},
		[]provider.Image{{Data: ImagePNG, MediaType: "image/png", Detail: "low"}, second}
}

// ToolImageRequest is a request whose last turn answers two tool calls:
// call_1 (screenshot) with text and images in order, as the service
// converts a tool result with parts: "Screen: " + an inline PNG (detail
// low) + " and " + the https image at ImageURL (detail high, when withURL;
// else an inline JPEG) + "."; and call_2 (title) with the text "Home".
func ToolImageRequest(model string, withURL bool) *provider.Request {
	screen := provider.Message{Role: provider.RoleTool, ToolCallID: "call_1", Content: "Screen:  and ."}
	screen.Parts, screen.Images = twoImages("Screen: ", " and ", withURL)
	return &provider.Request{
		Model: model,
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: "Open the page"},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
				{ID: "call_1", Name: "screenshot", Arguments: "{}"},
				{ID: "call_2", Name: "title", Arguments: "{}"},
			}},
			screen,
			{Role: provider.RoleTool, ToolCallID: "call_2", Content: "Home"},
		},
		Attempt: 1,
	}
}
