package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// RichRequest returns a request that uses every field an adapter maps: two
// system messages, an assistant turn with text and two tool calls, their
// two results, a follow-up question, both tools, a named tool choice and
// every generation setting.
func RichRequest(model string) *provider.Request {
	maxTokens, temp, topP := 256, 0.25, 0.9
	req := NewRequest(model)
	req.Messages = []provider.Message{
		{Role: provider.RoleSystem, Content: "You are terse."},
		{Role: provider.RoleSystem, Content: "Answer in English."},
		{Role: provider.RoleUser, Content: "What is the weather and the time in Paris?"},
		{Role: provider.RoleAssistant, Content: "Checking.", ToolCalls: []provider.ToolCall{
			{ID: "call_weather", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "call_time", Name: "get_time", Arguments: `{"timezone":"Europe/Paris"}`},
		}},
		{Role: provider.RoleTool, ToolCallID: "call_weather", Content: "18°C and sunny"},
		{Role: provider.RoleTool, ToolCallID: "call_time", Content: `{"time":"14:05"}`},
		{Role: provider.RoleUser, Content: "Thanks. And tomorrow?"},
	}
	req.ToolChoice = provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: "get_weather"}
	req.Generation = provider.Generation{MaxOutputTokens: &maxTokens, Temperature: &temp, TopP: &topP, Stop: []string{"END"}}
	return req
}

// CaptureRequest runs one attempt of req on p to its end and returns the
// last request u received: what the adapter sent.
func CaptureRequest(t *testing.T, u *Upstream, p provider.Provider, req *provider.Request) Recorded {
	t.Helper()
	if r := Collect(context.Background(), p, req); r.Err != nil {
		t.Fatalf("attempt failed: %v", r.Err)
	}
	reqs := u.Requests()
	if len(reqs) == 0 {
		t.Fatal("the upstream received no request")
	}
	return reqs[len(reqs)-1]
}

// GoldenJSON compares the JSON document got, indented, with
// testdata/name; with update it writes the file instead.
func GoldenJSON(t *testing.T, name string, got []byte, update bool) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s differs (run with -update to accept):\n got:\n%s\nwant:\n%s", path, buf.Bytes(), want)
	}
}
