package httpx_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// jsonDecoder turns each event's {"text": ...} into a text event, refuses
// anything else as a protocol error, and ends at "END".
type jsonDecoder struct{}

func (jsonDecoder) Decode(ev httpx.Event, out *[]provider.Event) (bool, error) {
	if string(ev.Data) == "END" {
		return true, nil
	}
	var v struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		return false, httpx.ProtocolError(err, ev.Data)
	}
	*out = append(*out, provider.Event{Kind: provider.EventText, Text: v.Text})
	return false, nil
}

func (jsonDecoder) EndsAtEOF() bool { return false }

// TestProtocolErrorsAndCutStreams pins the rule: what arrived whole but
// does not decode is a protocol error (not retried); what the end of the
// body cut short is a transport failure (retried).
func TestProtocolErrorsAndCutStreams(t *testing.T) {
	tests := []struct {
		name, body string
		kind       provider.ErrorKind // 0: a clean end
		text       string
	}{
		{"a complete event whose JSON does not parse", "data: {\"text\":\"a\"}\n\ndata: {\"text\":\n\ndata: END\n\n", provider.KindProtocol, "a"},
		{"a complete event that does not fit the schema", "data: {\"text\":\"a\"}\n\ndata: {\"text\":5}\n\n", provider.KindProtocol, "a"},
		{"a complete line that is not server-sent events", "data: {\"text\":\"a\"}\n\n<html>502</html>\n", provider.KindProtocol, "a"},
		{"the body ends in the middle of an event", "data: {\"text\":\"a\"}\n\ndata: {\"text\":\"b", provider.KindTransport, "a"},
		{"the body ends after a cut event's line end", "data: {\"text\":\"a\"}\n\ndata: {\"te\n", provider.KindTransport, "a"},
		{"the body ends in the middle of a field name", "data: {\"text\":\"a\"}\n\nda", provider.KindTransport, "a"},
		{"a last event without its blank line is whole", "data: {\"text\":\"a\"}\n\ndata: END", 0, "a"},
		{"the body ends without the terminator", "data: {\"text\":\"a\"}\n\n", provider.KindTransport, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := pt.Decode(tc.body, "", jsonDecoder{})
			if r.Text != tc.text {
				t.Errorf("text = %q, want %q", r.Text, tc.text)
			}
			if tc.kind == 0 {
				if r.Err != nil {
					t.Fatalf("error = %v, want a clean end", r.Err)
				}
				return
			}
			pe := pt.ProviderError(r.Err)
			if pe == nil || pe.Kind != tc.kind {
				t.Fatalf("error = %v, want a *provider.Error of kind %d", r.Err, tc.kind)
			}
			wantClass := map[provider.ErrorKind]provider.Class{provider.KindProtocol: provider.ClassProtocol, provider.KindTransport: provider.ClassTransport}[tc.kind]
			if pe.FailureClass() != wantClass || pe.FailureClass().Transient() != (tc.kind == provider.KindTransport) {
				t.Errorf("class = %v, want %v (transient only for a cut stream)", pe.FailureClass(), wantClass)
			}
		})
	}
}

// TestActivityCountsBytesThatAreNotEvents: keep-alive comments produce no
// event, yet they are signs of life the attempt's stall timer must see.
func TestActivityCountsBytesThatAreNotEvents(t *testing.T) {
	u := pt.Replay(t, pt.Reply{Body: []byte(": keep-alive\n\n: keep-alive\n\ndata: {\"text\":\"a\"}\n\n"), After: 2, Fault: pt.FaultStall})
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: u.URL})
	var act provider.Activity
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	enc, err := httpx.Encode(struct{}{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ep.Stream(ctx, httpx.Call{URL: u.URL, Body: enc, Decoder: jsonDecoder{}, Activity: &act})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := make(chan error, 1)
	go func() {
		ev, err := s.Recv()
		if err == nil {
			err = errors.New("an event: " + ev.Text)
		}
		got <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for act.Last() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if act.Last() == 0 {
		t.Fatal("two keep-alive comments arrived, but the activity saw nothing")
	}
	select {
	case err := <-got:
		t.Fatalf("Recv returned %v while only comments arrived, want it to wait", err)
	default:
	}
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("Recv after cancel = %v, want context.Canceled", err)
	}
}

// TestRecvBufferedReturnsOnlyWhatWasRead: RecvBuffered returns the events
// whose bytes the stream has already read from the body, in order, and
// says at once when the next one has not arrived (half an event, a comment
// or nothing), without waiting for the body; Recv then waits for it. The
// terminator already read ends the stream without waiting for the body to
// close.
func TestRecvBufferedReturnsOnlyWhatWasRead(t *testing.T) {
	body := newChunkBody()
	s := httpx.NewStream(t.Context(), body, "", jsonDecoder{})
	defer func() {
		close(body.chunks) // the body ends, so Close drains it at once
		s.Close()
	}()

	// notReady asserts that RecvBuffered says "not yet" without waiting.
	notReady := func(when string) {
		t.Helper()
		done := make(chan bool, 1)
		go func() {
			_, ok, err := s.RecvBuffered()
			done <- ok || err != nil
		}()
		select {
		case got := <-done:
			if got {
				t.Fatalf("%s: RecvBuffered returned something, want nothing yet", when)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: RecvBuffered waited for the body", when)
		}
	}
	text := func(want string) {
		t.Helper()
		ev, ok, err := s.RecvBuffered()
		if !ok || err != nil || ev.Text != want {
			t.Fatalf("RecvBuffered = %q, %v, %v; want %q, true, nil", ev.Text, ok, err, want)
		}
	}

	// One read of the body brings three events and half of a fourth.
	body.send("data: {\"text\":\"a\"}\n\ndata: {\"text\":\"b\"}\n\n: keep-alive\n\ndata: {\"text\":\"c\"}\n\ndata: {\"te")
	if ev, err := s.Recv(); err != nil || ev.Text != "a" {
		t.Fatalf("Recv = %q, %v; want a", ev.Text, err)
	}
	text("b")
	text("c")
	notReady("half an event read")

	body.send("xt\":\"d\"}\n\n")
	if ev, err := s.Recv(); err != nil || ev.Text != "d" {
		t.Fatalf("Recv after the rest arrived = %q, %v; want d", ev.Text, err)
	}
	notReady("nothing read")

	body.send("data: {\"text\":\"e\"}\n\ndata: END\n\n")
	if ev, err := s.Recv(); err != nil || ev.Text != "e" {
		t.Fatalf("Recv = %q, %v; want e", ev.Text, err)
	}
	// The body has not ended (no EOF sent): the terminator alone ends it.
	if _, ok, err := s.RecvBuffered(); !ok || !errors.Is(err, io.EOF) {
		t.Fatalf("RecvBuffered at the terminator = %v, %v; want true, io.EOF", ok, err)
	}
}

// chunkBody is a response body whose reads return what the test sent, one
// send per read, and wait when there is nothing.
type chunkBody struct {
	chunks chan string
	rest   string
}

func newChunkBody() *chunkBody { return &chunkBody{chunks: make(chan string, 16)} }

func (b *chunkBody) send(s string) { b.chunks <- s }

func (b *chunkBody) Read(p []byte) (int, error) {
	if b.rest == "" {
		s, ok := <-b.chunks
		if !ok {
			return 0, io.EOF
		}
		b.rest = s
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *chunkBody) Close() error { return nil }
