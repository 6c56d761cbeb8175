package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// structured is the structured-output side of one call: the session that
// checks each completed attempt's reply and counts the re-asks, and what
// the request asked for. A nil *structured is a call without
// response_format; its methods then report nothing to do.
type structured struct {
	session *schema.Session
	// reasks is the most re-asks the call may make.
	reasks int
	// returnText: ON_INVALID_RETURN_TEXT.
	returnText bool
	// partials: stream_partial_objects; interval: the time left between
	// two partial objects of an attempt.
	partials bool
	interval time.Duration
}

// newStructured compiles the response format's schema (through the
// server's cache), puts its canonical JSON into the provider request, and
// starts the call's session: the one place the re-asks a call may make
// are decided, none when its client keeps what it was shown (keepsShown:
// see ShownOutputKeeper), whether rf is the request's or its route's
// default. A schema that is invalid, too large, or that no reply could be
// checked against within the validation budget (schema.Schema.Admit) is
// an INVALID_ARGUMENT *apierr.Error, before any provider call.
func (s *Engine) newStructured(rf *llmrelayv1.ResponseFormat, preq *provider.Request, keepsShown bool) (*structured, error) {
	sch, err := s.schemas.Compile(preq.ResponseFormat.Schema)
	if err == nil {
		err = sch.Admit()
	}
	if err != nil {
		return nil, apierr.FromError(err)
	}
	preq.ResponseFormat.Schema = sch.JSON()
	n := s.schemaCfg.ValidationRetries(rf.MaxValidationRetries)
	if keepsShown {
		n = 0
	}
	return &structured{
		session:    schema.NewSession(sch, n),
		reasks:     n,
		returnText: rf.GetOnInvalid() == llmrelayv1.OnInvalid_ON_INVALID_RETURN_TEXT,
		partials:   rf.GetStreamPartialObjects(),
		interval:   s.schemaCfg.PartialObjectInterval(rf.GetPartialObjectInterval().AsDuration()),
	}, nil
}

// retries returns the re-asks made so far, as the session counts them for
// Final.validation_retries.
func (so *structured) retries() int {
	if so == nil {
		return 0
	}
	return so.session.Retries()
}

// maxReasks returns the most re-asks the call may make.
func (so *structured) maxReasks() int {
	if so == nil {
		return 0
	}
	return so.reasks
}

// newPartial returns the partial-object reader of an attempt, nil when the
// call does not stream partial objects.
func (so *structured) newPartial() *partialObjects {
	if so == nil || !so.partials {
		return nil
	}
	return &partialObjects{Partial: schema.NewPartial(), cache: map[containerID]*converted{}, interval: so.interval}
}

// partialRatio is the bound on partial objects' bytes: the partial_object
// events of an attempt, each counted as its whole encoded GenerateEvent,
// total at most partialRatio × the bytes of reply text the attempt
// received so far. A snapshot made when only a string being written grew
// must keep them within partialRatio/2 × the text, which leaves the rest
// of the budget to the structural changes (a value started or completed).
//
// With each snapshot about as large as the text it shows, this sends a
// snapshot every time the text grew by about a third (R/(R-1) for a
// budget of R × the text): dense while the reply is short, then spaced
// geometrically, so the bytes stay linear in the reply while the last
// snapshot before the final shows most of it (inside a long string, the
// half budget spaces them at each doubling instead).
// proto/llmrelay/v1/llmrelay.proto documents the bound to clients.
const partialRatio = 4

// partialObjects reads one attempt's reply as it streams, decides which
// snapshots to send under the byte bound (partialRatio) and the interval,
// and converts them to google.protobuf.Value. Each snapshot is converted
// whole, but the arrays and objects that were already converted for the
// previous one are reused: schema.Partial hands out the same map or slice
// for a member once it is complete, and never modifies it.
type partialObjects struct {
	*schema.Partial
	// cache holds the conversions of the containers of the last snapshot,
	// by identity; each entry keeps its source alive, so an address
	// cannot be reused by another container while it is cached.
	cache map[containerID]*converted
	gen   uint64

	// text counts the reply's bytes fed so far; sent the bytes of the
	// partial_object events sent (at most partialRatio × text).
	text, sent int
	// want is the size of the last snapshot built: a snapshot only grows,
	// so none is built again until the budget has room for that much. It
	// keeps the work of building snapshots proportional to what is sent.
	want int
	// marks is the Partial's Marks at the last snapshot sent.
	marks int
	// interval is the time left between two partial objects; last is when
	// the last one went out.
	interval time.Duration
	last     time.Time
}

// room returns how many bytes the next partial_object event may take.
func (p *partialObjects) room() int {
	if p.Marks() == p.marks {
		return partialRatio/2*p.text - p.sent
	}
	return partialRatio*p.text - p.sent
}

// next feeds the next piece of the reply and returns the partial_object
// event to send for it, nil when none is due: nothing changed, the budget
// has no room, the interval has not passed, or the snapshot does not
// convert (partial objects are best effort). The event is counted as sent.
func (p *partialObjects) next(delta string, attempt int) *llmrelayv1.GenerateEvent {
	p.text += len(delta)
	if !p.Feed(delta) {
		return nil
	}
	room := p.room()
	if room < p.want {
		return nil
	}
	var now time.Time
	if p.interval > 0 {
		now = time.Now()
		if !p.last.IsZero() && now.Sub(p.last) < p.interval {
			return nil
		}
	}
	ev := p.event(attempt)
	if ev == nil {
		return nil
	}
	// The size with the largest sequence number the event could carry: the
	// emitter numbers it when it sends it.
	ev.Sequence = math.MaxUint64
	size := proto.Size(ev)
	p.want = size
	if size > room {
		return nil
	}
	p.sent += size
	p.marks = p.Marks()
	p.last = now
	return ev
}

// event returns the partial_object event of the current snapshot for
// attempt, nil when there is none or it does not convert.
func (p *partialObjects) event(attempt int) *llmrelayv1.GenerateEvent {
	v, ok := p.Snapshot()
	if !ok {
		return nil
	}
	pv, err := p.convert(v)
	if err != nil {
		return nil
	}
	return &llmrelayv1.GenerateEvent{Attempt: uint32(attempt), Event: &llmrelayv1.GenerateEvent_PartialObject{PartialObject: pv}}
}

// containerID is the identity of a non-empty map or slice: its data
// pointer (and length, for a slice).
type containerID struct {
	ptr uintptr
	n   int
}

type converted struct {
	src any
	v   *structpb.Value
	gen uint64
}

// convert converts a snapshot, reusing what it can, and forgets the
// containers the snapshot no longer holds.
func (p *partialObjects) convert(v any) (*structpb.Value, error) {
	p.gen++
	out, err := p.value(v)
	for id, c := range p.cache {
		if c.gen != p.gen {
			delete(p.cache, id)
		}
	}
	return out, err
}

func (p *partialObjects) value(v any) (*structpb.Value, error) {
	var id containerID
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return structpb.NewValue(x)
		}
		id = containerID{ptr: reflect.ValueOf(x).Pointer()}
	case []any:
		if len(x) == 0 {
			return structpb.NewValue(x)
		}
		id = containerID{ptr: reflect.ValueOf(x).Pointer(), n: len(x)}
	default:
		return structpb.NewValue(v)
	}
	if c, ok := p.cache[id]; ok {
		c.gen = p.gen
		return c.v, nil
	}
	var out *structpb.Value
	switch x := v.(type) {
	case map[string]any:
		fields := make(map[string]*structpb.Value, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, fmt.Errorf("invalid UTF-8 in the key %q", k)
			}
			fv, err := p.value(e)
			if err != nil {
				return nil, err
			}
			fields[k] = fv
		}
		out = structpb.NewStructValue(&structpb.Struct{Fields: fields})
	case []any:
		values := make([]*structpb.Value, len(x))
		for i, e := range x {
			ev, err := p.value(e)
			if err != nil {
				return nil, err
			}
			values[i] = ev
		}
		out = structpb.NewListValue(&structpb.ListValue{Values: values})
	}
	p.cache[id] = &converted{src: v, v: out, gen: p.gen}
	return out, nil
}

// checkOutput checks the reply of attempt n, which completed. It returns
// res for the Final when the reply conforms (with res.object set) or when
// it stays invalid under ON_INVALID_RETURN_TEXT (object unset); the plan's
// re-ask step, after sending the WillRetry, when the model is re-asked; and
// otherwise the ABORTED *apierr.Error that ends the call. A reply that
// cannot be checked (the validation budget spent, or ctx ended first) ends
// the call with the check's error.
func (c *call) checkOutput(ctx context.Context, n int, res *attemptResult) (*attemptResult, error) {
	out, err := c.turn.so.session.Check(ctx, n, res.text.String())
	if err != nil {
		return nil, err
	}
	switch out.Verdict {
	case schema.Accept:
		v, err := structpb.NewValue(out.Value)
		if err != nil {
			return nil, fmt.Errorf("converting the object: %w", err)
		}
		res.object = v
		return res, nil
	case schema.Reask:
		return nil, c.reask(n, res, out)
	}
	if c.turn.so.returnText {
		return res, nil
	}
	var ioe *schema.InvalidOutputError
	if !errors.As(out.Err, &ioe) {
		return nil, fmt.Errorf("a give-up verdict without its error: %w", out.Err)
	}
	return nil, apierr.InvalidOutput(ioe, c.providerName())
}

// reask announces the re-ask after attempt n's invalid reply (a WillRetry
// with reason INVALID_OUTPUT, no delay, discard_partial, and the
// validation errors as its cause), and adds the reply and the errors to the
// conversation the next attempt sends. It returns the plan's re-ask step's
// Continue, which makes the next attempt follow at once, or a *sendError.
func (c *call) reask(n int, res *attemptResult, out schema.Outcome) error {
	var ioe *schema.InvalidOutputError
	if !errors.As(out.Err, &ioe) {
		return fmt.Errorf("a re-ask verdict without its error: %w", out.Err)
	}
	name := c.providerName()
	step := c.turn.plan.Reask(out.Err)
	c.eng.log.Info("retrying",
		"request_id", c.requestID, "provider", name, "attempt", n, "reason", retry.ReasonInvalidOutput.String(),
		"delay", time.Duration(0), "discard_partial", true, "validation_retry", c.turn.so.retries(), "error", out.Err)
	c.eng.metrics.Retry(name, retry.ReasonInvalidOutput.String())
	c.eng.metrics.ValidationRetry(name)
	if err := c.sendWillRetry(n, step, &llmrelayv1.WillRetry{
		Reason:         llmrelayv1.RetryReason_RETRY_REASON_INVALID_OUTPUT,
		Delay:          durationpb.New(0),
		DiscardPartial: true,
		Cause:          apierr.InvalidOutputCause(ioe, name),
	}); err != nil {
		return err
	}
	c.turn.prepared.Store(nil) // built without the re-ask's messages
	c.turn.preq.Messages = append(c.turn.preq.Messages,
		res.providerMessage(),
		provider.Message{Role: provider.RoleUser, Content: out.Reask})
	return step.Continue()
}

// sendPartial feeds an attempt's text delta to its partial-object reader
// and sends the partial_object event it makes, if any (see
// partialObjects.next). Its error is a *sendError.
func (c *call) sendPartial(n int, text string, res *attemptResult) error {
	if res.partial == nil {
		return nil
	}
	ev := res.partial.next(text, n)
	if ev == nil {
		return nil
	}
	res.partials++
	if err := c.out.send(ev); err != nil {
		return &sendError{err}
	}
	return nil
}

// fillFinal adds the structured-output fields to the call's Final.
func (so *structured) fillFinal(f *llmrelayv1.Final, res *attemptResult) {
	if so == nil {
		return
	}
	f.Object = res.object
	f.ValidationRetries = uint32(so.session.Retries())
	for _, v := range so.session.Errors() {
		f.ValidationErrors = append(f.ValidationErrors, &llmrelayv1.ValidationError{
			Attempt:          uint32(v.Attempt),
			InstanceLocation: v.InstanceLocation,
			KeywordLocation:  v.KeywordLocation,
			Message:          v.Message,
		})
	}
}
