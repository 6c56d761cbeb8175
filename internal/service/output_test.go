package service_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

func text(s string) provider.Event { return provider.Event{Kind: provider.EventText, Text: s} }

func toolArgs(i int, id, name, args string) provider.Event {
	return provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: i, ID: id, Name: name, ArgumentsDelta: args}}
}

// scriptedRequest is a request to the test's scripted provider with the
// given output limit.
func scriptedRequest(t *testing.T, limit *llmrelayv1.OutputLimit) *llmrelayv1.GenerateRequest {
	req := echo(t, input, "", attempts(3))
	req.Model = "scripted/any"
	req.OutputLimit = limit
	return req
}

func TestOutputLimit(t *testing.T) {
	truncate := llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE
	tests := []struct {
		name   string
		events []provider.Event
		limit  *llmrelayv1.OutputLimit
		want   []string // the stream, rendered
		// final: the final's text, tool arguments and finish reason; or
		// the status reason, when the call fails.
		finalText, finalArgs string
		finish               llmrelayv1.FinishReason
		reason               string
	}{
		{"under the limit", []provider.Event{text("0123456"), text("789")},
			&llmrelayv1.OutputLimit{MaxBytes: 10},
			[]string{`delta a1 "0123456"`, `delta a1 "789"`, `final a1 attempts=1 "0123456789"`},
			"0123456789", "", llmrelayv1.FinishReason_FINISH_REASON_STOP, ""},
		{"past the limit fails, not retried", []provider.Event{text("0123456"), text("789x"), text("never")},
			&llmrelayv1.OutputLimit{MaxBytes: 10},
			[]string{`delta a1 "0123456"`}, "", "", 0, "OUTPUT_TOO_LARGE"},
		{"past the limit truncates when asked", []provider.Event{text("0123456"), text("789x"), text("never")},
			&llmrelayv1.OutputLimit{MaxBytes: 10, OnLimit: truncate},
			[]string{`delta a1 "0123456"`, `delta a1 "789"`, `final a1 attempts=1 "0123456789"`},
			"0123456789", "", llmrelayv1.FinishReason_FINISH_REASON_LENGTH, ""},
		{"truncation cuts on a character boundary", []provider.Event{text("añb")},
			&llmrelayv1.OutputLimit{MaxBytes: 2, OnLimit: truncate}, // "a" and half of "ñ"
			[]string{`delta a1 "a"`, `final a1 attempts=1 "a"`},
			"a", "", llmrelayv1.FinishReason_FINISH_REASON_LENGTH, ""},
		{"tool arguments count, and the call's id and name", []provider.Event{text("abcd"), toolArgs(0, "c1", "f", `{"x":`), toolArgs(0, "", "", `"yy"}`)},
			&llmrelayv1.OutputLimit{MaxBytes: 15, OnLimit: truncate},
			nil, "abcd", `{"x":"yy`, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, ""},
		{"reasoning counts", []provider.Event{
			{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Text: "let me think hard"}}, text("abc")},
			&llmrelayv1.OutputLimit{MaxBytes: 12},
			nil, "", "", 0, "OUTPUT_TOO_LARGE"},
		{"tool arguments past the limit fail", []provider.Event{text("abcd"), toolArgs(0, "c1", "f", `{"x":"a long value"}`)},
			&llmrelayv1.OutputLimit{MaxBytes: 12},
			[]string{`delta a1 "abcd"`}, "", "", 0, "OUTPUT_TOO_LARGE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := append(tt.events, provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
			p := newScripted(t, step{events: events, err: io.EOF}, step{events: events, err: io.EOF})
			in := servertest.Start(t, scriptedConfig(t))
			got, err := servertest.Collect(t.Context(), in.Client, scriptedRequest(t, tt.limit))
			if tt.want != nil {
				checkStream(t, got, tt.want)
			}
			if tt.reason != "" {
				wantStatus(t, err, codes.ResourceExhausted, tt.reason, map[string]string{
					"max_output_bytes": fmt.Sprint(tt.limit.GetMaxBytes()), "provider": "scripted", "attempts": "1",
				})
			} else {
				if err != nil {
					t.Fatalf("the call failed: %v", err)
				}
				f := got[len(got)-1].GetFinal()
				var args []string
				for _, tc := range f.GetMessage().GetToolCalls() {
					args = append(args, tc.GetArguments())
				}
				if f.GetMessage().GetContent() != tt.finalText || strings.Join(args, ",") != tt.finalArgs || f.GetFinishReason() != tt.finish {
					t.Errorf("final %q, tool arguments %q, %v; want %q, %q, %v",
						f.GetMessage().GetContent(), args, f.GetFinishReason(), tt.finalText, tt.finalArgs, tt.finish)
				}
			}
			if n := len(p.Requests()); n != 1 {
				t.Errorf("the provider received %d attempts, want 1: a reply past its limit is not retried", n)
			}
		})
	}
}

// TestOutputLimitCountsEverythingTheClientReceives: a refusal, a tool
// call's id, name and signature, and reasoning's format, signature and
// redacted blocks are output like text. 1 MiB of any of them does not get
// past a 1 KiB limit, in the deltas or in the final, whether the call
// fails at the limit or is cut there; cut, an opaque value that does not
// fit whole is left out, never sent in part. An id, a name or a format is
// at most what a message takes of it (a longer one fails the attempt):
// 16 such values do not get past a limit one byte short of the first.
func TestOutputLimitCountsEverythingTheClientReceives(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	format, id, name := strings.Repeat("x", 64), strings.Repeat("x", 256), strings.Repeat("x", 128)
	kinds := []struct {
		name   string
		ev     func(i int) provider.Event
		opaque bool
		limit  int // 0: 1 KiB
	}{
		{"refusal", func(int) provider.Event { return provider.Event{Kind: provider.EventRefusal, Text: big} }, false, 0},
		{"redacted reasoning", func(i int) provider.Event {
			return provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Index: i, Redacted: big}}
		}, true, 0},
		{"reasoning signature", func(int) provider.Event {
			return provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Signature: big}}
		}, true, 0},
		{"reasoning format", func(i int) provider.Event {
			return provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Index: i, Format: format}}
		}, true, len("hello") + len(format) - 1},
		{"tool call id", func(i int) provider.Event { return toolArgs(i, id, "f", "{}") }, true, len("hello") + len(id) - 1},
		{"tool call name", func(i int) provider.Event { return toolArgs(i, "c", name, "{}") }, true, len("hello") + len("c") + len(name) - 1},
		{"tool call signature", func(i int) provider.Event {
			return provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: i, Signature: big}}
		}, true, 0},
	}
	for _, k := range kinds {
		for _, onLimit := range []llmrelayv1.OnOutputLimit{llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_FAIL, llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE} {
			t.Run(k.name+"/"+onLimit.String(), func(t *testing.T) {
				events := []provider.Event{text("hello")}
				for i := range 16 {
					events = append(events, k.ev(i))
				}
				limit := k.limit
				if limit == 0 {
					limit = 1024
				}
				events = append(events, provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
				newScripted(t, step{events: events, err: io.EOF})
				in := servertest.Start(t, scriptedConfig(t))
				got, err := servertest.Collect(t.Context(), in.Client, scriptedRequest(t, &llmrelayv1.OutputLimit{MaxBytes: uint64(limit), OnLimit: onLimit}))
				var deltas, final string
				for _, ev := range got {
					deltas += deltaOutput(ev.GetDelta())
					final += messageOutput(ev.GetFinal().GetMessage())
				}
				if len(deltas) > limit || len(final) > limit {
					t.Errorf("%d bytes of deltas and a final of %d bytes passed a %d-byte output limit", len(deltas), len(final), limit)
				}
				if onLimit == llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_FAIL {
					wantStatus(t, err, codes.ResourceExhausted, "OUTPUT_TOO_LARGE", nil)
					return
				}
				if err != nil {
					t.Fatalf("the call failed: %v", err)
				}
				f := got[len(got)-1].GetFinal()
				if f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || f.GetMessage().GetContent() != "hello" {
					t.Errorf("final %q, %v; want the text before the limit and FINISH_REASON_LENGTH", f.GetMessage().GetContent(), f.GetFinishReason())
				}
				if k.opaque && (strings.Contains(final, "x") || strings.Contains(deltas, "x")) {
					t.Errorf("a part of an opaque value was sent")
				}
			})
		}
	}
}

// deltaOutput returns the output from the provider that a delta carries.
func deltaOutput(d *llmrelayv1.Delta) string {
	tc, r := d.GetToolCall(), d.GetReasoning()
	return d.GetText() + d.GetRefusal() + tc.GetId() + tc.GetName() + tc.GetArgumentsDelta() +
		r.GetText() + r.GetSignature() + r.GetRedacted() + r.GetFormat()
}

// messageOutput returns the output from the provider that a message carries.
func messageOutput(m *llmrelayv1.Message) string {
	out := m.GetContent() + m.GetRefusal()
	for _, tc := range m.GetToolCalls() {
		out += tc.GetId() + tc.GetName() + tc.GetArguments() + tc.GetSignature()
	}
	for _, r := range m.GetReasoning() {
		out += r.GetText() + r.GetSignature() + r.GetRedacted() + r.GetFormat()
	}
	return out
}

func TestOutputLimitDefaultsAndCap(t *testing.T) {
	cfg := func(t *testing.T) *config.Config {
		c := scriptedConfig(t)
		c.Limits.DefaultMaxOutputBytes, c.Limits.MaxOutputBytes = 4, 6
		return c
	}
	tests := []struct {
		name  string
		limit *llmrelayv1.OutputLimit
		want  string
	}{
		{"unset takes the server's default", nil, "0123"},
		{"a request may ask for less", &llmrelayv1.OutputLimit{MaxBytes: 2}, "01"},
		{"a request asking for more gets the server's limit", &llmrelayv1.OutputLimit{MaxBytes: 1 << 20}, "012345"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newScripted(t, step{events: []provider.Event{text("0123456789")}, err: io.EOF})
			in := servertest.Start(t, cfg(t))
			limit := tt.limit
			if limit == nil {
				limit = &llmrelayv1.OutputLimit{}
			}
			limit.OnLimit = llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE
			events, err := servertest.Collect(t.Context(), in.Client, scriptedRequest(t, limit))
			if err != nil {
				t.Fatal(err)
			}
			if got := events[len(events)-1].GetFinal().GetMessage().GetContent(); got != tt.want {
				t.Errorf("final %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTruncationWithStructuredOutputIsRefused(t *testing.T) {
	in := servertest.Start(t, nil)
	req := structuredEcho(t, `{"type":"object"}`, "", nil)
	req.OutputLimit = &llmrelayv1.OutputLimit{OnLimit: llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE}
	_, err := servertest.Collect(t.Context(), in.Client, req)
	st := wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST", nil)
	if !strings.Contains(st.Message(), "output_limit.on_limit") {
		t.Errorf("message %q does not name output_limit.on_limit", st.Message())
	}
}

// bigReply is a loopback OpenAI-compatible upstream that streams a reply
// of size bytes in chunks of chunk bytes, and records how many bytes of
// its reply it had written when it saw the client go away.
type bigReply struct {
	size, chunk int
	written     atomic.Int64 // content bytes written
	stopped     chan int64   // receives written when the client went away
}

func (b *bigReply) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	piece := strings.Repeat("x", b.chunk)
	line := []byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"big","choices":[{"index":0,"delta":{"content":"` + piece + `"},"finish_reason":null}]}` + "\n\n")
	for b.written.Load() < int64(b.size) {
		if r.Context().Err() != nil {
			break
		}
		if _, err := w.Write(line); err != nil {
			break
		}
		fl.Flush()
		b.written.Add(int64(b.chunk))
	}
	if b.written.Load() >= int64(b.size) {
		_, _ = w.Write([]byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"big","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"))
	}
	b.stopped <- b.written.Load()
}

// TestOutputLimitStopsATenMebibyteReplyWithinTheLimit: a 10 MiB reply from
// a real loopback upstream, with max_output_bytes 1 MiB, fails typed, and
// the upstream, stopped by the cancelled request, has written little more
// than the limit: the reply's output up to 1 MiB plus what the sockets
// between the two hold (the upstream's send buffer is set small, as a
// provider's is not ours to choose, so what remains is the relay's own
// receive buffer).
func TestOutputLimitStopsATenMebibyteReplyWithinTheLimit(t *testing.T) {
	const limit = 1 << 20
	up := &bigReply{size: 10 << 20, chunk: 8 << 10, stopped: make(chan int64, 1)}
	srv := httptest.NewUnstartedServer(up)
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		_ = c.(*net.TCPConn).SetWriteBuffer(64 << 10)
		return ctx
	}
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(httpx.CloseIdleConnections)
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "big", Kind: "openai", BaseURL: srv.URL + "/v1"}}
	in := servertest.Start(t, cfg)

	req := echo(t, input, "", nil)
	req.Model = "big/model"
	req.OutputLimit = &llmrelayv1.OutputLimit{MaxBytes: limit}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	wantStatus(t, err, codes.ResourceExhausted, "OUTPUT_TOO_LARGE", map[string]string{"max_output_bytes": fmt.Sprint(limit), "attempts": "1"})
	var streamed int
	for _, ev := range events {
		streamed += len(ev.GetDelta().GetText())
	}
	if streamed > limit {
		t.Errorf("the client received %d bytes of deltas, more than the limit (%d)", streamed, limit)
	}
	var written int64
	select {
	case written = <-up.stopped:
	case <-time.After(30 * time.Second): // a guard against hangs, not a timing assertion
		t.Fatalf("the upstream was not stopped: it has written %d bytes", up.written.Load())
	}
	if written > 2*limit {
		t.Errorf("the upstream wrote %d bytes of the 10 MiB reply before it saw the cancel; want at most %d (the limit and the sockets' buffers)", written, 2*limit)
	}
	t.Logf("10 MiB reply, limit %d: the client received %d bytes of deltas; the upstream wrote %d bytes before it saw the cancel", limit, streamed, written)
}
