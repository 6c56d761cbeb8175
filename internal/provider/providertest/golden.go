package providertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// RenderEvents writes a stream's events as text, one line each, and how it
// ended, for golden files: what a decoder made of a recorded stream.
func RenderEvents(r Result) []byte {
	var b strings.Builder
	for _, ev := range r.Events {
		switch ev.Kind {
		case provider.EventText:
			fmt.Fprintf(&b, "text %q\n", ev.Text)
		case provider.EventRefusal:
			fmt.Fprintf(&b, "refusal %q\n", ev.Text)
		case provider.EventReasoning:
			d := ev.Reasoning
			fmt.Fprintf(&b, "reasoning[%d]", d.Index)
			if d.Format != "" {
				fmt.Fprintf(&b, " format=%s", d.Format)
			}
			if d.Text != "" {
				fmt.Fprintf(&b, " text=%q", d.Text)
			}
			if d.Signature != "" {
				fmt.Fprintf(&b, " signature=%q", d.Signature)
			}
			if d.Redacted != "" {
				fmt.Fprintf(&b, " redacted=%q", d.Redacted)
			}
			for _, f := range [...][2]string{{"id", d.ID}, {"kind", d.Kind}, {"provider_format", d.ProviderFormat}} {
				if f[1] != "" {
					fmt.Fprintf(&b, " %s=%q", f[0], f[1])
				}
			}
			b.WriteByte('\n')
		case provider.EventProviderTool:
			if t := ev.ProviderTool; t != nil {
				// A result can be tens of kilobytes: its size and digest.
				fmt.Fprintf(&b, "provider_tool format=%s kind=%q id=%q name=%q input=%q result=%d bytes sha256:%x extra=%q\n",
					t.Format, t.Kind, t.ID, t.Name, t.Input, len(t.Result), sha256.Sum256([]byte(t.Result)), t.Extra)
			}
		case provider.EventToolCall:
			d := ev.ToolCall
			fmt.Fprintf(&b, "tool[%d]", d.Index)
			if d.ID != "" || d.Name != "" {
				fmt.Fprintf(&b, " id=%q name=%q", d.ID, d.Name)
			}
			fmt.Fprintf(&b, " args=%q", d.ArgumentsDelta)
			if d.Signature != "" {
				fmt.Fprintf(&b, " signature=%q", d.Signature)
			}
			b.WriteByte('\n')
		case provider.EventUsage:
			u := ev.Usage
			fmt.Fprintf(&b, "usage input=%d output=%d reasoning=%d cached=%d cache_creation=%d\n",
				u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CachedInputTokens, u.CacheCreationInputTokens)
		case provider.EventFinish:
			fmt.Fprintf(&b, "finish %s", ev.FinishReason)
			if ev.Text != "" {
				fmt.Fprintf(&b, " stop_sequence=%q", ev.Text)
			}
			b.WriteByte('\n')
		default:
			fmt.Fprintf(&b, "unknown event %d\n", ev.Kind)
		}
	}
	switch pe := ProviderError(r.Err); {
	case r.Err == nil:
		b.WriteString("end\n")
	case pe != nil:
		fmt.Fprintf(&b, "error kind=%d class=%s status=%d type=%q\n", pe.Kind, pe.FailureClass(), pe.Status, pe.Type)
	default:
		fmt.Fprintf(&b, "error %v\n", r.Err)
	}
	return []byte(b.String())
}

// GoldenText compares got with testdata/name; with update it writes the
// file instead.
func GoldenText(t *testing.T, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// ReplayRecorded plays the recorded stream testdata/recorded/<file> from an
// Upstream to the provider build makes, over loopback HTTP, with an
// Activity on the request, and returns what the attempt produced and the
// Activity.
func ReplayRecorded(t *testing.T, file string, build func(t *testing.T, baseURL string) provider.Provider, req *provider.Request) (Result, *provider.Activity) {
	t.Helper()
	u := Replay(t, Fixture{File: filepath.Join("recorded", file)}.Reply(t))
	var act provider.Activity
	r := *req
	r.Activity = &act
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	res := Collect(ctx, build(t, u.URL), &r)
	for _, v := range res.Violations {
		t.Errorf("stream contract: %s", v)
	}
	return res, &act
}

// RecordedWant is what every adapter's test of a recorded stream checks
// beyond its own facts: the tool calls (an empty ID is not checked; the
// signature is the adapter's to check), the finish reason, the stop
// sequence it named ("" for none) and the usage.
type RecordedWant struct {
	Calls        []provider.ToolCall
	Finish       provider.FinishReason
	StopSequence string
	Usage        provider.Usage
}

// CheckRecorded checks what a replayed recorded stream (ReplayRecorded of
// testdata/recorded/<file>) produced against want, that its bytes reached
// the attempt's Activity, and its whole event sequence against the golden
// file testdata/golden/<file without .sse>.events (update rewrites it).
func CheckRecorded(t *testing.T, file string, r Result, act *provider.Activity, want RecordedWant, update bool) {
	t.Helper()
	if len(r.ToolCalls) != len(want.Calls) {
		t.Errorf("tool calls %+v, want %+v", r.ToolCalls, want.Calls)
	} else {
		for i, w := range want.Calls {
			got := r.ToolCalls[i]
			if w.ID != "" && got.ID != w.ID || got.Name != w.Name || got.Arguments != w.Arguments {
				t.Errorf("tool call %d = %+v, want %+v", i, got, w)
			}
		}
	}
	if r.Finish != want.Finish || r.Usage != want.Usage {
		t.Errorf("finish %v usage %+v, want %v %+v", r.Finish, r.Usage, want.Finish, want.Usage)
	}
	if r.StopSequence != want.StopSequence {
		t.Errorf("stop sequence %q, want %q", r.StopSequence, want.StopSequence)
	}
	if act.Last() == 0 {
		t.Error("the stream's bytes did not reach the attempt's Activity")
	}
	GoldenText(t, "golden/"+strings.TrimSuffix(file, ".sse")+".events", RenderEvents(r), update)
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
