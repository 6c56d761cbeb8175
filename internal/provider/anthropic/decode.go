package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/llmrelay/llmrelay/internal/offstack"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// streamEvent is one Messages API stream event, with the fields llmrelay
// reads. Its type is read from the data, where Anthropic always puts it;
// data without one takes the SSE event's name (some compatible servers
// send `event: error` with only {"error": {...}}).
type streamEvent struct {
	Type         string        `json:"type"`
	Index        int           `json:"index"`
	Message      *startMessage `json:"message"`
	ContentBlock contentBlock  `json:"content_block"`
	Delta        eventDelta    `json:"delta"`
	Usage        *usage        `json:"usage"`
	Error        *apiError     `json:"error"`
}

type startMessage struct {
	Usage usage `json:"usage"`
}

// contentBlock is a content_block_start's block: text, tool_use, thinking
// (its text and signature usually follow in deltas), redacted_thinking
// (its data whole), a block of a tool Anthropic runs itself (server tools
// and their results, MCP blocks: read again whole, see providerTool), or
// a block llmrelay does not relay (compaction).
type contentBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	// Input is a tool_use block's input: Anthropic's is always {}, its
	// arguments streamed in input_json_deltas, but a compatible server may
	// send them whole here.
	Input startInput `json:"input"`
}

// startInput is a tool_use start's input, compacted: "" when it is {},
// null, or not an object.
type startInput string

// UnmarshalJSON implements json.Unmarshaler.
func (in *startInput) UnmarshalJSON(b []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	if c := buf.String(); strings.HasPrefix(c, "{") && c != "{}" {
		*in = startInput(c)
	}
	return nil
}

type eventDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
	// StopSequence is message_delta's matched stop sequence, with
	// stop_reason stop_sequence; null otherwise.
	StopSequence string `json:"stop_sequence"`
}

// usage is a usage object. InputTokens excludes cache reads and writes;
// OutputTokens includes thinking tokens (OutputTokensDetails). A reply
// that took several iterations (context compaction) reports each in
// Iterations, and only the last at the top level.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokensDetails      struct {
		ThinkingTokens int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
	Iterations []usage `json:"iterations"`
}

// provider returns the usage in llmrelay's terms: every input token, cache
// reads and writes included, and of it the cached ones; output as
// Anthropic counts it, thinking included. With iterations, their sum.
func (u *usage) provider() provider.Usage {
	if len(u.Iterations) > 0 {
		var sum provider.Usage
		for i := range u.Iterations {
			sum.Add(u.Iterations[i].provider())
		}
		sum.ReasoningTokens = max(sum.ReasoningTokens, u.OutputTokensDetails.ThinkingTokens)
		return sum
	}
	return provider.Usage{
		InputTokens:              u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:             u.OutputTokens,
		ReasoningTokens:          u.OutputTokensDetails.ThinkingTokens,
		CachedInputTokens:        u.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
	}
}

// blockState is what a content block of this stream is to llmrelay, by its
// index: a client tool call or a reasoning block, numbered among their
// kind, or a provider tool block, held until its end.
type blockState struct {
	reasoning bool
	ordinal   int  // the call's (or reasoning block's) index in the reply
	args      bool // a tool call's argument fragment was passed on
	// startInput is a tool call's input from its start, its arguments
	// unless input_json_deltas came.
	startInput startInput
	// tool is a provider tool block, sent whole at its content_block_stop;
	// input collects its streamed input (input_json_delta), which
	// replaces the input of its start when any came.
	tool  *provider.ProviderTool
	input strings.Builder
}

// decoder decodes one Messages API stream.
type decoder struct {
	json   httpx.JSONDecoder
	ev     streamEvent
	blocks map[int]*blockState // by content block index
	calls  int
	thinks int
	usage  provider.Usage
}

// Decode implements httpx.Decoder.
func (d *decoder) Decode(ev httpx.Event, out *[]provider.Event) (bool, error) {
	d.ev = streamEvent{}
	if !decodeFast(ev.Data, &d.ev) {
		d.ev = streamEvent{}
		err := d.json.Decode(ev.Data, &d.ev)
		d.json.Release() // the fast path takes the next events
		if err != nil {
			return false, httpx.ProtocolError(err, ev.Data)
		}
	}
	e := &d.ev
	if e.Type == "" {
		e.Type = string(ev.Name)
	}
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			d.usage = e.Message.Usage.provider()
			provider.Add(out, provider.EventUsage).Usage = d.usage
		}
	case "content_block_start":
		if isProviderTool(e.ContentBlock.Type) {
			// encoding/json, deep: on a worker, as d.json does (see
			// httpx.JSONDecoder).
			var err error
			offstack.Run(func() { err = d.providerToolStart(e.Index, ev.Data) })
			return false, err
		}
		d.blockStart(e, out)
	case "content_block_delta":
		d.blockDelta(e, out)
	case "content_block_stop":
		if b := d.blocks[e.Index]; b != nil && b.tool != nil {
			if b.input.Len() > 0 {
				b.tool.Input = b.input.String()
			}
			provider.Add(out, provider.EventProviderTool).ProviderTool = b.tool
			delete(d.blocks, e.Index)
			break
		}
		// A tool call without input_json_deltas has its start's input as
		// arguments; without that either, {}.
		if b := d.blocks[e.Index]; b != nil && !b.reasoning && !b.args {
			args := string(b.startInput)
			if args == "" {
				args = "{}"
			}
			provider.Add(out, provider.EventToolCall).ToolCall = provider.ToolCallDelta{Index: b.ordinal, ArgumentsDelta: args}
			b.args = true
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			f := provider.Add(out, provider.EventFinish)
			f.FinishReason = finishReason(e.Delta.StopReason)
			if e.Delta.StopReason == "stop_sequence" {
				f.Text = e.Delta.StopSequence
			}
		}
		if u := e.Usage; u != nil {
			// The counts to bill: cumulative, input included since API
			// versions of 2025; older ones send only the output count.
			next := u.provider()
			if next.InputTokens == 0 {
				next.InputTokens, next.CachedInputTokens, next.CacheCreationInputTokens = d.usage.InputTokens, d.usage.CachedInputTokens, d.usage.CacheCreationInputTokens
			}
			d.usage = next
			provider.Add(out, provider.EventUsage).Usage = d.usage
		}
	case "message_stop":
		return true, nil
	case "error":
		if e.Error == nil {
			return false, httpx.ProtocolError(errNoErrorObject, ev.Data)
		}
		return false, e.Error.inStream()
	}
	// ping, and event types added after this adapter, carry nothing it
	// relays; they are signs of life all the same (the stream's Activity
	// saw their bytes).
	return false, nil
}

// providerToolStart starts a provider tool block (server_tool_use,
// web_search_tool_result, mcp_tool_use, ...): the provider's own business,
// never a client tool call or text, carried whole to the final message.
// Its content_block is read again from the event's data, keeping every
// value's bytes; a block that does not decode is a protocol error.
func (d *decoder) providerToolStart(index int, data []byte) error {
	var start struct {
		ContentBlock json.RawMessage `json:"content_block"`
	}
	if err := json.Unmarshal(data, &start); err != nil {
		return httpx.ProtocolError(err, data)
	}
	t, err := providerTool(start.ContentBlock)
	if err != nil {
		return httpx.ProtocolError(err, data)
	}
	d.track(index, &blockState{tool: t})
	return nil
}

// blockStart starts a content block. Blocks that are not text, a client
// tool_use, reasoning or a provider tool block (compaction, ...) are the
// provider's own business: they never become client tool calls or text.
func (d *decoder) blockStart(e *streamEvent, out *[]provider.Event) {
	b := &e.ContentBlock
	switch b.Type {
	case "text":
		if b.Text != "" {
			provider.Add(out, provider.EventText).Text = b.Text
		}
	case "tool_use":
		d.track(e.Index, &blockState{ordinal: d.calls, startInput: b.Input})
		provider.Add(out, provider.EventToolCall).ToolCall = provider.ToolCallDelta{Index: d.calls, ID: b.ID, Name: b.Name}
		d.calls++
	case "thinking", "redacted_thinking":
		d.track(e.Index, &blockState{reasoning: true, ordinal: d.thinks})
		provider.Add(out, provider.EventReasoning).Reasoning = provider.ReasoningDelta{
			Index: d.thinks, Format: provider.FormatAnthropic, Text: b.Thinking, Signature: b.Signature, Redacted: b.Data,
		}
		d.thinks++
	}
}

func (d *decoder) track(index int, b *blockState) {
	if d.blocks == nil {
		d.blocks = make(map[int]*blockState, 2)
	}
	d.blocks[index] = b
}

func (d *decoder) blockDelta(e *streamEvent, out *[]provider.Event) {
	delta := &e.Delta
	b := d.blocks[e.Index]
	switch delta.Type {
	case "text_delta":
		if delta.Text != "" {
			provider.Add(out, provider.EventText).Text = delta.Text
		}
	case "input_json_delta":
		if b != nil && b.tool != nil {
			b.input.WriteString(delta.PartialJSON)
			return
		}
		if b != nil && !b.reasoning && delta.PartialJSON != "" {
			provider.Add(out, provider.EventToolCall).ToolCall = provider.ToolCallDelta{Index: b.ordinal, ArgumentsDelta: delta.PartialJSON}
			b.args = true
		}
	case "thinking_delta":
		if b != nil && b.reasoning && delta.Thinking != "" {
			provider.Add(out, provider.EventReasoning).Reasoning = provider.ReasoningDelta{Index: b.ordinal, Text: delta.Thinking}
		}
	case "signature_delta":
		if b != nil && b.reasoning && delta.Signature != "" {
			provider.Add(out, provider.EventReasoning).Reasoning = provider.ReasoningDelta{Index: b.ordinal, Signature: delta.Signature}
		}
	}
	// citations_delta and compaction_delta are not relayed.
}

// EndsAtEOF implements httpx.Decoder: only message_stop ends a stream.
func (d *decoder) EndsAtEOF() bool { return false }

func finishReason(s string) provider.FinishReason {
	switch s {
	case "end_turn", "stop_sequence":
		return provider.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return provider.FinishLength
	case "tool_use":
		return provider.FinishToolCalls
	case "refusal":
		return provider.FinishRefusal
	case "pause_turn":
		return provider.FinishPaused
	}
	return provider.FinishOther
}
