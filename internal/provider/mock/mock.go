// Package mock is llmrelay's built-in provider: the zero-setup default and
// the way users and tests drive every failure path deterministically.
//
// Models: "echo" replies with the last user message, one delta per word,
// each word keeping its trailing whitespace so the deltas concatenate to
// exactly the input (its images shown in their places as ImageText
// describes them); "lorem" replies with provider_options.words words
// (default 32); "think" is echo that reasons first: a short reasoning
// block, streamed word by word, signed (a signature the mock checks when
// the block comes back in a later turn), then the echo. Asked for structured output, either model replies with a
// deterministic instance of the schema (schema.InstanceText), indented, one
// delta per word. provider_options.chunk_delay_ms paces the deltas,
// provider_options.faults scripts each attempt (see ParseFaults and Fault),
// and provider_options.script makes a tool-calling model, turn by turn
// (see script.go), which honours a request for at most one tool call per
// reply (ToolChoice.DisableParallel): the reply calls its first tool only.
// Every model honours the request's stop sequences as a real provider
// does: the text stops before the first one in it, nothing follows (no
// tool calls), and the finish, FinishStop, names the sequence.
//
// A configured mock may carry a standing fault, which every attempt gets
// that the request's own fault list does not cover: `options: {fault:
// {status: 503}}` makes a provider that is always down, so route fallback
// can be shown and tested without any provider_options.
package mock

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// Kind is the provider kind this package registers.
const Kind = "mock"

// Models served by the mock provider.
const (
	ModelEcho  = "echo"
	ModelLorem = "lorem"
	ModelThink = "think"
)

const (
	defaultLoremWords = 32
	maxLoremWords     = 100_000
	maxChunkDelayMs   = 60_000
)

var optionKeys = map[string]bool{"faults": true, "words": true, "chunk_delay_ms": true, "script": true}

func init() { provider.Register(Kind, FromConfig) }

// Provider is the mock provider. It is stateless and safe for concurrent use.
type Provider struct {
	// standing is the fault of every attempt the request's faults do not
	// cover; nil: such attempts are normal.
	standing *Fault
}

// New returns the mock provider, without a standing fault.
func New() *Provider { return &Provider{} }

// FromConfig is the mock's provider.Factory. Its options take one key,
// `fault`: a standing fault, written like one entry of provider_options.faults
// (for example {status: 503} or {status: 429, error_type: insufficient_quota}),
// that every attempt gets unless the request's fault list covers it.
func FromConfig(cfg provider.Config) (provider.Provider, error) {
	p := New()
	for k := range cfg.Options {
		if k != "fault" {
			return nil, fmt.Errorf("options.%s: unknown option for the mock provider; known: fault", k)
		}
	}
	v, ok := cfg.Options["fault"]
	if !ok {
		return p, nil
	}
	// The YAML decoder's numbers are ints; faults are read as JSON values.
	b, err := json.Marshal(v)
	var jv any
	if err == nil {
		err = json.Unmarshal(b, &jv)
	}
	if err != nil {
		return nil, fmt.Errorf("options.fault: %w", err)
	}
	f, err := parseFault("options.fault", jv)
	if err != nil {
		var fe *provider.FieldError
		if errors.As(err, &fe) {
			return nil, errors.New(fe.Error())
		}
		return nil, err
	}
	p.standing = &f
	return p, nil
}

// ReadsOptions implements provider.OptionReader.
func (*Provider) ReadsOptions() {}

// DefaultModels implements provider.ModelLister.
func (*Provider) DefaultModels() []string { return []string{ModelEcho, ModelLorem, ModelThink} }

// ServesModel implements provider.ModelServer: the mock serves echo, lorem
// and think only, so resolution refuses mock/<anything else> as an unknown
// model.
func (*Provider) ServesModel(model string) bool {
	return model == ModelEcho || model == ModelLorem || model == ModelThink
}

// options are the parsed provider_options.
type options struct {
	faults     []Fault
	words      int
	chunkDelay time.Duration
	script     []scriptTurn
}

func parseOptions(req *provider.Request) (options, error) {
	o := options{words: defaultLoremWords}
	for k := range req.Options {
		if !optionKeys[k] {
			return o, fieldErr("provider_options."+k, "unknown option for the mock provider; known: chunk_delay_ms, faults, script, words")
		}
	}
	var err error
	if o.faults, err = ParseFaults(req.Options["faults"]); err != nil {
		return o, err
	}
	if v, ok := req.Options["words"]; ok {
		n, ok := asInt(v)
		if !ok || n < 1 || n > maxLoremWords {
			return o, fieldErr("provider_options.words", fmt.Sprintf("must be an integer from 1 to %d", maxLoremWords))
		}
		o.words = n
	}
	if v, ok := req.Options["script"]; ok {
		if o.script, err = parseScript(v); err != nil {
			return o, err
		}
		if err := checkScript(o.script, req.Tools); err != nil {
			return o, err
		}
	}
	if v, ok := req.Options["chunk_delay_ms"]; ok {
		n, ok := asInt(v)
		if !ok || n < 0 || n > maxChunkDelayMs {
			return o, fieldErr("provider_options.chunk_delay_ms", fmt.Sprintf("must be an integer from 0 to %d", maxChunkDelayMs))
		}
		o.chunkDelay = time.Duration(n) * time.Millisecond
	}
	return o, nil
}

// TakesReasoning implements provider.ReasoningTaker: the mock's own
// reasoning, whose signature it checks; it stands for a provider that
// takes no other format.
func (*Provider) TakesReasoning(format string) bool { return format == provider.FormatMock }

// ValidateRequest implements provider.RequestValidator: it checks
// provider_options, that the mock can make an instance of the response
// format's schema, and, as providers that sign their reasoning do, that
// every mock reasoning block sent back carries the signature the mock gave
// it, before any attempt. (Which models it serves is resolution's
// decision: see ServesModel.)
func (*Provider) ValidateRequest(req *provider.Request) error {
	if _, err := parseOptions(req); err != nil {
		return err
	}
	for i, m := range req.Messages {
		for j, r := range m.Reasoning {
			if r.Format == provider.FormatMock && r.Signature != Sign(r.Text) {
				return fieldErr(fmt.Sprintf("messages[%d].reasoning[%d].signature", i, j),
					"does not match the reasoning's text: send the assistant message back as final.message gave it")
			}
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		if _, err := instance(rf); err != nil {
			return err
		}
	}
	return nil
}

// instance is the mock's reply to a response format: a deterministic
// instance of its schema.
func instance(rf *provider.ResponseFormat) (string, error) {
	text, err := schema.InstanceText(rf.Schema)
	if err != nil {
		return "", fieldErr("response_format.json_schema", "the mock provider cannot make an instance of the schema: "+err.Error())
	}
	return text, nil
}

// Stream implements provider.Provider.
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	if err := p.ValidateRequest(req); err != nil {
		return nil, err
	}
	o, _ := parseOptions(req)
	f := noFault()
	if i := req.Attempt - 1; i >= 0 && i < len(o.faults) {
		f = o.faults[i]
	} else if p.standing != nil {
		f = *p.standing
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.Status > 0 {
		return nil, statusError(f)
	}

	var text string
	calls := f.ToolCalls
	sText, sCalls, sOK := scripted(o.script, req.Messages)
	switch {
	case f.Output != nil:
		text = *f.Output
	case sOK:
		text = sText
		if calls == nil {
			calls = sCalls
		}
	case req.ResponseFormat != nil:
		var err error
		if text, err = instance(req.ResponseFormat); err != nil {
			return nil, err
		}
	case req.Model == ModelLorem:
		text = Lorem(o.words)
	default:
		text = lastUserMessage(req.Messages)
	}
	if req.ToolChoice.DisableParallel && len(calls) > 1 {
		calls = calls[:1] // at most one call per reply, as asked
	}
	text, stop := cutAtStop(text, req.Generation.Stop)
	if stop != "" {
		// Nothing follows the stop sequence, as at a real provider: no
		// tool calls, no refusal.
		calls, f.Refusal = nil, ""
	}
	reasoning := ""
	switch {
	case f.Reasoning != nil:
		reasoning = *f.Reasoning
	case req.Model == ModelThink:
		reasoning = fmt.Sprintf("The user wrote %d words. I will say them back.", len(strings.Fields(text)))
	}
	s := &stream{
		ctx:        ctx,
		calls:      toolCallFragments(calls),
		fault:      f,
		chunkDelay: o.chunkDelay,
		activity:   req.Activity,
		usage:      provider.Usage{InputTokens: int64(countWords(req.Messages))},
		stop:       stop,
	}
	thoughts := SplitWords(reasoning)
	for i, w := range thoughts {
		d := provider.ReasoningDelta{Text: w}
		if i == 0 {
			d.Format = provider.FormatMock
		}
		s.deltas = append(s.deltas, provider.Event{Kind: provider.EventReasoning, Reasoning: d})
	}
	if reasoning != "" {
		s.deltas = append(s.deltas, provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Signature: Sign(reasoning)}})
	}
	words := SplitWords(text)
	for _, w := range words {
		s.deltas = append(s.deltas, provider.Event{Kind: provider.EventText, Text: w})
	}
	for _, w := range SplitWords(f.Refusal) {
		s.deltas = append(s.deltas, provider.Event{Kind: provider.EventRefusal, Text: w})
	}
	s.usage.OutputTokens = int64(len(words) + len(thoughts) + len(SplitWords(f.Refusal)))
	s.usage.ReasoningTokens = int64(len(thoughts))
	if f.Usage != nil {
		s.usage = *f.Usage
	}
	return s, nil
}

// cutAtStop returns text up to the first of the stop sequences found in
// it, and that sequence, as a real provider stops before the first stop
// sequence it would write: the earliest in text, the first listed of
// those that start at the same place. Without one in text it returns text
// and "".
func cutAtStop(text string, stops []string) (string, string) {
	at, stop := len(text), ""
	for _, s := range stops {
		if i := strings.Index(text, s); s != "" && i >= 0 && i < at {
			at, stop = i, s
		}
	}
	return text[:at], stop
}

// Sign returns the mock's signature of a reasoning text: opaque to
// clients, like the signatures real providers put on their reasoning, and
// checked when the reasoning comes back in a later turn.
func Sign(reasoning string) string {
	sum := sha256.Sum256([]byte("llmrelay mock reasoning\x00" + reasoning))
	return "mock1." + base64.RawURLEncoding.EncodeToString(sum[:18])
}

func statusError(f Fault) *provider.Error {
	e := &provider.Error{
		Kind:        provider.KindHTTP,
		Status:      f.Status,
		Type:        f.ErrorType,
		Message:     fmt.Sprintf("mock provider: injected HTTP %d", f.Status),
		ShouldRetry: f.ShouldRetry,
	}
	if e.Type == "" {
		e.Type = defaultErrorType(f.Status)
	}
	e.Class = provider.HTTPClass(f.Status, errorClass(e.Type))
	if f.RetryAfterMs >= 0 {
		e.RetryAfter = time.Duration(f.RetryAfterMs) * time.Millisecond
		e.HasRetryAfter = true
	}
	return e
}

// defaultErrorType names the error types real providers send for a status.
func defaultErrorType(status int) string {
	switch {
	case status == 429:
		return "rate_limit_error"
	case status == 529 || status == 503:
		return "overloaded_error"
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 404:
		return "not_found_error"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

// stream replays the deltas of one attempt (reasoning, its signature,
// text, refusal), then its tool calls, finish reason and usage, applying
// its fault.
type stream struct {
	ctx        context.Context
	deltas     []provider.Event
	next       int
	calls      []provider.ToolCallDelta
	nextCall   int
	fault      Fault
	chunkDelay time.Duration
	activity   *provider.Activity
	usage      provider.Usage
	// stop is the request's stop sequence the text was cut at; "" for
	// none.
	stop     string
	started  bool // the first event's delay (fault.FirstDelayMs) is behind
	finished bool
	done     bool
	closed   bool
}

// errClosed is what Recv returns after Close.
var errClosed = errors.New("mock provider: stream closed")

// Recv implements provider.Stream. Each event it returns is a sign of
// life on the attempt's Activity.
func (s *stream) Recv() (provider.Event, error) {
	ev, err := s.recv()
	if err == nil {
		s.activity.Touch()
	}
	return ev, err
}

func (s *stream) recv() (provider.Event, error) {
	if s.closed {
		return provider.Event{}, errClosed
	}
	if err := s.ctx.Err(); err != nil {
		return provider.Event{}, err
	}
	if s.done {
		return provider.Event{}, io.EOF
	}
	if !s.started {
		s.started = true
		if d := s.fault.FirstDelayMs; d > 0 {
			t := time.NewTimer(time.Duration(d) * time.Millisecond)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return provider.Event{}, s.ctx.Err()
			case <-t.C:
			}
		}
	}
	if s.next < len(s.deltas) || !s.finished {
		switch s.next {
		case s.fault.DropAfter:
			return provider.Event{}, &provider.Error{Kind: provider.KindTransport, Class: provider.ClassTransport, Net: provider.NetReset, Message: "mock provider: connection dropped", Err: io.ErrUnexpectedEOF}
		case s.fault.MalformedAfter:
			return provider.Event{}, &provider.Error{Kind: provider.KindProtocol, Class: provider.ClassProtocol, Message: "mock provider: an event that does not decode", Err: errMalformed, Raw: `{"choices": [{"delta": {"content": 42}}]}`}
		case s.fault.ErrorAfter:
			typ := s.fault.ErrorType
			if typ == "" {
				typ = "overloaded_error"
			}
			return provider.Event{}, &provider.Error{Kind: provider.KindInStream, Class: errorClass(typ), Status: statusOfType(typ), Type: typ, Message: "mock provider: injected in-stream error"}
		case s.fault.StallAfter:
			<-s.ctx.Done()
			return provider.Event{}, s.ctx.Err()
		}
	}
	if s.next < len(s.deltas) {
		if s.chunkDelay > 0 {
			t := time.NewTimer(s.chunkDelay)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return provider.Event{}, s.ctx.Err()
			case <-t.C:
			}
		}
		s.next++
		return s.deltas[s.next-1], nil
	}
	if s.nextCall < len(s.calls) {
		d := s.calls[s.nextCall]
		s.nextCall++
		return provider.Event{Kind: provider.EventToolCall, ToolCall: d}, nil
	}
	if !s.finished {
		s.finished = true
		reason := provider.FinishStop
		switch {
		case len(s.calls) > 0:
			reason = provider.FinishToolCalls
		case s.fault.Refusal != "":
			reason = provider.FinishRefusal
		}
		return provider.Event{Kind: provider.EventFinish, FinishReason: reason, Text: s.stop}, nil
	}
	s.done = true
	return provider.Event{Kind: provider.EventUsage, Usage: s.usage}, nil
}

// errMalformed is the cause of the mock's protocol error.
var errMalformed = errors.New("mock provider: injected malformed event")

// Close implements provider.Stream: Recv fails from then on.
func (s *stream) Close() error {
	s.closed = true
	return nil
}

// toolCallFragments streams each call in two fragments: the id, the name
// and the first half of the arguments, then the rest (split on a rune
// boundary).
func toolCallFragments(calls []provider.ToolCall) []provider.ToolCallDelta {
	out := make([]provider.ToolCallDelta, 0, 2*len(calls))
	for i, c := range calls {
		half := len(c.Arguments) / 2
		for half > 0 && !utf8.RuneStart(c.Arguments[half]) {
			half--
		}
		out = append(out,
			provider.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: c.Arguments[:half]},
			provider.ToolCallDelta{Index: i, ArgumentsDelta: c.Arguments[half:]})
	}
	return out
}

// errorClass is the mock's error table: the provider error types a fault
// may name, those of OpenAI, Anthropic and Gemini alike since the mock
// stands in for each, grouped by failure class. An injected in-stream error
// is classified by its type alone; an injected status by the status, its
// type saying only whether a 429 is a spent quota.
func errorClass(typ string) provider.Class {
	switch typ {
	case "insufficient_quota", "billing_hard_limit_reached", "billing_error":
		return provider.ClassQuotaExhausted
	case "rate_limit_error", "rate_limit_exceeded", "RESOURCE_EXHAUSTED":
		return provider.ClassRateLimited
	case "overloaded_error", "UNAVAILABLE":
		return provider.ClassOverloaded
	case "api_error", "server_error", "timeout_error", "INTERNAL", "DEADLINE_EXCEEDED":
		return provider.ClassServerError
	case "authentication_error", "permission_error", "UNAUTHENTICATED", "PERMISSION_DENIED":
		return provider.ClassAuth
	case "not_found_error", "model_not_found", "NOT_FOUND":
		return provider.ClassNotFound
	case "invalid_request_error", "request_too_large", "INVALID_ARGUMENT", "FAILED_PRECONDITION":
		return provider.ClassRejected
	case "tool_use_failed":
		return provider.ClassInvalidOutput
	case "context_length_exceeded":
		return provider.ClassContextLength
	}
	return provider.ClassUnknown
}

// statusOfType is the HTTP status an in-stream error type stands for, as
// the error reports it.
func statusOfType(typ string) int {
	switch typ {
	case "overloaded_error":
		return 529
	case "rate_limit_error":
		return 429
	case "api_error":
		return 500
	case "tool_use_failed":
		return 400
	}
	return 0
}

// SplitWords splits text into words that each keep their trailing
// whitespace (leading whitespace stays with the first word), so the pieces
// concatenate to exactly text. Empty text yields no pieces.
func SplitWords(text string) []string {
	var out []string
	start := 0
	inSpace := true // leading whitespace belongs to the first word
	for i, r := range text {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if !space && inSpace && i > start && strings.TrimSpace(text[start:i]) != "" {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

var loremWords = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod
tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation
ullamco laboris nisi ut aliquip ex ea commodo consequat`)

// Lorem returns n words of lorem ipsum separated by single spaces.
func Lorem(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(loremWords[i%len(loremWords)])
	}
	return b.String()
}

// lastUserMessage returns what echo replies: the last user message's
// text, with each of its images, in its place, as ImageText shows it.
func lastUserMessage(msgs []provider.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == provider.RoleUser {
			return withImages(&msgs[i])
		}
	}
	return ""
}

// withImages returns the text of a user message or a tool result with
// each of its images, in its place, as ImageText shows it.
func withImages(m *provider.Message) string {
	if len(m.Images) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.Blocks() {
		switch p.Kind {
		case provider.PartText:
			b.WriteString(p.Text)
		case provider.PartImage:
			b.WriteString(ImageText(&m.Images[p.Index]))
		}
	}
	return b.String()
}

// ImageText is how echo shows an image of the message it echoes:
// "[image image/png 1234 bytes]" for an inline image, "[image
// https://example.com/cat.jpg]" for one at a URL.
func ImageText(img *provider.Image) string {
	if img.URL != "" {
		return "[image " + img.URL + "]"
	}
	return fmt.Sprintf("[image %s %d bytes]", img.MediaType, len(img.Data))
}

func countWords(msgs []provider.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(strings.Fields(m.Content))
	}
	return n
}
