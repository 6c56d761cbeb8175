// Package callinfo is the engine's call record: what llmrelay learns about
// one call while it runs (its request id, the caller's key name, the model
// it asked for and the targets that model resolved to, the attempts it
// took, the annotations its hooks made, the hold on its budgets), from the
// one place that learns each (the engine's admission steps, Generate and
// its attempt plan) to the code that needs it: the provider queue and
// Generate use the resolved targets, Generate settles the hold, and a
// door's log lines and errors report the rest.
//
// A door puts an *Info in the call's context (NewContext) before it admits
// the call; every admission step and the engine find it with From. All
// methods are safe for concurrent use and do nothing on a nil *Info.
package callinfo

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// Info is one call's record.
type Info struct {
	mu        sync.Mutex
	requestID string
	key       string
	model     string
	resolved  *route.Resolved
	hold      *spend.Hold
	attempts  int
	metadata  []Label
	// end is what the call recorded as it ended (RecordUsage,
	// RecordServed), made then: a held call keeps only the pointer.
	end   *ending
	notes []Label
	// iface is the interface the call came in by (InterfaceGRPC, or an
	// HTTP door's).
	iface string
	// onAuth runs once the call has passed authentication.
	onAuth func()
	// authed: the call passed authentication.
	authed bool
	// attach is admission's decision whether the call attaches to a
	// resumable call kept already (SetAttach): attachUndecided until made.
	attach attachDecision

	// turns is the call's model turns; toolCalls and toolErrors count
	// its server tool calls and those whose result is an error.
	turns, toolCalls, toolErrors int
}

// ending is what a call records as it ends.
type ending struct {
	// usage is what the call consumed, when hasUsage.
	usage    Usage
	hasUsage bool
	// servedBy and servedModel are the target that answered the call.
	servedBy, servedModel string
}

// ending returns i's end record, made on first use; i.mu must be held.
func (i *Info) ending() *ending {
	if i.end == nil {
		i.end = new(ending)
	}
	return i.end
}

// Label is one of the request's metadata pairs, as the log keeps it.
type Label struct{ Key, Value string }

// Labels are a call's metadata labels or its hooks' annotations.
type Labels []Label

// LogValue implements slog.LogValuer: a group of the labels.
func (ls Labels) LogValue() slog.Value {
	attrs := make([]slog.Attr, len(ls))
	for i, l := range ls {
		attrs[i] = slog.String(l.Key, l.Value)
	}
	return slog.GroupValue(attrs...)
}

// Bounds on the metadata a call record keeps for the log (the contract
// allows 64 pairs, keys of 128 bytes and values of 1024; requests beyond it
// fail validation, but are recorded before it).
const (
	MaxLabels        = 64
	MaxLabelKeyLen   = 128
	MaxLabelValueLen = 256
)

// MaxFieldLen bounds what Info keeps of client-supplied text (model,
// request id), so an oversized invalid request cannot flood the logs.
const MaxFieldLen = 256

type ctxKey struct{}

// NewContext returns ctx carrying a new, empty Info, and that Info.
func NewContext(ctx context.Context) (context.Context, *Info) {
	info := &Info{}
	return context.WithValue(ctx, ctxKey{}, info), info
}

// From returns the call's Info, or nil when ctx has none.
func From(ctx context.Context) *Info {
	info, _ := ctx.Value(ctxKey{}).(*Info)
	return info
}

// RecordRequest records the request's model and client-chosen request id,
// in its canonical form (CanonicalRequestID). The client's id replaces one
// made up before the request arrived (the log fields of a stream call are
// first read before its request is received). A request id that is not a
// UUID is not kept (the request fails validation anyway); RequestID then
// makes one up.
func (i *Info) RecordRequest(model, requestID string) {
	if i == nil {
		return
	}
	id, ok := CanonicalRequestID(requestID)
	i.mu.Lock()
	defer i.mu.Unlock()
	i.model = clip(model)
	if ok {
		i.requestID = id
	}
}

// CanonicalRequestID returns a client's request id in the one form the
// server knows a call by: a UUID's 36 characters in lower case (a UUID's
// hexadecimal digits are case-insensitive, RFC 9562, and its canonical
// text is lower case), and true. Every use of an id (the call record and
// so the logs, errors and response headers; the resumable calls, Resume
// and a repeated Generate) goes through it, so that an id in upper or
// mixed case names the same call as its lower-case form. An id that is
// not a UUID in that form is returned as it is, with false.
func CanonicalRequestID(id string) (string, bool) {
	if len(id) != 36 {
		return id, false
	}
	if _, err := uuid.Parse(id); err != nil {
		return id, false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c >= 'A' && c <= 'F' {
			return strings.ToLower(id), true
		}
	}
	return id, true
}

// RecordMetadata records the request's metadata labels, for the call's
// log line: at most MaxLabels pairs, in key order, keys cut to
// MaxLabelKeyLen bytes and values to MaxLabelValueLen.
func (i *Info) RecordMetadata(md map[string]string) {
	if i == nil || len(md) == 0 {
		return
	}
	keys := slices.Sorted(maps.Keys(md))
	labels := make([]Label, 0, min(len(keys), MaxLabels))
	for _, k := range keys[:min(len(keys), MaxLabels)] {
		labels = append(labels, Label{Key: clipTo(k, MaxLabelKeyLen), Value: clipTo(md[k], MaxLabelValueLen)})
	}
	i.mu.Lock()
	i.metadata = labels
	i.mu.Unlock()
}

// Metadata returns the labels RecordMetadata kept; the caller must not
// modify them. It returns nil on a nil Info.
func (i *Info) Metadata() []Label {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.metadata
}

// InterfaceGRPC is the interface of a call of llmrelay's gRPC API; the
// HTTP doors name theirs ("openai", "openai-responses", "anthropic").
const InterfaceGRPC = "grpc"

// SetInterface records the interface, the door, the call came in by. A
// door other than the gRPC service sets it before admission.
func (i *Info) SetInterface(name string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.iface = name
	i.mu.Unlock()
}

// Interface returns the interface the call came in by: InterfaceGRPC
// unless a door said otherwise.
func (i *Info) Interface() string {
	if i == nil {
		return InterfaceGRPC
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.iface == "" {
		return InterfaceGRPC
	}
	return i.iface
}

// SetKey records the name of the caller's API key.
func (i *Info) SetKey(name string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.key = name
	i.mu.Unlock()
}

// SetResolved records the targets the request's model (and its
// fallback_models) resolved to. The chain's model resolution link calls
// it, once; see Resolved.
func (i *Info) SetResolved(r *route.Resolved) {
	if i == nil || r == nil || len(r.Targets) == 0 {
		return
	}
	i.mu.Lock()
	i.resolved = r
	i.mu.Unlock()
}

// SetHold records the call's budget hold (admission's budget step), which
// the call settles as it ends.
func (i *Info) SetHold(h *spend.Hold) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.hold = h
	i.mu.Unlock()
}

// Hold returns the call's budget hold, nil when it has none (no key, or
// no budget step ran).
func (i *Info) Hold() *spend.Hold {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.hold
}

// attachDecision is whether a call attaches, once decided.
type attachDecision uint8

const (
	attachUndecided attachDecision = iota
	attachNo
	attachYes
)

// SetAttach records admission's decision (engine.Attach) whether the call
// is a repeated Generate that attaches to a resumable call kept already:
// it then runs nothing, and the steps after it take nothing for it.
func (i *Info) SetAttach(attaches bool) {
	if i == nil {
		return
	}
	d := attachNo
	if attaches {
		d = attachYes
	}
	i.mu.Lock()
	i.attach = d
	i.mu.Unlock()
}

// Attach returns the decision SetAttach recorded, and whether one was.
func (i *Info) Attach() (attaches, decided bool) {
	if i == nil {
		return false, false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.attach == attachYes, i.attach != attachUndecided
}

// SetTarget records a resolution to the one target t, as SetResolved
// does.
func (i *Info) SetTarget(t provider.Target) {
	i.SetResolved(&route.Resolved{Name: t.String(), Targets: []provider.Target{t}})
}

// Resolved returns what the request's model resolved to, and false when
// nothing resolved it (a request without a model, or a call that runs
// without the chain).
func (i *Info) Resolved() (*route.Resolved, bool) {
	if i == nil {
		return nil, false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.resolved, i.resolved != nil
}

// Target returns the first target the request's model resolved to, and
// false when nothing resolved it.
func (i *Info) Target() (provider.Target, bool) {
	r, ok := i.Resolved()
	if !ok {
		return provider.Target{}, false
	}
	return r.Targets[0], true
}

// Annotate records labels a hook attached to the call, for its log line
// (at most MaxLabels in all, cut like the request's metadata).
func (i *Info) Annotate(labels map[string]string) {
	if i == nil || len(labels) == 0 {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if len(i.notes) >= MaxLabels {
			return
		}
		i.notes = append(i.notes, Label{Key: clipTo(k, MaxLabelKeyLen), Value: clipTo(labels[k], MaxLabelValueLen)})
	}
}

// Annotations returns the labels Annotate kept; the caller must not
// modify them.
func (i *Info) Annotations() []Label {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.notes
}

// OnAuthenticated registers f to run once the call has passed
// authentication (see Authenticated), or at once if it already has. The
// logging link writes a unary call's start line then, so that calls refused
// at authentication (which the auth links log in aggregate) have none.
func (i *Info) OnAuthenticated(f func()) {
	if i == nil {
		return
	}
	i.mu.Lock()
	if !i.authed {
		i.onAuth = f
		i.mu.Unlock()
		return
	}
	i.mu.Unlock()
	f()
}

// Authenticated records that the call passed authentication (or needs
// none: the server has no keys) and runs what OnAuthenticated registered.
func (i *Info) Authenticated() {
	if i == nil {
		return
	}
	i.mu.Lock()
	f := i.onAuth
	i.onAuth, i.authed = nil, true
	i.mu.Unlock()
	if f != nil {
		f()
	}
}

// PassedAuthentication reports whether the call passed authentication
// (Authenticated ran): an UNAUTHENTICATED end of such a call is not a
// refused credential but a key that stopped working while the call ran
// (engine.KeyCalls).
func (i *Info) PassedAuthentication() bool {
	if i == nil {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.authed
}

// ObserveAttempt records that the call reached attempt n (from 1): the
// call's attempts are the largest n observed. The Generate handler calls it
// as each attempt of its plan starts; nothing else counts attempts.
func (i *Info) ObserveAttempt(n int) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.attempts = max(i.attempts, n)
	i.mu.Unlock()
}

// ObserveTurn records that the call's model turn n (from 1) started an
// attempt: the call's turns are the largest n observed. The engine calls
// it with ObserveAttempt.
func (i *Info) ObserveTurn(n int) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.turns = max(i.turns, n)
	i.mu.Unlock()
}

// RecordToolCall records that one of the call's server tool calls
// returned, with an error result (failed) or not. Safe for concurrent use:
// a turn's tools run in parallel.
func (i *Info) RecordToolCall(failed bool) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.toolCalls++
	if failed {
		i.toolErrors++
	}
	i.mu.Unlock()
}

// RecordServed records the target that answered the call, for its log
// line: the configured provider's name and the model at that provider
// (after a fallback, the target the call fell back to; after a race of
// hedged attempts, the winner's). The engine calls it as a call it ran
// succeeds, from the target its answer names (a Generate's Final, an
// Embed's response).
func (i *Info) RecordServed(provider, model string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	e := i.ending()
	e.servedBy, e.servedModel = provider, model
	i.mu.Unlock()
}

// Usage is what a call consumed, for its log line.
type Usage struct {
	// Tokens counts the tokens of every attempt, as their providers
	// reported them (the Final's usage).
	Tokens provider.Usage
	// Cost is what they cost at the price table's prices, when Priced.
	Cost   float64
	Priced bool
	// Estimated is what budgets and usage records counted on top, by
	// estimate, for the attempts whose provider did not report their
	// whole usage (spend.Charge), and EstimatedCost its cost.
	Estimated     provider.Usage
	EstimatedCost float64
}

// LogValue implements slog.LogValuer: the tokens by kind (every kind
// that is a whole, and the parts that are not zero) and, when priced, the
// cost; then, when some were counted by estimate, the estimated input and
// output tokens and, when priced, their cost.
func (u Usage) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, len(usage.Kinds)+4)
	for _, k := range usage.Kinds {
		if n := k.Tokens(u.Tokens); n > 0 || k.PartOf == "" {
			attrs = append(attrs, slog.Int64(k.Name+"_tokens", n))
		}
	}
	if u.Priced {
		attrs = append(attrs, slog.Float64("cost", u.Cost))
	}
	if e := u.Estimated; e.InputTokens > 0 || e.OutputTokens > 0 {
		attrs = append(attrs, slog.Int64("estimated_input_tokens", e.InputTokens), slog.Int64("estimated_output_tokens", e.OutputTokens))
		if u.Priced {
			attrs = append(attrs, slog.Float64("estimated_cost", u.EstimatedCost))
		}
	}
	return slog.GroupValue(attrs...)
}

// RecordUsage records what the call consumed. The Generate handler calls
// it once, as the call ends.
func (i *Info) RecordUsage(u Usage) {
	if i == nil {
		return
	}
	i.mu.Lock()
	e := i.ending()
	e.usage, e.hasUsage = u, true
	i.mu.Unlock()
}

// Usage returns what RecordUsage recorded, and false when nothing was (a
// call that never reached the handler).
func (i *Info) Usage() (Usage, bool) {
	if i == nil {
		return Usage{}, false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.end == nil || !i.end.hasUsage {
		return Usage{}, false
	}
	return i.end.usage, true
}

// RequestID returns the call's request id: the client's, or one made up on
// the first call (a random UUID) and kept from then on. It returns "" on a
// nil Info.
func (i *Info) RequestID() string {
	if i == nil {
		return ""
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.requestID == "" {
		i.requestID = uuid.NewString()
	}
	return i.requestID
}

// Snapshot is a copy of an Info's fields.
type Snapshot struct {
	RequestID string
	Key       string
	Model     string
	// Route is the route the model named; "" for "<provider>/<model>" or
	// before resolution.
	Route    string
	Attempts int
	// Turns is the call's model turns (0 before its first attempt, and for
	// calls other than Generate); ToolCalls and ToolErrors count its
	// server tool calls and their error results.
	Turns, ToolCalls, ToolErrors int
	// Provider and ServedModel are the target that answered the call
	// (RecordServed): "" for a call that failed, or that no provider
	// answers (a listing).
	Provider, ServedModel string
}

// Snapshot returns the fields recorded so far, making up the request id if
// there is none yet. It returns the zero Snapshot on a nil Info.
func (i *Info) Snapshot() Snapshot {
	if i == nil {
		return Snapshot{}
	}
	id := i.RequestID()
	i.mu.Lock()
	defer i.mu.Unlock()
	s := Snapshot{RequestID: id, Key: i.key, Model: i.model, Attempts: i.attempts,
		Turns: i.turns, ToolCalls: i.toolCalls, ToolErrors: i.toolErrors}
	if e := i.end; e != nil {
		s.Provider, s.ServedModel = e.servedBy, e.servedModel
	}
	if i.resolved != nil && i.resolved.Route != nil {
		s.Route = i.resolved.Route.Name
	}
	return s
}

func clip(s string) string { return clipTo(s, MaxFieldLen) }

// clipTo cuts s to at most n bytes, at a UTF-8 character boundary.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
