package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// chunk is one chat.completion.chunk, with the fields llmrelay reads. A
// compatible server may instead send an error object.
type chunk struct {
	Choices []choice  `json:"choices"`
	Usage   *usage    `json:"usage"`
	Error   *apiError `json:"error"`
}

type choice struct {
	Index        int    `json:"index"`
	Delta        delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
	// StopReason is vLLM's (and TensorRT-LLM's) stop_reason beside a
	// finish_reason stop: the stop string that ended the reply. OpenAI
	// does not send it.
	StopReason stopString `json:"stop_reason"`
}

// stopString is a stop_reason: a stop string, or "" for null and for the
// token id (a number) a server names when a stop token, not a string,
// ended the reply.
type stopString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *stopString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(s))
	}
	return nil
}

type delta struct {
	Content content `json:"content"`
	// ReasoningContent is the reasoning of DeepSeek, xAI, Qwen and vLLM;
	// Reasoning the same under the name Groq, OpenRouter and newer vLLM
	// use.
	ReasoningContent string `json:"reasoning_content"`
	Reasoning        string `json:"reasoning"`
	// ReasoningDetails is OpenRouter's reasoning, block by block, with
	// what its upstream needs back: the signatures of Anthropic's
	// thinking, the encrypted reasoning of OpenAI's and xAI's models. It
	// repeats `reasoning`'s text, which is then not read.
	ReasoningDetails []reasoningDetail `json:"reasoning_details"`
	// Refusal is OpenAI's refusal text, streamed instead of content.
	Refusal   string          `json:"refusal"`
	ToolCalls []toolCallDelta `json:"tool_calls"`
}

// content is delta.content: a string for every server, or, from Mistral's
// reasoning models, a list of parts ({"type": "text", "text": ...} and
// {"type": "thinking", "thinking": [{"type": "text", "text": ...}]}).
// Text collects the text parts, Thinking the thinking parts' text.
type content struct {
	Text     string
	Thinking string
}

// errContentType is the error for a content that is neither a string nor
// a list of parts.
var errContentType = errors.New("delta.content is neither a string nor a list of content parts")

// contentPart is one part of a list content.
type contentPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking json.RawMessage `json:"thinking"`
}

// UnmarshalJSON implements json.Unmarshaler. Parts of other types (images,
// references) carry no text llmrelay relays and are skipped.
func (c *content) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		if s, ok := plainString(b); ok {
			c.Text = s
			return nil
		}
		return json.Unmarshal(b, &c.Text)
	case b[0] != '[':
		return errContentType
	}
	var parts []contentPart
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			c.Text += p.Text
		case "thinking":
			text, err := thinkingText(p.Thinking)
			if err != nil {
				return err
			}
			c.Thinking += text
		}
	}
	return nil
}

// plainString returns the JSON string literal b as a string when it needs
// no decoding (no escapes, no control characters, valid UTF-8), without
// json.Unmarshal's allocations; ok is false otherwise.
func plainString(b []byte) (string, bool) {
	if len(b) < 2 || b[len(b)-1] != '"' {
		return "", false
	}
	inner := b[1 : len(b)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

// thinkingText returns the text of a thinking part's `thinking`: a list of
// text parts (Magistral), or a string.
func thinkingText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var text string
	for _, p := range parts {
		if p.Type == "text" {
			text += p.Text
		}
	}
	return text, nil
}

// reasoningDetail is a fragment of one of OpenRouter's reasoning_details:
// fragments with the same index belong to one detail. Type says what it
// is: "reasoning.text" (text, and its signature once), "reasoning.summary"
// (summary), "reasoning.encrypted" (data); id and format are its
// upstream's (format: "anthropic-claude-v1", "openai-responses-v1", ...).
type reasoningDetail struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Summary   string `json:"summary"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	ID        string `json:"id"`
	Format    string `json:"format"`
	Index     *int   `json:"index"`
}

type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// usage is the usage object. PromptTokens includes cached tokens
// (PromptTokensDetails.CachedTokens, or DeepSeek's PromptCacheHitTokens);
// CompletionTokens includes reasoning tokens, except at xAI, which counts
// them apart (see provider).
type usage struct {
	PromptTokens            int64             `json:"prompt_tokens"`
	CompletionTokens        int64             `json:"completion_tokens"`
	TotalTokens             int64             `json:"total_tokens"`
	PromptTokensDetails     promptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails completionDetails `json:"completion_tokens_details"`
	PromptCacheHitTokens    int64             `json:"prompt_cache_hit_tokens"`
}

type promptDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type completionDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// provider returns the usage in llmrelay's terms: output includes
// reasoning. A server that counts reasoning apart from completion_tokens
// (xAI) says so by its total: prompt + completion + reasoning; then the
// reasoning is added to the output. Cached input is prompt_tokens_details'
// cached_tokens, or DeepSeek's prompt_cache_hit_tokens.
func (u *usage) provider() provider.Usage {
	reasoning := u.CompletionTokensDetails.ReasoningTokens
	out := u.CompletionTokens
	if reasoning > 0 && u.TotalTokens != u.PromptTokens+u.CompletionTokens && u.TotalTokens == u.PromptTokens+u.CompletionTokens+reasoning {
		out += reasoning
	}
	cached := u.PromptTokensDetails.CachedTokens
	if cached == 0 {
		cached = u.PromptCacheHitTokens
	}
	return provider.Usage{InputTokens: u.PromptTokens, OutputTokens: out, ReasoningTokens: reasoning, CachedInputTokens: cached}
}

// openCall is a tool call seen in this stream.
type openCall struct {
	index int    // the server's index
	id    string // the server's id, once known (never a generated one)
	name  string // the call's name, once known
	// sent: the call's first event (its id and name) went out, numbered
	// ordinal; until then its argument fragments wait in pending.
	sent    bool
	ordinal int
	pending []byte
}

// A reply's tool calls are bounded on the way in, since a call waiting for
// its name is metered against the output limit only once it goes out, and
// every fragment looks for its call among them: a server that sent a
// million calls without names, or a call's arguments without its name
// forever, held memory and CPU until the deadline. A reply may have
// provider.MaxToolCalls calls, named or not (the engine bounds those that
// go out by it too); maxWaiting is the most argument bytes waiting for
// their calls' names (an event's bound). Past either, the stream is
// malformed.
const maxWaiting = httpx.MaxLineBytes

// decoder decodes one Chat Completions stream. It reuses its chunk between
// events. Each event goes through decodeFast, and through encoding/json
// when decodeFast declines it.
type decoder struct {
	json  httpx.JSONDecoder
	c     chunk
	calls []openCall
	sent  int // tool calls whose first event went out
	// waiting counts the argument bytes of calls waiting for their name.
	waiting int
	// reasoning is the current reasoning block: its index, from 0, its
	// format, and whether it started.
	reasoning       int
	reasoningFormat string
	// details maps an OpenRouter reasoning detail's index to its reasoning
	// block; once a stream sent details, its `reasoning` text (the same
	// text again) is not read.
	details map[int]int
	// refused: the reply carried a refusal. finished: a finish reason
	// arrived.
	refused  bool
	finished bool
	// slowOnly skips decodeFast, for tests and benchmarks that compare.
	slowOnly bool
	// newID makes the id of a call the server sent without one; nil is
	// provider.NewCallID. Tests that compare two decodings set their own.
	newID func() string
	// memo is the start of the stream's chunks that decodeFast skips.
	memo prefixMemo
}

// reset empties the reused chunk and returns it. encoding/json merges into
// reused slice elements, so they are zeroed.
func (d *decoder) reset() *chunk {
	choices := d.c.Choices[:cap(d.c.Choices)]
	clear(choices)
	d.c = chunk{Choices: choices[:0]}
	return &d.c
}

var doneMarker = []byte("[DONE]")

// Decode implements httpx.Decoder.
func (d *decoder) Decode(ev httpx.Event, out *[]provider.Event) (bool, error) {
	if string(ev.Name) == "error" {
		// llama.cpp's server before late 2025: `error: {...}` lines.
		return false, inStreamError(ev.Data)
	}
	if bytes.Equal(bytes.TrimSpace(ev.Data), doneMarker) {
		d.flushCalls(out)
		return true, nil
	}
	if d.slowOnly || !decodeFast(ev.Data, d.reset(), &d.memo) {
		if err := d.json.Decode(ev.Data, d.reset()); err != nil {
			return false, httpx.ProtocolError(err, ev.Data)
		}
	}
	if d.c.Error != nil && !d.finished {
		// An error after the finish reason (OpenRouter reports a length
		// finish again as an error) ends nothing: the reply is complete.
		return false, d.c.Error.inStream()
	}
	for i := range d.c.Choices {
		ch := &d.c.Choices[i]
		if ch.Index != 0 {
			continue // llmrelay asks for one choice
		}
		if err := d.delta(&ch.Delta, out); err != nil {
			return false, httpx.ProtocolError(err, ev.Data)
		}
		if ch.FinishReason != "" && !d.finished {
			if t, failed := failedFinishes[ch.FinishReason]; failed {
				// The reply was cut short: what it cost still counts.
				if u := d.c.Usage; u != nil {
					provider.Add(out, provider.EventUsage).Usage = u.provider()
				}
				return false, failedFinish(ch.FinishReason, t)
			}
			// Some servers repeat the finish reason (OpenRouter); the first
			// one counts.
			d.flushCalls(out)
			reason := finishReason(ch.FinishReason)
			if reason == provider.FinishStop && d.refused {
				reason = provider.FinishRefusal
			}
			f := provider.Add(out, provider.EventFinish)
			f.FinishReason = reason
			if reason == provider.FinishStop {
				f.Text = string(ch.StopReason)
			}
			d.finished = true
		}
	}
	if u := d.c.Usage; u != nil {
		provider.Add(out, provider.EventUsage).Usage = u.provider()
	}
	return false, nil
}

// delta relays one delta: reasoning first (a server sends it before the
// text), then text, refusal and tool-call fragments. It fails for tool
// calls past their bounds (provider.MaxToolCalls, maxWaiting).
func (d *decoder) delta(dl *delta, out *[]provider.Event) error {
	for i := range dl.ReasoningDetails {
		d.detail(&dl.ReasoningDetails[i], out)
	}
	switch {
	case dl.ReasoningContent != "":
		d.reason(provider.FormatReasoningContent, dl.ReasoningContent, out)
	case dl.Reasoning != "" && d.details == nil:
		d.reason(provider.FormatReasoning, dl.Reasoning, out)
	}
	if dl.Content.Thinking != "" {
		d.reason(provider.FormatMistralThinking, dl.Content.Thinking, out)
	}
	if dl.Content.Text != "" {
		provider.Add(out, provider.EventText).Text = dl.Content.Text
	}
	if dl.Refusal != "" {
		d.refused = true
		provider.Add(out, provider.EventRefusal).Text = dl.Refusal
	}
	for j := range dl.ToolCalls {
		if err := d.toolCall(&dl.ToolCalls[j], out); err != nil {
			return err
		}
	}
	return nil
}

// reason relays a piece of reasoning in the given format. A reply's
// reasoning is one block, unless the server switches formats midway.
func (d *decoder) reason(format, text string, out *[]provider.Event) {
	ev := provider.Add(out, provider.EventReasoning)
	ev.Reasoning.Text = text
	if d.reasoningFormat != format {
		if d.reasoningFormat != "" {
			d.reasoning++
		}
		d.reasoningFormat = format
		ev.Reasoning.Format = format
	}
	ev.Reasoning.Index = d.reasoning
}

// detail relays a fragment of an OpenRouter reasoning detail: the first
// fragment of an index starts a reasoning block of its own (format
// FormatOpenRouterDetails, its kind the detail's type), later ones add to
// it. A summary's text is the block's text, encrypted data its redacted
// data; id and the upstream's format go with the block.
func (d *decoder) detail(rd *reasoningDetail, out *[]provider.Event) {
	index := len(d.details)
	if rd.Index != nil {
		index = *rd.Index
	}
	ev := provider.Add(out, provider.EventReasoning)
	ev.Reasoning = provider.ReasoningDelta{
		Text: rd.Text + rd.Summary, Signature: rd.Signature, Redacted: rd.Data, ID: rd.ID, ProviderFormat: rd.Format,
	}
	block, ok := d.details[index]
	if !ok {
		if d.details == nil {
			d.details = make(map[int]int, 1)
		}
		if d.reasoningFormat != "" {
			d.reasoning++
		}
		block = d.reasoning
		d.details[index] = block
		d.reasoningFormat = provider.FormatOpenRouterDetails
		ev.Reasoning.Format, ev.Reasoning.Kind = provider.FormatOpenRouterDetails, rd.Type
	}
	ev.Reasoning.Index = block
}

// EndsAtEOF implements httpx.Decoder: only `data: [DONE]` ends a stream.
func (d *decoder) EndsAtEOF() bool { return false }

// toolCall handles a tool-call fragment. A fragment belongs to the
// latest call with its server index unless its id or its name differs from
// that call's (some compatible servers send every call with index 0, with
// or without ids); an empty id or name matches any. An empty id or name in
// a later fragment changes nothing.
//
// A call goes out once its name is known: its first event carries its id,
// its name and the arguments so far (a server may send the id first and
// the name later; the fragments in between wait), and its arguments stream
// from then on. A call named without an id goes out with a generated one
// (provider.NewCallID), since clients and providers need one to answer it
// with a tool result (servers such as vLLM never send one); an id the server
// sends for it later is not used, since the client already has the
// generated one. Calls are numbered in the order they go out.
//
// It fails past provider.MaxToolCalls calls, or maxWaiting bytes of
// arguments waiting for their names.
func (d *decoder) toolCall(tc *toolCallDelta, out *[]provider.Event) error {
	ord := -1
	for i := len(d.calls) - 1; i >= 0; i-- {
		c := &d.calls[i]
		if c.index != tc.Index {
			continue
		}
		if !differ(c.id, tc.ID) && !differ(c.name, tc.Function.Name) {
			ord = i
		}
		break
	}
	if ord < 0 {
		if len(d.calls) == provider.MaxToolCalls {
			return provider.ErrTooManyToolCalls
		}
		d.calls = append(d.calls, openCall{index: tc.Index})
		ord = len(d.calls) - 1
	}
	c := &d.calls[ord]
	if c.id == "" {
		c.id = tc.ID
	}
	if c.name == "" {
		c.name = tc.Function.Name
	}
	switch {
	case c.sent:
		if tc.Function.Arguments != "" {
			provider.Add(out, provider.EventToolCall).ToolCall = provider.ToolCallDelta{Index: c.ordinal, ArgumentsDelta: tc.Function.Arguments}
		}
	case c.name == "":
		if d.waiting += len(tc.Function.Arguments); d.waiting > maxWaiting {
			return fmt.Errorf("tool call arguments waiting for their names longer than %d bytes", maxWaiting)
		}
		c.pending = append(c.pending, tc.Function.Arguments...)
	default:
		d.waiting += len(tc.Function.Arguments)
		c.pending = append(c.pending, tc.Function.Arguments...)
		d.send(c, out)
	}
	return nil
}

// differ reports whether two ids (or names) are both known and differ.
func differ(a, b string) bool { return a != "" && b != "" && a != b }

// send sends a call's first event: its id (a generated one when the server
// sent none), name and the arguments so far.
func (d *decoder) send(c *openCall, out *[]provider.Event) {
	c.sent, c.ordinal = true, d.sent
	d.sent++
	id := c.id
	switch {
	case id != "":
	case d.newID != nil:
		id = d.newID()
	default:
		id = provider.NewCallID()
	}
	provider.Add(out, provider.EventToolCall).ToolCall = provider.ToolCallDelta{Index: c.ordinal, ID: id, Name: c.name, ArgumentsDelta: string(c.pending)}
	d.waiting -= len(c.pending)
	c.pending = nil
}

// flushCalls sends the calls still waiting for their name when the reply
// ends: without a name, as the server left them (with a generated id when
// it sent none).
func (d *decoder) flushCalls(out *[]provider.Event) {
	for i := range d.calls {
		if c := &d.calls[i]; !c.sent {
			d.send(c, out)
		}
	}
}

// failedFinishes are the finish reasons that say the server gave up on
// the generation midway, each with the class and status of the failure:
// the reply is cut short, not complete, so the attempt fails (and is
// retried) instead of passing the cut reply off as a success.
var failedFinishes = map[string]errorType{
	// DeepSeek: "the request is interrupted due to insufficient resource
	// of the inference system".
	"insufficient_system_resource": {provider.ClassOverloaded, http.StatusServiceUnavailable},
	// Mistral: the generation failed.
	"error": {provider.ClassServerError, http.StatusInternalServerError},
}

// failedFinish returns the in-stream error for a failed finish reason.
func failedFinish(reason string, t errorType) *provider.Error {
	return &provider.Error{
		Kind: provider.KindInStream, Class: t.class, Status: t.status, Type: reason,
		Message: "the provider stopped the reply before its end (finish_reason " + reason + ")",
	}
}

func finishReason(s string) provider.FinishReason {
	switch s {
	case "stop", "eos", "end_turn":
		return provider.FinishStop
	case "length", "model_length":
		return provider.FinishLength
	case "tool_calls", "function_call":
		return provider.FinishToolCalls
	case "content_filter":
		return provider.FinishContentFilter
	}
	return provider.FinishOther
}
