package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/logtest"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// recordingTimer is a retry timer that returns at once and records every
// wait it was asked for: tests see the exact delays without waiting them.
type recordingTimer struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recordingTimer) After(d time.Duration) <-chan time.Time {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}

func (r *recordingTimer) Waits() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

// echo returns a mock/echo request for text with the given fault list (JSON,
// "" for none) and retry policy (nil for the server's defaults).
func echo(t *testing.T, text, faults string, policy *llmrelayv1.RetryPolicy) *llmrelayv1.GenerateRequest {
	t.Helper()
	req := &llmrelayv1.GenerateRequest{
		Model:    "mock/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: text}},
		Retry:    policy,
	}
	if faults != "" {
		var list []any
		if err := json.Unmarshal([]byte(faults), &list); err != nil {
			t.Fatalf("bad fault list %s: %v", faults, err)
		}
		opts, err := structpb.NewStruct(map[string]any{"faults": list})
		if err != nil {
			t.Fatal(err)
		}
		req.ProviderOptions = opts
	}
	return req
}

// attempts returns a retry policy with tiny backoffs.
func attempts(n uint32) *llmrelayv1.RetryPolicy {
	return &llmrelayv1.RetryPolicy{MaxAttempts: n, InitialBackoff: durationpb.New(time.Millisecond), MaxBackoff: durationpb.New(2 * time.Millisecond)}
}

// render writes an event compactly, for comparing whole streams:
//
//	delta a3 "quick "
//	will_retry a1 OVERLOADED next=2 discard=false cause=UNAVAILABLE/PROVIDER_OVERLOADED
//	final a4 attempts=4 "the full text"
//	partial a2 {"score":0}
func render(ev *llmrelayv1.GenerateEvent) string {
	switch e := ev.GetEvent().(type) {
	case *llmrelayv1.GenerateEvent_Delta:
		if r := e.Delta.GetReasoning(); r != nil {
			s := fmt.Sprintf("reasoning a%d [%d]", ev.GetAttempt(), r.GetIndex())
			if r.GetFormat() != "" {
				s += " " + r.GetFormat()
			}
			if r.GetSignature() != "" {
				s += " signature"
			}
			return s + fmt.Sprintf(" %q", r.GetText())
		}
		if e.Delta.GetRefusal() != "" {
			return fmt.Sprintf("refusal a%d %q", ev.GetAttempt(), e.Delta.GetRefusal())
		}
		return fmt.Sprintf("delta a%d %q", ev.GetAttempt(), e.Delta.GetText())
	case *llmrelayv1.GenerateEvent_WillRetry:
		w := e.WillRetry
		reason := strings.TrimPrefix(w.GetReason().String(), "RETRY_REASON_")
		cause := status.FromProto(w.GetCause())
		return fmt.Sprintf("will_retry a%d %s next=%d discard=%v cause=%s/%s",
			ev.GetAttempt(), reason, w.GetNextAttempt(), w.GetDiscardPartial(), cause.Code(), errorInfo(cause).GetReason())
	case *llmrelayv1.GenerateEvent_Final:
		return fmt.Sprintf("final a%d attempts=%d %q", ev.GetAttempt(), e.Final.GetAttempts(), e.Final.GetMessage().GetContent())
	case *llmrelayv1.GenerateEvent_PartialObject:
		return fmt.Sprintf("partial a%d %s", ev.GetAttempt(), compactJSON(e.PartialObject))
	}
	return fmt.Sprintf("unexpected event %v", ev)
}

// checkStream compares the rendered events with want and checks that the
// sequence numbers run 1, 2, 3, ... without gaps.
func checkStream(t *testing.T, events []*llmrelayv1.GenerateEvent, want []string) {
	t.Helper()
	got := make([]string, len(events))
	for i, ev := range events {
		got[i] = render(ev)
		if ev.GetSequence() != uint64(i+1) {
			t.Errorf("event %d has sequence %d, want %d", i, ev.GetSequence(), i+1)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// willRetries returns the stream's WillRetry events.
func willRetries(events []*llmrelayv1.GenerateEvent) []*llmrelayv1.WillRetry {
	var out []*llmrelayv1.WillRetry
	for _, ev := range events {
		if w := ev.GetWillRetry(); w != nil {
			out = append(out, w)
		}
	}
	return out
}

func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei
		}
	}
	return nil
}

func retryInfo(st *status.Status) *errdetails.RetryInfo {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri
		}
	}
	return nil
}

// wantStatus checks a call's error: its code, ErrorInfo reason and the
// given ErrorInfo metadata entries.
func wantStatus(t *testing.T, err error, code codes.Code, reason string, md map[string]string) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || err == nil {
		t.Fatalf("error = %v, want a status with code %v", err, code)
	}
	if st.Code() != code {
		t.Errorf("code = %v (%s), want %v", st.Code(), st.Message(), code)
	}
	ei := errorInfo(st)
	if ei.GetDomain() != "llmrelay" || ei.GetReason() != reason {
		t.Errorf("ErrorInfo = %s/%s, want llmrelay/%s", ei.GetDomain(), ei.GetReason(), reason)
	}
	for k, v := range md {
		if got := ei.GetMetadata()[k]; got != v {
			t.Errorf("ErrorInfo metadata %s = %q, want %q (all: %v)", k, got, v, ei.GetMetadata())
		}
	}
	return st
}

// findMetric returns the sample of the named metric with the given labels,
// or nil.
func findMetric(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			if f.GetName() == name && hasLabels(s, labels) {
				return s
			}
		}
	}
	return nil
}

// metricValue returns the value of a counter, or the sample count of a
// histogram, with the given labels (0 when absent).
func metricValue(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	s := findMetric(t, m, name, labels)
	if h := s.GetHistogram(); h != nil {
		return float64(h.GetSampleCount())
	}
	return s.GetCounter().GetValue()
}

// histogramSum returns the sum of a histogram with the given labels.
func histogramSum(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	return findMetric(t, m, name, labels).GetHistogram().GetSampleSum()
}

func hasLabels(s *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, lp := range s.GetLabel() {
		if v, ok := labels[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct{ logtest.Buffer }

// records returns the JSON log records with the given message.
func (b *syncBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(strings.NewReader(b.String()))
	for {
		var rec map[string]any
		if err := dec.Decode(&rec); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("log is not JSON lines: %v", err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
}

// scripted is a test provider kind whose attempts follow a script; each
// server's instance is found by its config's BaseURL.
var scripted sync.Map // BaseURL -> *scriptedProvider

func init() {
	provider.Register("scripted", func(cfg provider.Config) (provider.Provider, error) {
		p, ok := scripted.Load(cfg.BaseURL)
		if !ok {
			return nil, fmt.Errorf("no scripted provider %q", cfg.BaseURL)
		}
		return p.(*scriptedProvider), nil
	})
}

// step is one attempt of a scriptedProvider: it streams events, then ends
// with err (nil or io.EOF: success), or blocks until cancelled when block is
// set. The event at i (len(events): the end) waits for the channel at
// wait[i], if any, to be closed (or the attempt to be cancelled).
type step struct {
	events []provider.Event
	err    error
	block  bool
	wait   map[int]<-chan struct{}
}

// scriptedProvider plays one step per attempt, records the requests it
// receives and reports when an attempt's context is cancelled. An attempt
// past the script fails with an HTTP 400.
type scriptedProvider struct {
	steps     []step
	cancelled chan struct{} // closed when a blocked attempt sees its context end
	once      sync.Once

	mu       sync.Mutex
	requests []provider.Request
	arrived  map[int]chan struct{}
	contexts map[int]context.Context // each attempt number's last context
}

func newScripted(t testing.TB, steps ...step) *scriptedProvider {
	return newScriptedAt(t, t.Name(), steps...)
}

// newScriptedAt is newScripted for a provider whose base_url is url.
func newScriptedAt(t testing.TB, url string, steps ...step) *scriptedProvider {
	p := &scriptedProvider{steps: steps, cancelled: make(chan struct{}), arrived: map[int]chan struct{}{}, contexts: map[int]context.Context{}}
	scripted.Store(url, p)
	t.Cleanup(func() { scripted.Delete(url) })
	return p
}

// arrival returns a channel closed once attempt n reached the provider.
func (p *scriptedProvider) arrival(n int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.arrived[n]
	if !ok {
		ch = make(chan struct{})
		p.arrived[n] = ch
	}
	return ch
}

func (p *scriptedProvider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	p.arrival(req.Attempt)
	p.mu.Lock()
	r := *req
	r.Messages = slices.Clone(req.Messages)
	p.requests = append(p.requests, r)
	p.contexts[req.Attempt] = ctx
	select {
	case <-p.arrived[req.Attempt]: // another call's attempt of the same number
	default:
		close(p.arrived[req.Attempt])
	}
	p.mu.Unlock()
	if req.Attempt > len(p.steps) {
		return nil, &provider.Error{Kind: provider.KindHTTP, Status: 400, Message: "no step left in the script"}
	}
	return &scriptedStream{p: p, ctx: ctx, step: p.steps[req.Attempt-1]}, nil
}

// cause returns why attempt n's context ended (nil: it did not, or n
// never arrived).
func (p *scriptedProvider) cause(n int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ctx := p.contexts[n]; ctx != nil {
		return context.Cause(ctx)
	}
	return nil
}

// Requests returns the requests received so far.
func (p *scriptedProvider) Requests() []provider.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

type scriptedStream struct {
	p      *scriptedProvider
	ctx    context.Context
	step   step
	next   int
	passed map[int]bool // the waits passed
}

func (s *scriptedStream) Recv() (provider.Event, error) {
	if gate := s.step.wait[s.next]; gate != nil && !s.passed[s.next] {
		select {
		case <-gate:
			if s.passed == nil {
				s.passed = map[int]bool{}
			}
			s.passed[s.next] = true
		case <-s.ctx.Done():
			s.p.once.Do(func() { close(s.p.cancelled) })
			return provider.Event{}, s.ctx.Err()
		}
	}
	if s.next < len(s.step.events) {
		s.next++
		return s.step.events[s.next-1], nil
	}
	if s.step.block {
		<-s.ctx.Done()
		s.p.once.Do(func() { close(s.p.cancelled) })
		return provider.Event{}, s.ctx.Err()
	}
	if s.step.err == nil {
		return provider.Event{}, io.EOF
	}
	return provider.Event{}, s.step.err
}

func (s *scriptedStream) Close() error { return nil }

func statusOf(p *spb.Status) *status.Status { return status.FromProto(p) }

// compactJSON renders a Value as compact JSON with sorted keys.
func compactJSON(v *structpb.Value) string {
	b, err := json.Marshal(v.AsInterface())
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}
