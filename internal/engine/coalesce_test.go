package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/engine/enginetest"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// kindGated is the kind of gatedProvider.
const kindGated = "enginetest-gated"

func init() {
	provider.Register(kindGated, func(provider.Config) (provider.Provider, error) { return gatedProvider{}, nil })
}

// gatedStreams hands each test the streams its calls open: the test
// registers a channel under the model it asks for.
var gatedStreams sync.Map // model → chan *gatedStream

// gatedProvider is an upstream whose chunks arrive when its test releases
// them. What the test released and the engine has not received yet is
// what a transport has already read: its streams are
// provider.BufferedStreams.
type gatedProvider struct{}

func (gatedProvider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	ch, ok := gatedStreams.Load(req.Model)
	if !ok {
		return nil, fmt.Errorf("no test waits for model %q", req.Model)
	}
	s := &gatedStream{ctx: ctx, more: make(chan struct{}, 1)}
	ch.(chan *gatedStream) <- s
	if strings.Contains(req.Model, "Await") {
		return &awaitedStream{gatedStream: s}, nil
	}
	return s, nil
}

// awaitedStream is a gatedStream that can wait for its next event before
// it is asked for it (provider.AwaitStream), and counts the Recvs that
// had to wait instead (gatedStream.unawaited).
type awaitedStream struct{ *gatedStream }

func (s *awaitedStream) Await() {
	for {
		s.mu.Lock()
		n := len(s.queue)
		s.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-s.more:
		case <-s.ctx.Done():
			return
		}
	}
}

func (s *awaitedStream) Recv() (provider.Event, error) {
	if ev, ok, err := s.RecvBuffered(); ok {
		return ev, err
	}
	s.unawaited.Add(1)
	return s.gatedStream.Recv()
}

// gatedChunk is an event, the error that ends the stream, or what the
// test does (then) when the engine reaches it.
type gatedChunk struct {
	ev   provider.Event
	err  error
	then func()
}

type gatedStream struct {
	ctx   context.Context
	mu    sync.Mutex
	queue []gatedChunk // released, not received
	more  chan struct{}
	// unawaited counts an awaitedStream's Recvs that had to wait.
	unawaited atomic.Int32
}

// release makes evs arrive at once, read and waiting for the engine.
func (s *gatedStream) release(evs ...provider.Event) {
	cs := make([]gatedChunk, len(evs))
	for i, ev := range evs {
		cs[i].ev = ev
	}
	s.add(cs...)
}

// fail makes err arrive after what was released: it ends the stream.
func (s *gatedStream) fail(err error) { s.add(gatedChunk{err: err}) }

// then has f run when the engine, reading on, gets past what was
// released before: after it took those events, before the next.
func (s *gatedStream) then(f func()) { s.add(gatedChunk{then: f}) }

func (s *gatedStream) add(cs ...gatedChunk) {
	s.mu.Lock()
	s.queue = append(s.queue, cs...)
	s.mu.Unlock()
	select {
	case s.more <- struct{}{}:
	default:
	}
}

func (s *gatedStream) Recv() (provider.Event, error) {
	for {
		if ev, ok, err := s.RecvBuffered(); ok {
			return ev, err
		}
		select {
		case <-s.more:
		case <-s.ctx.Done():
			return provider.Event{}, s.ctx.Err()
		}
	}
}

func (s *gatedStream) RecvBuffered() (provider.Event, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 && s.queue[0].then != nil {
		then := s.queue[0].then
		s.queue = s.queue[1:]
		then()
	}
	if len(s.queue) == 0 {
		return provider.Event{}, false, nil
	}
	c := s.queue[0]
	if c.err == nil {
		s.queue = s.queue[1:]
	}
	return c.ev, true, c.err
}

func (s *gatedStream) Close() error { return nil }

// heldSink hands the test each event as Send starts, and holds every Send
// until the test opens it: a client that has fallen behind.
type heldSink struct {
	enginetest.Recorder
	sent chan *llmrelayv1.GenerateEvent
	open chan struct{} // closed: Send returns
}

func newHeldSink() *heldSink {
	return &heldSink{sent: make(chan *llmrelayv1.GenerateEvent, 1024), open: make(chan struct{})}
}

func (s *heldSink) Send(ev *llmrelayv1.GenerateEvent) error {
	err := s.Recorder.Send(ev)
	s.sent <- ev
	<-s.open
	return err
}

// next returns the next event the engine sends, failing the test if none
// comes (the engine waits for something instead of sending).
func (s *heldSink) next(t *testing.T, what string) *llmrelayv1.GenerateEvent {
	t.Helper()
	select {
	case ev := <-s.sent:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no event was sent", what)
		return nil
	}
}

// gatedCall is one Generate call on a gated model, running; cancel ends
// it as a client that went away does.
type gatedCall struct {
	streams chan *gatedStream
	sink    *heldSink
	done    chan error
	cancel  context.CancelFunc
}

// startGated starts a call of model gated/<test name> on an engine with
// the streaming section st, its client held (heldSink).
func startGated(t *testing.T, st engine.Streaming, retry *llmrelayv1.RetryPolicy) *gatedCall {
	t.Helper()
	eng, stop, err := buildStreaming(st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	model := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	g := &gatedCall{streams: make(chan *gatedStream, 4), sink: newHeldSink(), done: make(chan error, 1)}
	gatedStreams.Store(model, g.streams)
	t.Cleanup(func() { gatedStreams.Delete(model) })
	req := &llmrelayv1.GenerateRequest{
		Model:    "gated/" + model,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
		Retry:    retry,
	}
	cctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	g.cancel = cancel
	ctx, _ := callinfo.NewContext(cctx)
	ctx, release, err := eng.Admission().Admit(ctx, engine.Caller{Method: llmrelayv1.LLMService_Generate_FullMethodName}, req)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer release()
		g.done <- eng.Generate(ctx, req, g.sink)
	}()
	return g
}

// stream returns the call's next attempt's stream.
func (g *gatedCall) stream(t *testing.T) *gatedStream {
	t.Helper()
	select {
	case s := <-g.streams:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("the call opened no provider stream")
		return nil
	}
}

// wait opens the client and waits for the call's end.
func (g *gatedCall) wait(t *testing.T) []*llmrelayv1.GenerateEvent {
	t.Helper()
	select {
	case <-g.sink.open:
	default:
		close(g.sink.open)
	}
	select {
	case err := <-g.done:
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end")
	}
	evs := g.sink.Events()
	for i, ev := range evs {
		if ev.GetSequence() != uint64(i+1) {
			t.Fatalf("event %d has sequence %d: sequence numbers must be dense", i, ev.GetSequence())
		}
	}
	return evs
}

func textEvent(s string) provider.Event { return provider.Event{Kind: provider.EventText, Text: s} }

// words returns the n chunks of text "w0 ", "w1 ", ...
func words(n int) []provider.Event {
	evs := make([]provider.Event, n)
	for i := range evs {
		evs[i] = textEvent(fmt.Sprintf("w%d ", i))
	}
	return evs
}

// describe writes each event compactly: "text w0 ", "tool 0 id=c1 name=f
// args={}", "reasoning 0 ...", "will_retry", "final <text>".
func describe(evs []*llmrelayv1.GenerateEvent) []string {
	var out []string
	for _, ev := range evs {
		d := ev.GetDelta()
		switch {
		case ev.GetFinal() != nil:
			out = append(out, "final "+ev.GetFinal().GetMessage().GetContent())
		case ev.GetWillRetry() != nil:
			out = append(out, "will_retry")
		case d.GetToolCall() != nil:
			tc := d.GetToolCall()
			out = append(out, fmt.Sprintf("tool %d id=%s name=%s args=%s", tc.GetIndex(), tc.GetId(), tc.GetName(), tc.GetArgumentsDelta()))
		case d.GetReasoning() != nil:
			r := d.GetReasoning()
			out = append(out, fmt.Sprintf("reasoning %d %q sig=%s", r.GetIndex(), r.GetText(), r.GetSignature()))
		case d.GetRefusal() != "":
			out = append(out, "refusal "+d.GetRefusal())
		case d != nil:
			out = append(out, "text "+d.GetText())
		default:
			out = append(out, "other")
		}
	}
	return out
}

// TestCoalescedBurst: a client that fell behind while 19 chunks arrived
// gets them as one delta right after the one it was reading: the whole
// text in at most 3 events (here 2), then the Final.
func TestCoalescedBurst(t *testing.T) {
	g := startGated(t, engine.DefaultStreaming(), nil)
	s := g.stream(t)
	chunks := words(20)
	s.release(chunks[0])
	if got := describe([]*llmrelayv1.GenerateEvent{g.sink.next(t, "the first chunk")}); got[0] != "text w0 " {
		t.Fatalf("first event %v, want the first chunk", got)
	}
	// The client is still reading the first event: the rest of the reply
	// arrives meanwhile, whole.
	s.release(chunks[1:]...)
	s.release(provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
	s.fail(io.EOF)
	evs := g.wait(t)
	got := describe(evs)
	want := []string{"text w0 ", "text " + strings.TrimPrefix(enginetestText(20), "w0 "), "final " + enginetestText(20)}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if deltas := len(evs) - 1; deltas > 3 {
		t.Errorf("%d deltas for a burst of 20 chunks, want at most 3", deltas)
	}
}

// TestPacedChunksAreEachTheirOwnEvent: chunks that arrive one at a time
// (an upstream 20 ms apart) are each sent as soon as it arrives: the test
// releases the next chunk only once the engine has sent the one before,
// so an engine that waited for more would hang here.
func TestPacedChunksAreEachTheirOwnEvent(t *testing.T) {
	g := startGated(t, engine.DefaultStreaming(), nil)
	close(g.sink.open) // the client keeps up
	s := g.stream(t)
	for i, c := range words(20) {
		s.release(c)
		if got := describe([]*llmrelayv1.GenerateEvent{g.sink.next(t, fmt.Sprintf("chunk %d", i))}); got[0] != "text "+c.Text {
			t.Fatalf("event for chunk %d: %v, want %q", i, got, c.Text)
		}
	}
	s.release(provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
	s.fail(io.EOF)
	if evs := g.wait(t); len(evs) != 21 {
		t.Errorf("%d events, want 20 deltas and the Final", len(evs))
	}
}

// TestCoalescingOff: with streaming.coalesce_deltas off, the same burst is
// one event per chunk.
func TestCoalescingOff(t *testing.T) {
	g := startGated(t, engine.Streaming{CoalesceDeltas: false}, nil)
	s := g.stream(t)
	chunks := words(20)
	s.release(chunks[0])
	g.sink.next(t, "the first chunk")
	s.release(chunks[1:]...)
	s.fail(io.EOF)
	evs := g.wait(t)
	if len(evs) != 21 || evs[20].GetFinal().GetMessage().GetContent() != enginetestText(20) {
		t.Errorf("events:\n%s\nwant 20 deltas, one per chunk, and the Final", strings.Join(describe(evs), "\n"))
	}
}

// TestCoalescingKeepsKindsAndOrder: only deltas of the same kind join (a
// tool call's fragments per call, a reasoning block's per block); a delta
// of another kind, or of another call, starts a new event, in the order
// they arrived. The Final is the same as without coalescing.
func TestCoalescingKeepsKindsAndOrder(t *testing.T) {
	tool := func(i int, id, name, args string) provider.Event {
		return provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: i, ID: id, Name: name, ArgumentsDelta: args}}
	}
	reasoning := func(text, sig string) provider.Event {
		return provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Text: text, Signature: sig}}
	}
	burst := []provider.Event{
		reasoning("think ", ""), reasoning("more", ""), reasoning("", "sig"),
		textEvent("b"), textEvent("c"),
		tool(0, "c1", "f", `{"x":`), tool(0, "", "", `1}`),
		tool(1, "c2", "g", `{`), tool(1, "", "", `}`),
		textEvent("d"),
		{Kind: provider.EventFinish, FinishReason: provider.FinishToolCalls},
	}
	var finals []*llmrelayv1.Final
	for _, tc := range []struct {
		name string
		st   engine.Streaming
		want []string
	}{
		{"coalesced", engine.DefaultStreaming(), []string{
			"text a", `reasoning 0 "think more" sig=sig`, "text bc",
			`tool 0 id=c1 name=f args={"x":1}`, "tool 1 id=c2 name=g args={}", "text d", "final abcd"}},
		{"one per chunk", engine.Streaming{}, []string{
			"text a", `reasoning 0 "think " sig=`, `reasoning 0 "more" sig=`, `reasoning 0 "" sig=sig`, "text b", "text c",
			`tool 0 id=c1 name=f args={"x":`, "tool 0 id= name= args=1}", "tool 1 id=c2 name=g args={", "tool 1 id= name= args=}",
			"text d", "final abcd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGated(t, tc.st, nil)
			s := g.stream(t)
			s.release(textEvent("a"))
			g.sink.next(t, "the first chunk")
			s.release(burst...)
			s.fail(io.EOF)
			evs := g.wait(t)
			if got := describe(evs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			finals = append(finals, evs[len(evs)-1].GetFinal())
		})
	}
	if len(finals) == 2 && !proto.Equal(finals[0].GetMessage(), finals[1].GetMessage()) {
		t.Errorf("the Final differs with coalescing:\n%v\nwithout:\n%v", finals[0].GetMessage(), finals[1].GetMessage())
	}
}

// TestCoalescedDeltasPrecedeWillRetry: deltas already read when the
// provider's stream fails are sent before the WillRetry that discards
// them, and the retry's deltas follow it.
func TestCoalescedDeltasPrecedeWillRetry(t *testing.T) {
	g := startGated(t, engine.DefaultStreaming(), &llmrelayv1.RetryPolicy{
		MaxAttempts: 2, InitialBackoff: durationpb.New(time.Millisecond), Midstream: llmrelayv1.Midstream_MIDSTREAM_RESTART,
	})
	s := g.stream(t)
	s.release(textEvent("a"))
	g.sink.next(t, "the first chunk")
	s.release(textEvent("b"), textEvent("c"))
	s.fail(&provider.Error{Kind: provider.KindTransport, Class: provider.ClassTransport, Message: "connection reset", Err: errors.New("reset")})
	close(g.sink.open)
	s2 := g.stream(t)
	s2.release(textEvent("x"), textEvent("y"))
	s2.fail(io.EOF)
	evs := g.wait(t)
	want := []string{"text a", "text bc", "will_retry", "text xy", "final xy"}
	if got := describe(evs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestStalledAttemptThatEndedWholeShowsItsLastDelta: an attempt whose
// stall timeout passes while it holds a coalesced delta, and whose
// provider's stream then ends whole, succeeds with that delta shown: its
// deltas concatenate to its Final, as without coalescing.
func TestStalledAttemptThatEndedWholeShowsItsLastDelta(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   engine.Streaming
		want string
	}{
		{"coalesced", engine.DefaultStreaming(), "text a|text bc|final abc"},
		{"one per chunk", engine.Streaming{}, "text a|text b|text c|final abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stalls := make(chan func(), 4)
			engine.SetTestStallStarted(func(stall func()) { stalls <- stall })
			defer engine.SetTestStallStarted(nil)
			g := startGated(t, tc.st, nil)
			s := g.stream(t)
			stall := <-stalls // handed over before the stream opened
			s.release(textEvent("a"))
			g.sink.next(t, "the first chunk")
			// While the client reads it, the rest of the reply arrives,
			// and the attempt stalls between its last text and its end.
			s.release(textEvent("b"), textEvent("c"))
			s.then(stall)
			s.release(provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
			s.fail(io.EOF)
			if got := strings.Join(describe(g.wait(t)), "|"); got != tc.want {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCallEndedAsItsReplyEndedSendsNothingMore: a call that ends (its
// client went away) while its attempt holds a coalesced delta, just
// before the provider's stream ends whole, sends nothing more: neither
// that delta nor a Final, which would hold text the deltas never showed.
func TestCallEndedAsItsReplyEndedSendsNothingMore(t *testing.T) {
	g := startGated(t, engine.DefaultStreaming(), nil)
	s := g.stream(t)
	s.release(textEvent("a"))
	g.sink.next(t, "the first chunk")
	s.release(textEvent("b"), textEvent("c"))
	s.then(g.cancel)
	s.release(provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
	s.fail(io.EOF)
	close(g.sink.open)
	select {
	case err := <-g.done:
		if status.Code(err) != codes.Canceled {
			t.Errorf("Generate: %v, want CANCELLED: the call ended by its client", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end")
	}
	if got := strings.Join(describe(g.sink.Events()), "|"); got != "text a" {
		t.Errorf("events %q, want %q alone", got, "text a")
	}
}

// enginetestText is the text of words(n).
func enginetestText(n int) string {
	var b strings.Builder
	for _, w := range words(n) {
		b.WriteString(w.Text)
	}
	return b.String()
}

// TestRelayAwaitsItsNextEvent: a call whose provider stream can wait for
// its next event (provider.AwaitStream; httpx's can) waits there, holding
// no event of its own and no delta in the making, and never in a read: the
// reply still arrives delta by delta as the provider sends it, and a burst
// already read as one delta.
func TestRelayAwaitsItsNextEvent(t *testing.T) {
	var waits, holding atomic.Int32
	engine.SetTestAwaiting(func(holdsDelta bool) {
		waits.Add(1)
		if holdsDelta {
			holding.Add(1)
		}
	})
	defer engine.SetTestAwaiting(nil)
	g := startGated(t, engine.Streaming{CoalesceDeltas: true}, nil)
	s := g.stream(t)
	close(g.sink.open)
	for _, w := range []string{"one ", "two ", "three "} {
		s.release(textEvent(w))
		if got := g.sink.next(t, w).GetDelta().GetText(); got != w {
			t.Fatalf("got the delta %q, want %q", got, w)
		}
	}
	s.release(textEvent("four "), textEvent("five "), textEvent("six "))
	if got := g.sink.next(t, "four five six ").GetDelta().GetText(); got != "four five six " {
		t.Fatalf("got the delta %q, want the burst joined", got)
	}
	s.fail(io.EOF)
	evs := g.wait(t)
	if got := describe(evs); strings.Join(got, "|") != "text one |text two |text three |text four five six |final one two three four five six " {
		t.Errorf("the client got %q", got)
	}
	if n := s.unawaited.Load(); n != 0 {
		t.Errorf("the relay waited %d times in a read instead of in Await", n)
	}
	if n := waits.Load(); n < 5 {
		t.Errorf("the relay waited %d times for its provider, want one before each delta and the end", n)
	}
	if n := holding.Load(); n != 0 {
		t.Errorf("the relay held a delta in the making in %d of its %d waits", n, waits.Load())
	}
}
