package openai

import (
	"bytes"

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
}

type delta struct {
	Content   string          `json:"content"`
	ToolCalls []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// openCall is a tool call seen in this stream.
type openCall struct {
	index int    // the server's index
	id    string // the server's id, once known
	named bool   // its id and name were passed on
}

// decoder decodes one Chat Completions stream. It reuses its chunk between
// events. Each event goes through decodeFast, and through encoding/json
// when decodeFast declines it.
type decoder struct {
	json  httpx.JSONDecoder
	c     chunk
	calls []openCall
	// slowOnly skips decodeFast, for tests and benchmarks that compare.
	slowOnly bool
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
		return true, nil
	}
	if d.slowOnly || !decodeFast(ev.Data, d.reset()) {
		if err := d.json.Decode(ev.Data, d.reset()); err != nil {
			return false, httpx.MalformedError(err)
		}
	}
	if d.c.Error != nil {
		return false, d.c.Error.inStream()
	}
	for i := range d.c.Choices {
		ch := &d.c.Choices[i]
		if ch.Index != 0 {
			continue // llmrelay asks for one choice
		}
		if ch.Delta.Content != "" {
			*out = append(*out, provider.Event{Kind: provider.EventText, Text: ch.Delta.Content})
		}
		for j := range ch.Delta.ToolCalls {
			*out = append(*out, d.toolCall(&ch.Delta.ToolCalls[j]))
		}
		if ch.FinishReason != "" {
			*out = append(*out, provider.Event{Kind: provider.EventFinish, FinishReason: finishReason(ch.FinishReason)})
		}
	}
	if u := d.c.Usage; u != nil {
		*out = append(*out, provider.Event{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}})
	}
	return false, nil
}

// EndsAtEOF implements httpx.Decoder: only `data: [DONE]` ends a stream.
func (d *decoder) EndsAtEOF() bool { return false }

// toolCall turns a tool-call fragment into an event numbered by the order
// in which calls appeared. A fragment whose server index is that of an
// earlier call but whose id differs starts a new call: some compatible
// servers send every call with index 0. The id and name go with a call's
// first event only.
func (d *decoder) toolCall(tc *toolCallDelta) provider.Event {
	ord := -1
	for i := len(d.calls) - 1; i >= 0; i-- {
		c := &d.calls[i]
		if c.index != tc.Index {
			continue
		}
		if tc.ID == "" || c.id == "" || c.id == tc.ID {
			ord = i
			if c.id == "" {
				c.id = tc.ID
			}
		}
		break
	}
	if ord < 0 {
		d.calls = append(d.calls, openCall{index: tc.Index, id: tc.ID})
		ord = len(d.calls) - 1
	}
	ev := provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: ord, ArgumentsDelta: tc.Function.Arguments}}
	if c := &d.calls[ord]; !c.named && (tc.ID != "" || tc.Function.Name != "") {
		ev.ToolCall.ID, ev.ToolCall.Name = tc.ID, tc.Function.Name
		c.named = true
	}
	return ev
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
