package provider

import "slices"

// ReasoningTaker is an adapter's optional capability: TakesReasoning
// reports whether the adapter sends reasoning blocks of format
// (Reasoning.Format) back to its provider. An adapter leaves out the blocks
// of the formats it does not take (another provider's signatures would not
// verify there; docs/reasoning.md), and the engine tells the client when it
// did (DroppedReasoning).
type ReasoningTaker interface {
	TakesReasoning(format string) bool
}

// FormatUnknown names, among the formats DroppedReasoning returns, the
// reasoning blocks that came without a format: ones a client wrote, or
// that a conversation begun elsewhere carried (an OpenAI Responses
// reasoning item whose encrypted_content is not llmrelay's). No adapter
// takes them; an empty name in the list would say nothing.
const FormatUnknown = "unknown"

// DroppedReasoning returns the formats of the reasoning that p leaves out
// of a request with msgs, sorted and each once: those of the assistant
// turns' reasoning blocks p does not take (FormatUnknown for a block
// without one), and FormatGemini for a tool call's signature (Gemini's
// thoughtSignature, the only one a call carries) when p does not take that
// format. It returns nil when p leaves nothing out, or does not say what
// it takes (no ReasoningTaker).
func DroppedReasoning(p Provider, msgs []Message) []string {
	t, ok := p.(ReasoningTaker)
	if !ok {
		return nil
	}
	var out []string
	drop := func(format string) {
		if t.TakesReasoning(format) {
			return
		}
		if format == "" {
			format = FormatUnknown
		}
		if !slices.Contains(out, format) {
			out = append(out, format)
		}
	}
	for i := range msgs {
		m := &msgs[i]
		for j := range m.Reasoning {
			drop(m.Reasoning[j].Format)
		}
		for j := range m.ToolCalls {
			if m.ToolCalls[j].Signature != "" {
				drop(FormatGemini)
			}
		}
	}
	slices.Sort(out)
	return out
}
