package anthropic

import (
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// streamEvent is one Messages API stream event, with the fields llmrelay
// reads. Its type is read from the data, which always carries it.
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

type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

type eventDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// input is every input token: cache writes and reads are input too.
func (u *usage) input() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// toolBlock is a tool_use content block of this stream.
type toolBlock struct {
	ordinal int  // the call's index among the reply's tool calls
	args    bool // an argument fragment was passed on
}

// decoder decodes one Messages API stream.
type decoder struct {
	json  httpx.JSONDecoder
	ev    streamEvent
	tools map[int]*toolBlock // by content block index
	calls int
	usage provider.Usage
}

// Decode implements httpx.Decoder.
func (d *decoder) Decode(ev httpx.Event, out *[]provider.Event) (bool, error) {
	d.ev = streamEvent{}
	if err := d.json.Decode(ev.Data, &d.ev); err != nil {
		return false, httpx.MalformedError(err)
	}
	e := &d.ev
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			d.usage = provider.Usage{InputTokens: e.Message.Usage.input(), OutputTokens: e.Message.Usage.OutputTokens}
			*out = append(*out, provider.Event{Kind: provider.EventUsage, Usage: d.usage})
		}
	case "content_block_start":
		d.blockStart(e, out)
	case "content_block_delta":
		d.blockDelta(e, out)
	case "content_block_stop":
		// A tool without arguments still gets its {} arguments.
		if b := d.tools[e.Index]; b != nil && !b.args {
			*out = append(*out, provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: b.ordinal, ArgumentsDelta: "{}"}})
			b.args = true
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			*out = append(*out, provider.Event{Kind: provider.EventFinish, FinishReason: finishReason(e.Delta.StopReason)})
		}
		if u := e.Usage; u != nil {
			// Cumulative counts; input is sent again only by newer API versions.
			if in := u.input(); in > 0 {
				d.usage.InputTokens = in
			}
			d.usage.OutputTokens = u.OutputTokens
			*out = append(*out, provider.Event{Kind: provider.EventUsage, Usage: d.usage})
		}
	case "message_stop":
		return true, nil
	case "error":
		if e.Error == nil {
			return false, httpx.MalformedError(errNoErrorObject)
		}
		return false, e.Error.inStream()
	}
	// ping, and event types added after this adapter, carry nothing it uses.
	return false, nil
}

func (d *decoder) blockStart(e *streamEvent, out *[]provider.Event) {
	b := &e.ContentBlock
	switch b.Type {
	case "text":
		if b.Text != "" {
			*out = append(*out, provider.Event{Kind: provider.EventText, Text: b.Text})
		}
	case "tool_use":
		if d.tools == nil {
			d.tools = make(map[int]*toolBlock, 2)
		}
		d.tools[e.Index] = &toolBlock{ordinal: d.calls}
		*out = append(*out, provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: d.calls, ID: b.ID, Name: b.Name}})
		d.calls++
	}
}

func (d *decoder) blockDelta(e *streamEvent, out *[]provider.Event) {
	delta := &e.Delta
	switch delta.Type {
	case "text_delta":
		if delta.Text != "" {
			*out = append(*out, provider.Event{Kind: provider.EventText, Text: delta.Text})
		}
	case "input_json_delta":
		if b := d.tools[e.Index]; b != nil && delta.PartialJSON != "" {
			*out = append(*out, provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: b.ordinal, ArgumentsDelta: delta.PartialJSON}})
			b.args = true
		}
	}
	// thinking_delta, signature_delta and citations_delta are not relayed.
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
		return provider.FinishContentFilter
	}
	return provider.FinishOther
}
