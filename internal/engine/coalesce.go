package engine

import (
	"sync"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// Streaming is the streaming section: how deltas reach the client.
type Streaming struct {
	// CoalesceDeltas relays the deltas of the same kind that the provider
	// sent while the previous event was being sent, already read, as one
	// delta (text concatenated, a tool call's or a reasoning block's
	// fragments merged), never waiting for more: a client that falls
	// behind gets the same reply in fewer, fuller events. Off, every
	// provider chunk is its own event. On by default.
	CoalesceDeltas bool `yaml:"coalesce_deltas"`
}

// DefaultStreaming returns the streaming section's defaults: deltas
// coalesced.
func DefaultStreaming() Streaming { return Streaming{CoalesceDeltas: true} }

// pendingDelta is the delta an attempt has folded and not sent yet. While
// the provider's stream holds more events already read
// (provider.BufferedStream), the deltas of the same kind among them join
// it; it is sent (flushDelta) before the attempt waits for the provider,
// before any delta that does not join it and before the attempt ends. So
// no delta waits for anything that has not arrived, and events keep their
// order: sequence numbers stay dense because the emitter numbers what is
// sent.
type pendingDelta struct {
	// kind is the kind of the pending delta; 0 when none is pending.
	kind provider.EventKind
	// index is the tool call's or the reasoning block's.
	index int
	// first is the first fragment's text (the text, the refusal, the
	// arguments, the reasoning text); joined holds it with the fragments
	// that joined it, once there are some (n > 1). joined is reused.
	first  string
	joined []byte
	n      int
	// A tool call's id and name; a reasoning block's signature, redacted
	// data and format. Each comes in one fragment: two fragments that both
	// carry one do not join.
	id, name                    string
	signature, redacted, format string
}

// coalescing is an attempt's delta in the making: the delta pending and
// the fragment being folded into it. An attempt holds one only while it
// has events to handle: relay gives it back before it waits for the
// provider with nothing pending, so a held stream keeps none (256 bytes,
// and the joined text's buffer).
type coalescing struct {
	pending pendingDelta
	frag    fragment
}

var coalescings = sync.Pool{New: func() any { return new(coalescing) }}

// maxPooledJoined bounds the joined-text buffer a coalescing keeps in the
// pool: a burst's text is a few hundred bytes; a larger buffer is let go.
const maxPooledJoined = 4 << 10

// delta returns res's coalescing, taking one when it holds none.
func (res *attemptResult) delta() *coalescing {
	if res.co == nil {
		res.co = coalescings.Get().(*coalescing)
	}
	return res.co
}

// pending is res's pending delta; nil when none is pending.
func (res *attemptResult) pending() *pendingDelta {
	if res.co == nil || res.co.pending.kind == 0 {
		return nil
	}
	return &res.co.pending
}

// dropDelta gives res's coalescing back to the pool, holding nothing of
// the texts it was given, when no delta is pending. An attempt whose
// stream cannot wait (no provider.AwaitStream) keeps its coalescing to
// its end, and lets the collector have it; not giving it back there keeps
// runAttempt's frame, which is under every send, as small as it was.
func (res *attemptResult) dropDelta() {
	co := res.co
	if co == nil || res.pending() != nil {
		return
	}
	res.co = nil
	joined := co.pending.joined[:0]
	if cap(joined) > maxPooledJoined {
		joined = nil
	}
	*co = coalescing{pending: pendingDelta{joined: joined}}
	coalescings.Put(co)
}

// testAwaiting, set by tests, is called as an attempt starts waiting for
// its provider (provider.AwaitStream), with whether it still holds a
// coalescing.
var testAwaiting func(holdsDelta bool)

// fragment is one delta's fields, as fold makes them.
type fragment struct {
	kind                        provider.EventKind
	index                       int
	text                        string
	id, name                    string
	signature, redacted, format string
}

// joins reports whether f can join the pending delta: the same kind, for
// a tool call or reasoning the same index, and no field that both carry
// once.
func (p *pendingDelta) joins(f *fragment) bool {
	if p.kind != f.kind || p.index != f.index {
		return false
	}
	switch f.kind {
	case provider.EventToolCall:
		return (p.id == "" || f.id == "") && (p.name == "" || f.name == "") && (p.signature == "" || f.signature == "")
	case provider.EventReasoning:
		return (p.signature == "" || f.signature == "") && (p.redacted == "" || f.redacted == "") && (p.format == "" || f.format == "")
	}
	return true
}

// start makes f the pending delta.
func (p *pendingDelta) start(f *fragment) {
	*p = pendingDelta{kind: f.kind, index: f.index, first: f.text, joined: p.joined[:0], n: 1,
		id: f.id, name: f.name, signature: f.signature, redacted: f.redacted, format: f.format}
}

// join adds f to the pending delta (joins(f) holds).
func (p *pendingDelta) join(f *fragment) {
	if p.n == 1 {
		p.joined = append(p.joined[:0], p.first...)
	}
	p.joined = append(p.joined, f.text...)
	p.n++
	p.id, p.name = p.id+f.id, p.name+f.name
	p.signature, p.redacted, p.format = p.signature+f.signature, p.redacted+f.redacted, p.format+f.format
}

// text returns the pending delta's text, joined.
func (p *pendingDelta) text() string {
	if p.n == 1 {
		return p.first
	}
	return string(p.joined)
}

// event returns the pending delta as the event the client gets.
func (p *pendingDelta) event() *deltaEvent {
	if p.kind == provider.EventReasoning {
		de := newReasoningDeltaEvent()
		de.r.Index, de.r.Text, de.r.Signature, de.r.Redacted, de.r.Format = uint32(p.index), p.text(), p.signature, p.redacted, p.format
		return &de.deltaEvent
	}
	de := newDeltaEvent()
	switch p.kind {
	case provider.EventText:
		de.delta.Text = p.text()
	case provider.EventRefusal:
		de.delta.Refusal = p.text()
	case provider.EventToolCall:
		de.delta.ToolCall = &llmrelayv1.ToolCallDelta{Index: uint32(p.index), Id: p.id, Name: p.name, ArgumentsDelta: p.text(), Signature: p.signature}
	}
	return de
}

// queueDelta makes f attempt a's next delta: it joins the pending delta
// when it can, else the pending delta is sent and f takes its place. The
// first delta commits the attempt (errLost when another attempt of its
// race committed first). Before an attempt's first delta, the sink is
// given the usage its provider reported so far (EarlyUsageSink). Its other
// errors are *sendError.
func (c *call) queueDelta(a *retry.Attempt, f *fragment, res *attemptResult, stall *stallTimer) error {
	p := &res.co.pending
	if p.kind != 0 && p.joins(f) {
		p.join(f)
		return nil
	}
	if err := c.flushDelta(a, res, stall); err != nil {
		return err
	}
	if !a.Commit() {
		return errLost
	}
	if res.deltas == 0 {
		// The attempt's first delta: what its provider reported before
		// it is the usage a door may show as the reply starts.
		c.out.earlyUsage(res.usage, res.reported)
	}
	p.start(f)
	return nil
}

// flushDelta sends attempt a's pending delta, if any, and for text the
// partial object it completes (stream_partial_objects). Sending is not the
// provider's time: a client slow to read must not make the provider look
// stalled. Its error is a *sendError.
func (c *call) flushDelta(a *retry.Attempt, res *attemptResult, stall *stallTimer) error {
	p := res.pending()
	if p == nil {
		return nil
	}
	kind, de := p.kind, p.event()
	var text string
	if kind == provider.EventText {
		text = de.delta.Text
	}
	p.kind = 0
	stall.relay()
	defer stall.relayed()
	if !c.firstDelta {
		c.firstDelta = true
		c.eng.metrics.FirstToken(c.labels(a.Target), time.Since(c.start))
		c.answerHeaders(a)
	}
	res.deltas++
	de.event.Attempt = uint32(a.N)
	if err := c.out.send(&de.event); err != nil {
		return &sendError{err}
	}
	if kind == provider.EventText {
		return c.sendPartial(a.N, text, res)
	}
	return nil
}
