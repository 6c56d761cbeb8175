package engine

import "github.com/llmrelay/llmrelay/internal/provider"

// fitReply holds ev, an event of the reply res assembles, to what a
// request's assistant message takes, so that every reply goes back as the
// next request's (a tool loop sends it back): a tool call past
// provider.MaxToolCalls, a reasoning block past
// provider.MaxReasoningBlocks or a provider tool block past
// provider.MaxProviderTools, and a value longer than its field of the
// message takes, is the attempt's protocol error (provider.TooLong
// names the field). Every adapter numbers a reply's calls and its
// reasoning blocks from 0, so an index says how many there are; a name,
// id, kind or format comes whole in each event that has it.
//
// A tool call's id longer than ToolCall.id takes (256 characters) is
// fitted instead (provider.FitCallID: cut, with a hash of the whole id),
// the same in each of the call's events: the provider does not need its
// own id back, only the same one in the call and its result. Anything
// else is opaque (the provider needs it back as it came) or a name no
// request's tool has (Tool.name is at most 64 characters), so it fails.
//
// It costs a few comparisons of lengths per event, and counts characters
// only of a value longer in bytes than its bound in characters.
func fitReply(ev *provider.Event, res *attemptResult) error {
	switch ev.Kind {
	case provider.EventToolCall:
		tc := &ev.ToolCall
		switch {
		case tc.Index >= provider.MaxToolCalls:
			return provider.TooManyToolCalls()
		case !maxChars(tc.Name, 128):
			return provider.TooLong("tool call's name", 128)
		case !maxChars(tc.ID, 256):
			tc.ID = provider.FitCallID(tc.ID, 256, nil)
		}
	case provider.EventReasoning:
		r := &ev.Reasoning
		switch {
		case r.Index >= provider.MaxReasoningBlocks:
			return provider.TooManyReasoningBlocks()
		case !maxChars(r.Format, 64):
			return provider.TooLong("reasoning block's format", 64)
		case !maxChars(r.ID, 256):
			return provider.TooLong("reasoning block's id", 256)
		case !maxChars(r.Kind, 64):
			return provider.TooLong("reasoning block's kind", 64)
		case !maxChars(r.ProviderFormat, 64):
			return provider.TooLong("reasoning block's provider format", 64)
		}
	case provider.EventProviderTool:
		t := ev.ProviderTool
		switch {
		case t == nil:
		case res.blocks != nil && len(res.blocks.providerTools) >= provider.MaxProviderTools:
			return provider.TooManyProviderTools()
		case !maxChars(t.Kind, 128): // never empty: the adapter knows the block by it
			return provider.TooLong("provider tool block's kind", 128)
		case !maxChars(t.ID, 256):
			return provider.TooLong("provider tool block's id", 256)
		case !maxChars(t.Name, 128):
			return provider.TooLong("provider tool block's name", 128)
		case !maxChars(t.Format, 64):
			return provider.TooLong("provider tool block's format", 64)
		}
	}
	return nil
}
