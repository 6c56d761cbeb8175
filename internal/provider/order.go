package provider

// Order records the order of a reply's blocks as its events arrive, for
// Message.Parts: a text block for each run of text events, and a place for
// each reasoning block, tool call and provider tool block where its first
// event came. The retry engine keeps one per attempt; it costs a
// comparison per event. The zero Order is ready to use.
type Order struct {
	parts                  []orderPart
	reasoning, calls, tool int // blocks of each kind placed so far
}

// orderPart is a Part whose text is the reply's bytes [start, end).
type orderPart struct {
	kind       PartKind
	index      int
	start, end int
}

// Add notes ev, the reply's next event. at is where ev's text starts in
// the reply's text (its length before ev's text was added), for
// EventText. A text event continues the text block before it unless
// another block was placed since; a reasoning fragment or tool-call
// fragment of a block not seen before places that block; a provider tool
// block is placed as it comes. Other events place nothing.
func (o *Order) Add(ev *Event, at int) {
	switch ev.Kind {
	case EventText:
		if n := len(o.parts); n > 0 && o.parts[n-1].kind == PartText && o.parts[n-1].end == at {
			o.parts[n-1].end = at + len(ev.Text)
			return
		}
		o.parts = append(o.parts, orderPart{kind: PartText, start: at, end: at + len(ev.Text)})
	case EventReasoning:
		if ev.Reasoning.Index >= o.reasoning {
			o.parts = append(o.parts, orderPart{kind: PartReasoning, index: ev.Reasoning.Index})
			o.reasoning = ev.Reasoning.Index + 1
		}
	case EventToolCall:
		if ev.ToolCall.Index >= o.calls {
			o.parts = append(o.parts, orderPart{kind: PartToolCall, index: ev.ToolCall.Index})
			o.calls = ev.ToolCall.Index + 1
		}
	case EventProviderTool:
		o.parts = append(o.parts, orderPart{kind: PartProviderTool, index: o.tool})
		o.tool++
	}
}

// Parts returns the reply's parts. text is the reply's text, the
// concatenation of its text events, maybe cut short since (at an output
// limit): text parts past its end are cut or dropped.
func (o *Order) Parts(text string) []Part {
	out := make([]Part, 0, len(o.parts))
	for _, p := range o.parts {
		if p.kind != PartText {
			out = append(out, Part{Kind: p.kind, Index: p.index})
			continue
		}
		end := min(p.end, len(text))
		if p.start < end {
			out = append(out, Part{Kind: PartText, Text: text[p.start:end]})
		}
	}
	return out
}

// Usual reports whether the reply's blocks came in the usual order, the
// one Message.Blocks gives a message without Parts: its reasoning blocks
// in order, its text as one block (text being the reply's text, as Parts
// takes it), its provider tool blocks, its tool calls in order. Then the
// reply needs no Parts. It allocates nothing.
func (o *Order) Usual(text string) bool {
	i := 0
	next := func(kind PartKind, index int) bool {
		if i >= len(o.parts) || o.parts[i].kind != kind || kind != PartText && o.parts[i].index != index {
			return false
		}
		i++
		return true
	}
	for k := range o.reasoning {
		if !next(PartReasoning, k) {
			return false
		}
	}
	if text != "" && (!next(PartText, 0) || o.parts[i-1].start != 0 || o.parts[i-1].end < len(text)) {
		return false
	}
	for k := range o.tool {
		if !next(PartProviderTool, k) {
			return false
		}
	}
	for k := range o.calls {
		if !next(PartToolCall, k) {
			return false
		}
	}
	return i == len(o.parts)
}
