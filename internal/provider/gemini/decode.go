package gemini

import (
	"encoding/json"
	"strconv"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// chunk is one GenerateContentResponse of the stream, with the fields
// llmrelay reads. A failing stream may send an error object instead.
type chunk struct {
	Candidates     []candidate     `json:"candidates"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	Error          *apiError       `json:"error"`
}

type candidate struct {
	Index   int `json:"index"`
	Content struct {
		Parts []responsePart `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason"`
}

type responsePart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

type usageMetadata struct {
	PromptTokenCount     int64 `json:"promptTokenCount"`
	CandidatesTokenCount int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount   int64 `json:"thoughtsTokenCount"`
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

// decoder decodes one streamGenerateContent stream. The stream has no
// terminator: it ends at EOF, which is a clean end only once a finish
// reason (or a blocked prompt) arrived.
type decoder struct {
	json     httpx.JSONDecoder
	c        chunk
	calls    int
	finished bool
	usage    provider.Usage
}

// Decode implements httpx.Decoder.
func (d *decoder) Decode(ev httpx.Event, out *[]provider.Event) (bool, error) {
	cands := d.c.Candidates[:cap(d.c.Candidates)]
	clear(cands) // encoding/json merges into reused elements
	d.c = chunk{Candidates: cands[:0]}
	if err := d.json.Decode(ev.Data, &d.c); err != nil {
		return false, httpx.MalformedError(err)
	}
	if d.c.Error != nil {
		return false, d.c.Error.inStream()
	}
	for i := range d.c.Candidates {
		c := &d.c.Candidates[i]
		if c.Index != 0 {
			continue // llmrelay asks for one candidate
		}
		for j := range c.Content.Parts {
			d.part(&c.Content.Parts[j], out)
		}
		if c.FinishReason != "" {
			reason := finishReason(c.FinishReason)
			if reason == provider.FinishStop && d.calls > 0 {
				reason = provider.FinishToolCalls // Gemini says STOP after function calls
			}
			*out = append(*out, provider.Event{Kind: provider.EventFinish, FinishReason: reason})
			d.finished = true
		}
	}
	if f := d.c.PromptFeedback; f != nil && f.BlockReason != "" && len(d.c.Candidates) == 0 {
		*out = append(*out, provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishContentFilter})
		d.finished = true
	}
	if m := d.c.UsageMetadata; m != nil {
		u := provider.Usage{InputTokens: m.PromptTokenCount, OutputTokens: m.CandidatesTokenCount + m.ThoughtsTokenCount}
		if u != d.usage {
			d.usage = u
			*out = append(*out, provider.Event{Kind: provider.EventUsage, Usage: u})
		}
	}
	return false, nil
}

// part relays a text part (thoughts excepted) or a function call, which
// Gemini sends whole: one event carries its id, name and arguments. A call
// without an id gets "call_<n>", n counting the reply's calls from 0.
func (d *decoder) part(p *responsePart, out *[]provider.Event) {
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		id := fc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(d.calls)
		}
		args := string(fc.Args)
		if len(fc.Args) == 0 || string(fc.Args) == "null" {
			args = "{}"
		}
		*out = append(*out, provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: d.calls, ID: id, Name: fc.Name, ArgumentsDelta: args}})
		d.calls++
	case p.Text != "" && !p.Thought:
		*out = append(*out, provider.Event{Kind: provider.EventText, Text: p.Text})
	}
}

// EndsAtEOF implements httpx.Decoder.
func (d *decoder) EndsAtEOF() bool { return d.finished }

func finishReason(s string) provider.FinishReason {
	switch s {
	case "STOP":
		return provider.FinishStop
	case "MAX_TOKENS":
		return provider.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return provider.FinishContentFilter
	}
	return provider.FinishOther
}
