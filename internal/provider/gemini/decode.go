package gemini

import (
	"encoding/json"
	"net/http"

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
	// FinishMessage says more of a finish reason, for one that is a
	// failure (MALFORMED_FUNCTION_CALL: the call the model wrote).
	FinishMessage string `json:"finishMessage"`
}

// responsePart is a part of a candidate's content: text (a thought
// summary when Thought is set), or a function call; either may carry the
// opaque ThoughtSignature the API wants back in the next turn.
type responsePart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

// usageMetadata is the stream's cumulative usage, repeated on every chunk:
// promptTokenCount includes the cached tokens, candidatesTokenCount
// excludes the thoughts, and a tool-use prompt is counted apart.
type usageMetadata struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
	ToolUsePromptTokenCount int64 `json:"toolUsePromptTokenCount"`
}

// provider returns the usage in llmrelay's terms: input is the prompt and
// any tool-use prompt, cached tokens included; output is the candidates
// and the thoughts.
func (m *usageMetadata) provider() provider.Usage {
	return provider.Usage{
		InputTokens:       m.PromptTokenCount + m.ToolUsePromptTokenCount,
		OutputTokens:      m.CandidatesTokenCount + m.ThoughtsTokenCount,
		ReasoningTokens:   m.ThoughtsTokenCount,
		CachedInputTokens: m.CachedContentTokenCount,
	}
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

// decoder decodes one streamGenerateContent stream. The stream has no
// terminator: it ends at EOF, which is a clean end only once a finish
// reason (or a blocked prompt) arrived.
type decoder struct {
	json httpx.JSONDecoder
	c    chunk
	// single keeps the reply's first function call and drops the rest:
	// the request asked for at most one call per reply, which the Gemini
	// API has no switch for (provider.ToolChoice.DisableParallel).
	single bool
	// newID makes the id of a call Gemini sent without one; nil is
	// provider.NewCallID. Tests that compare decodings set their own.
	newID    func() string
	calls    int
	finished bool
	usage    provider.Usage
	// blocks counts the reasoning blocks started; signed says the current
	// one has its signature.
	blocks int
	signed bool
}

// reset empties d.c for the next chunk, keeping its candidates' array
// with the elements cleared: encoding/json merges into reused elements.
func (d *decoder) reset() {
	cands := d.c.Candidates[:cap(d.c.Candidates)]
	clear(cands)
	d.c = chunk{Candidates: cands[:0]}
}

// Decode implements httpx.Decoder.
func (d *decoder) Decode(ev httpx.Event, out *[]provider.Event) (bool, error) {
	d.reset()
	if !decodeFast(ev.Data, &d.c) {
		d.reset()
		err := d.json.Decode(ev.Data, &d.c)
		d.json.Release() // the fast path takes the next events
		if err != nil {
			return false, httpx.ProtocolError(err, ev.Data)
		}
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
			if class, failed := failedFinishes[c.FinishReason]; failed {
				// What the failed generation cost still counts.
				d.addUsage(out)
				return false, &provider.Error{
					Kind: provider.KindInStream, Class: class, Status: http.StatusBadRequest,
					Type: c.FinishReason, Message: c.FinishMessage,
				}
			}
			reason := finishReason(c.FinishReason)
			if reason == provider.FinishStop && d.calls > 0 {
				reason = provider.FinishToolCalls // Gemini says STOP after function calls
			}
			provider.Add(out, provider.EventFinish).FinishReason = reason
			d.finished = true
		}
	}
	if f := d.c.PromptFeedback; f != nil && f.BlockReason != "" && len(d.c.Candidates) == 0 {
		provider.Add(out, provider.EventFinish).FinishReason = provider.FinishContentFilter
		d.finished = true
	}
	d.addUsage(out)
	return false, nil
}

// addUsage adds the chunk's usage to out when it changed.
func (d *decoder) addUsage(out *[]provider.Event) {
	if m := d.c.UsageMetadata; m != nil {
		u := m.provider()
		if u != d.usage {
			d.usage = u
			provider.Add(out, provider.EventUsage).Usage = u
		}
	}
}

// failedFinishes are the finish reasons that end a reply that is empty
// or cut, not a success, each with its failure class: the model's own
// output failed, MALFORMED_FUNCTION_CALL (a function call that does not
// parse or fit its declaration) and UNEXPECTED_TOOL_CALL (a call to a tool
// the request did not offer), which another generation of the same
// request usually gets right (provider.ClassInvalidOutput: retried once
// per call, as Groq's tool_use_failed is); or the request is at fault,
// MISSING_THOUGHT_SIGNATURE (a function-calling turn sent back without its
// thoughtSignature), which no retry mends.
var failedFinishes = map[string]provider.Class{
	"MALFORMED_FUNCTION_CALL":   provider.ClassInvalidOutput,
	"UNEXPECTED_TOOL_CALL":      provider.ClassInvalidOutput,
	"MISSING_THOUGHT_SIGNATURE": provider.ClassRejected,
}

// part relays one part: a function call, which Gemini sends whole (one
// event carries its id, name, arguments and signature; a call without an
// id, which Gemini never sends, gets a generated one, provider.NewCallID,
// unique across the turns of a conversation, so a route that falls back to
// Anthropic, which refuses repeated tool_use ids, can take the
// conversation on; the one event makes it the delta's and the Final's id
// alike; with d.single,
// only the reply's first: the calls after it are dropped), a thought
// (reasoning), or text. The signature of a part that is not a function
// call signs the reasoning before it, so it goes to the current reasoning
// block (a new one when that is signed already, or when there was no
// thought, as with Gemini 3's signature on an empty last text part).
func (d *decoder) part(p *responsePart, out *[]provider.Event) {
	if fc := p.FunctionCall; fc != nil {
		if d.single && d.calls > 0 {
			return
		}
		id := fc.ID
		switch {
		case id != "":
		case d.newID != nil:
			id = d.newID()
		default:
			id = provider.NewCallID()
		}
		args := string(fc.Args)
		if len(fc.Args) == 0 || string(fc.Args) == "null" {
			args = "{}"
		}
		provider.Add(out, provider.EventToolCall).ToolCall = provider.ToolCallDelta{
			Index: d.calls, ID: id, Name: fc.Name, ArgumentsDelta: args, Signature: p.ThoughtSignature,
		}
		d.calls++
		return
	}
	if p.Thought && p.Text != "" {
		d.reasoning(out, provider.ReasoningDelta{Text: p.Text})
	}
	if p.ThoughtSignature != "" {
		d.reasoning(out, provider.ReasoningDelta{Signature: p.ThoughtSignature})
		d.signed = true
	}
	if p.Text != "" && !p.Thought {
		provider.Add(out, provider.EventText).Text = p.Text
	}
}

// reasoning adds to out the event for a piece of the current reasoning
// block, starting a new block when there is none or the current one is
// signed.
func (d *decoder) reasoning(out *[]provider.Event, r provider.ReasoningDelta) {
	if d.blocks == 0 || d.signed {
		d.blocks++
		d.signed = false
		r.Format = provider.FormatGemini
	}
	r.Index = d.blocks - 1
	provider.Add(out, provider.EventReasoning).Reasoning = r
}

// EndsAtEOF implements httpx.Decoder.
func (d *decoder) EndsAtEOF() bool { return d.finished }

func finishReason(s string) provider.FinishReason {
	switch s {
	case "STOP":
		return provider.FinishStop
	case "MAX_TOKENS":
		return provider.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return provider.FinishContentFilter
	}
	return provider.FinishOther
}
