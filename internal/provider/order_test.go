package provider_test

import (
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestOrder(t *testing.T) {
	text := func(s string) provider.Event { return provider.Event{Kind: provider.EventText, Text: s} }
	reason := func(i int) provider.Event {
		return provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Index: i, Text: "…"}}
	}
	call := func(i int) provider.Event {
		return provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{Index: i, ArgumentsDelta: "{"}}
	}
	tool := provider.Event{Kind: provider.EventProviderTool, ProviderTool: &provider.ProviderTool{Kind: "server_tool_use"}}
	part := func(k provider.PartKind, i int) provider.Part { return provider.Part{Kind: k, Index: i} }
	txt := func(s string) provider.Part { return provider.Part{Kind: provider.PartText, Text: s} }
	tests := []struct {
		name   string
		events []provider.Event
		cut    int // the reply's text cut to this many bytes; -1: not cut
		want   []provider.Part
		usual  bool // the usual order: no parts needed
	}{
		{"the usual order", []provider.Event{reason(0), reason(1), text("a"), tool, call(0), call(0), call(1)}, -1,
			[]provider.Part{part(provider.PartReasoning, 0), part(provider.PartReasoning, 1), txt("a"), part(provider.PartProviderTool, 0), part(provider.PartToolCall, 0), part(provider.PartToolCall, 1)}, true},
		{"nothing", nil, -1, []provider.Part{}, true},
		{"text pieces make one block", []provider.Event{text("a"), text("b")}, -1, []provider.Part{txt("ab")}, true},
		{"interleaved thinking and calls", []provider.Event{reason(0), reason(0), call(0), call(0), reason(1), call(1)}, -1,
			[]provider.Part{part(provider.PartReasoning, 0), part(provider.PartToolCall, 0), part(provider.PartReasoning, 1), part(provider.PartToolCall, 1)}, false},
		{"text between provider tool blocks", []provider.Event{reason(0), text("Let me "), text("search."), tool, tool, text("More."), tool}, -1,
			[]provider.Part{part(provider.PartReasoning, 0), txt("Let me search."), part(provider.PartProviderTool, 0), part(provider.PartProviderTool, 1), txt("More."), part(provider.PartProviderTool, 2)}, false},
		{"a fragment of a placed block does not split the text", []provider.Event{reason(0), text("a"), reason(0), text("b")}, -1,
			[]provider.Part{part(provider.PartReasoning, 0), txt("ab")}, true},
		{"a signature after the text", []provider.Event{text("Hello"), reason(0)}, -1, []provider.Part{txt("Hello"), part(provider.PartReasoning, 0)}, false},
		{"text cut short", []provider.Event{text("abc"), tool, text("def")}, 4, []provider.Part{txt("abc"), part(provider.PartProviderTool, 0), txt("d")}, false},
		{"a text block cut away", []provider.Event{text("abc"), tool, text("def")}, 3, []provider.Part{txt("abc"), part(provider.PartProviderTool, 0)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o provider.Order
			reply := ""
			for _, ev := range tt.events {
				o.Add(&ev, len(reply))
				reply += ev.Text
			}
			if tt.cut >= 0 {
				reply = reply[:tt.cut]
			}
			if got := o.Parts(reply); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parts %+v, want %+v", got, tt.want)
			}
			if got := o.Usual(reply); got != tt.usual {
				t.Errorf("Usual = %v, want %v", got, tt.usual)
			}
		})
	}
}
