package httpx_test

import (
	"context"
	"encoding/json"
	"errors"
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
