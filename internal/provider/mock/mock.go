// Package mock is llmrelay's built-in provider: the zero-setup default and
// the way users and tests drive every failure path deterministically.
//
// Models: "echo" replies with the last user message, one delta per word,
// each word keeping its trailing whitespace so the deltas concatenate to
// exactly the input; "lorem" replies with provider_options.words words
// (default 32). Asked for structured output, either model replies with a
// deterministic instance of the schema (schema.InstanceText), indented, one
// delta per word. provider_options.chunk_delay_ms paces the deltas, and
// provider_options.faults scripts each attempt (see ParseFaults and Fault).
package mock

import (
	"context"
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
)

const (
	defaultLoremWords = 32
	maxLoremWords     = 100_000
	maxChunkDelayMs   = 60_000
)

var optionKeys = map[string]bool{"faults": true, "words": true, "chunk_delay_ms": true}

func init() {
	provider.Register(Kind, func(provider.Config) (provider.Provider, error) { return New(), nil })
}

// Provider is the mock provider. It is stateless and safe for concurrent use.
type Provider struct{}

// New returns the mock provider.
func New() *Provider { return &Provider{} }

// DefaultModels implements provider.ModelLister.
func (*Provider) DefaultModels() []string { return []string{ModelEcho, ModelLorem} }

// ServesModel implements provider.ModelServer: the mock serves echo and
// lorem only, so resolution refuses mock/<anything else> as an unknown
// model.
func (*Provider) ServesModel(model string) bool { return model == ModelEcho || model == ModelLorem }

// options are the parsed provider_options.
type options struct {
	faults     []Fault
	words      int
	chunkDelay time.Duration
}

func parseOptions(req *provider.Request) (options, error) {
	o := options{words: defaultLoremWords}
	for k := range req.Options {
		if !optionKeys[k] {
			return o, fieldErr("provider_options."+k, "unknown option for the mock provider; known: chunk_delay_ms, faults, words")
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
	if v, ok := req.Options["chunk_delay_ms"]; ok {
		n, ok := asInt(v)
		if !ok || n < 0 || n > maxChunkDelayMs {
			return o, fieldErr("provider_options.chunk_delay_ms", fmt.Sprintf("must be an integer from 0 to %d", maxChunkDelayMs))
		}
		o.chunkDelay = time.Duration(n) * time.Millisecond
	}
	return o, nil
}

// ValidateRequest implements provider.RequestValidator: it checks
// provider_options and that the mock can make an instance of the response
// format's schema, before any attempt. (Which models it serves is
// resolution's decision: see ServesModel.)
func (*Provider) ValidateRequest(req *provider.Request) error {
	if _, err := parseOptions(req); err != nil {
		return err
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
	f := Fault{RetryAfterMs: -1, DropAfter: -1, ErrorAfter: -1, StallAfter: -1}
	if i := req.Attempt - 1; i >= 0 && i < len(o.faults) {
		f = o.faults[i]
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.Status > 0 {
		return nil, statusError(f)
	}

	var text string
	switch {
	case f.Output != nil:
		text = *f.Output
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
	return &stream{
		ctx:        ctx,
		chunks:     SplitWords(text),
		calls:      toolCallFragments(f.ToolCalls),
		fault:      f,
		chunkDelay: o.chunkDelay,
		usage:      provider.Usage{InputTokens: int64(countWords(req.Messages))},
	}, nil
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

// stream replays the chunks of one attempt, applying its fault.
type stream struct {
	ctx        context.Context
	chunks     []string
	next       int
	calls      []provider.ToolCallDelta
	nextCall   int
	fault      Fault
	chunkDelay time.Duration
	usage      provider.Usage
	finished   bool
	done       bool
	closed     bool
}

// errClosed is what Recv returns after Close.
var errClosed = errors.New("mock provider: stream closed")

func (s *stream) Recv() (provider.Event, error) {
	if s.closed {
		return provider.Event{}, errClosed
	}
	if err := s.ctx.Err(); err != nil {
		return provider.Event{}, err
	}
	if s.done {
		return provider.Event{}, io.EOF
	}
	if s.next < len(s.chunks) || !s.finished {
		switch s.next {
		case s.fault.DropAfter:
			return provider.Event{}, &provider.Error{Kind: provider.KindTransport, Class: provider.ClassTransport, Message: "mock provider: connection dropped", Err: io.ErrUnexpectedEOF}
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
	if s.next < len(s.chunks) {
		if s.chunkDelay > 0 {
			t := time.NewTimer(s.chunkDelay)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return provider.Event{}, s.ctx.Err()
			case <-t.C:
			}
		}
		text := s.chunks[s.next]
		s.next++
		return provider.Event{Kind: provider.EventText, Text: text}, nil
	}
	if s.nextCall < len(s.calls) {
		d := s.calls[s.nextCall]
		s.nextCall++
		return provider.Event{Kind: provider.EventToolCall, ToolCall: d}, nil
	}
	if !s.finished {
		s.finished = true
		reason := provider.FinishStop
		if len(s.calls) > 0 {
			reason = provider.FinishToolCalls
		}
		return provider.Event{Kind: provider.EventFinish, FinishReason: reason}, nil
	}
	s.done = true
	s.usage.OutputTokens = int64(len(s.chunks))
	if s.fault.Usage != nil {
		s.usage = *s.fault.Usage
	}
	return provider.Event{Kind: provider.EventUsage, Usage: s.usage}, nil
}

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
	case "invalid_request_error", "not_found_error", "request_too_large",
		"INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION":
		return provider.ClassRejected
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

func lastUserMessage(msgs []provider.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == provider.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

func countWords(msgs []provider.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(strings.Fields(m.Content))
	}
	return n
}
