package engine

import (
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// The conversions rely on the proto enums and the provider's sharing their
// numbering.
func TestEnumsShareNumbering(t *testing.T) {
	roles := map[llmrelayv1.Role]provider.Role{
		llmrelayv1.Role_ROLE_SYSTEM: provider.RoleSystem, llmrelayv1.Role_ROLE_USER: provider.RoleUser,
		llmrelayv1.Role_ROLE_ASSISTANT: provider.RoleAssistant, llmrelayv1.Role_ROLE_TOOL: provider.RoleTool,
	}
	for pb, p := range roles {
		if provider.Role(pb) != p {
			t.Errorf("role %v converts to %v, want %v", pb, provider.Role(pb), p)
		}
	}
	finishes := map[provider.FinishReason]llmrelayv1.FinishReason{
		provider.FinishUnspecified:   llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED,
		provider.FinishStop:          llmrelayv1.FinishReason_FINISH_REASON_STOP,
		provider.FinishLength:        llmrelayv1.FinishReason_FINISH_REASON_LENGTH,
		provider.FinishToolCalls:     llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		provider.FinishContentFilter: llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER,
		provider.FinishOther:         llmrelayv1.FinishReason_FINISH_REASON_OTHER,
		provider.FinishRefusal:       llmrelayv1.FinishReason_FINISH_REASON_REFUSAL,
		provider.FinishPaused:        llmrelayv1.FinishReason_FINISH_REASON_PAUSED,
	}
	for p, pb := range finishes {
		if finishReason(p) != pb {
			t.Errorf("finish %v converts to %v, want %v", p, finishReason(p), pb)
		}
	}
}

func TestToolsAreNotOfferedWithAResponseFormat(t *testing.T) {
	req := &llmrelayv1.GenerateRequest{
		Model:          "mock/echo",
		Tools:          []*llmrelayv1.Tool{{Name: "lookup"}},
		ResponseFormat: &llmrelayv1.ResponseFormat{},
	}
	out, err := providerRequest(req, "echo", responseFormat(req))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != 0 || out.ResponseFormat == nil || out.ResponseFormat.Name != "response" {
		t.Errorf("tools %v, response format %+v: want no tools and the default name", out.Tools, out.ResponseFormat)
	}
}

func TestStructsThatAreNotJSONNameTheirField(t *testing.T) {
	nan := &structpb.Struct{Fields: map[string]*structpb.Value{"minimum": structpb.NewNumberValue(math.NaN())}}
	tests := []struct {
		name  string
		req   *llmrelayv1.GenerateRequest
		field string
	}{
		{"a schema", &llmrelayv1.GenerateRequest{ResponseFormat: &llmrelayv1.ResponseFormat{JsonSchema: nan}}, "response_format.json_schema"},
		{"tool parameters", &llmrelayv1.GenerateRequest{Tools: []*llmrelayv1.Tool{{Name: "a"}, {Name: "b", Parameters: nan}}}, "tools[1].parameters"},
		// AsMap made these the string "NaN", sent on as if the client had.
		{"provider options", &llmrelayv1.GenerateRequest{ProviderOptions: &structpb.Struct{Fields: map[string]*structpb.Value{
			"a": structpb.NewNumberValue(1),
			"b": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNullValue(), structpb.NewStructValue(nan)}}),
		}}}, "provider_options.b[1].minimum"},
		{"an infinite provider option", &llmrelayv1.GenerateRequest{ProviderOptions: &structpb.Struct{Fields: map[string]*structpb.Value{
			"seed": structpb.NewNumberValue(math.Inf(-1)),
		}}}, "provider_options.seed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := providerRequest(tt.req, "echo", responseFormat(tt.req))
			var fe *provider.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("error = %v, want a field error on %s", err, tt.field)
			}
		})
	}
}

// TestPartsMustDescribeTheMessage: an assistant message's parts go to the
// adapters only when they describe it exactly; anything else is a field
// error naming the part, before any attempt.
func TestPartsMustDescribeTheMessage(t *testing.T) {
	text := func(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Part: &llmrelayv1.Part_Text{Text: s}} }
	reasoning := func(i uint32) *llmrelayv1.Part {
		return &llmrelayv1.Part{Part: &llmrelayv1.Part_Reasoning{Reasoning: i}}
	}
	call := func(i uint32) *llmrelayv1.Part { return &llmrelayv1.Part{Part: &llmrelayv1.Part_ToolCall{ToolCall: i}} }
	tool := func(i uint32) *llmrelayv1.Part {
		return &llmrelayv1.Part{Part: &llmrelayv1.Part_ProviderTool{ProviderTool: i}}
	}
	message := func(parts ...*llmrelayv1.Part) *llmrelayv1.Message {
		return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "Let me search. Done.",
			Reasoning:     []*llmrelayv1.Reasoning{{Text: "think", Format: "anthropic"}},
			ToolCalls:     []*llmrelayv1.ToolCall{{Id: "c1", Name: "f", Arguments: "{}"}},
			ProviderTools: []*llmrelayv1.ProviderToolBlock{{Kind: "server_tool_use", Id: "s1", Name: "web_search", Input: "{}", Format: "anthropic"}},
			Parts:         parts}
	}
	tests := []struct {
		name  string
		msg   *llmrelayv1.Message
		field string // "" when valid
	}{
		{"in its order", message(reasoning(0), text("Let me search. "), tool(0), text("Done."), call(0)), ""},
		{"no parts: the usual order", message(), ""},
		{"text that is not the next piece of content", message(reasoning(0), text("Let me search."), tool(0), text("Done!"), call(0)), "messages[1].parts[3].text"},
		{"text that falls short of content", message(reasoning(0), text("Let me search. "), tool(0), call(0)), "messages[1].parts"},
		{"an index past the blocks", message(reasoning(1), text("Let me search. Done."), tool(0), call(0)), "messages[1].parts[0]"},
		{"a block named twice", message(reasoning(0), reasoning(0), text("Let me search. Done."), tool(0), call(0)), "messages[1].parts[1]"},
		{"a block left out", message(reasoning(0), text("Let me search. Done."), tool(0)), "messages[1].parts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "q"}, tt.msg}}
			out, err := providerRequest(req, "m", nil)
			var fe *provider.FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.field == "":
				if got := out.Messages[1]; len(got.Parts) != len(tt.msg.GetParts()) || len(got.ProviderTools) != 1 || got.ProviderTools[0].Input != "{}" {
					t.Errorf("converted %+v", got)
				}
			case !errors.As(err, &fe) || fe.Field != tt.field:
				t.Errorf("error %v, want a field error on %s", err, tt.field)
			}
		})
	}
}

// TestForcedToolMustBeOffered: TOOL_CHOICE_MODE_TOOL names one of the
// request's tools, and REQUIRED needs some; without a name, with another,
// or without tools, it is a field error
// before any attempt (a provider refused it after a round trip; the mock
// ignored it). With server tools, whose names are known later, any name
// passes here.
func TestForcedToolMustBeOffered(t *testing.T) {
	force := func(name string) *llmrelayv1.ToolChoice {
		return &llmrelayv1.ToolChoice{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, Name: name}
	}
	tools := []*llmrelayv1.Tool{{Name: "lookup"}, {Name: "book"}}
	tests := []struct {
		name string
		req  *llmrelayv1.GenerateRequest
		ok   bool
	}{
		{"an offered tool", &llmrelayv1.GenerateRequest{Tools: tools, ToolChoice: force("book")}, true},
		{"no name", &llmrelayv1.GenerateRequest{Tools: tools, ToolChoice: force("")}, false},
		{"a tool not offered", &llmrelayv1.GenerateRequest{Tools: tools, ToolChoice: force("cancel")}, false},
		{"no tools at all", &llmrelayv1.GenerateRequest{ToolChoice: force("lookup")}, false},
		{"a server tool's name", &llmrelayv1.GenerateRequest{ServerTools: []string{"everything/*"}, ToolChoice: force("everything__echo")}, true},
		{"some tool of none", &llmrelayv1.GenerateRequest{ToolChoice: &llmrelayv1.ToolChoice{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := providerRequest(tt.req, "echo", nil)
			var fe *provider.FieldError
			switch {
			case tt.ok && err != nil:
				t.Fatalf("error %v, want none", err)
			case tt.ok && (out.ToolChoice.Mode != provider.ToolChoiceTool || out.ToolChoice.Name != tt.req.GetToolChoice().GetName()):
				t.Fatalf("tool choice %+v", out.ToolChoice)
			case !tt.ok && (!errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "tool_choice.")):
				t.Fatalf("error %v, want a field error on tool_choice", err)
			}
		})
	}
}

// TestDisableParallelToolCalls: tool_choice.disable_parallel_tool_calls
// reaches the adapters with every mode that may call a tool, and not with
// TOOL_CHOICE_MODE_NONE or a response format, where no tool is offered;
// with server tools it holds in the later turns too, where a forced tool
// becomes auto.
func TestDisableParallelToolCalls(t *testing.T) {
	offered := []*llmrelayv1.Tool{{Name: "lookup"}}
	choice := func(mode llmrelayv1.ToolChoiceMode, name string) *llmrelayv1.ToolChoice {
		return &llmrelayv1.ToolChoice{Mode: mode, Name: name, DisableParallelToolCalls: true}
	}
	schema, _ := structpb.NewStruct(map[string]any{"type": "object"})
	tests := []struct {
		name string
		req  *llmrelayv1.GenerateRequest
		want provider.ToolChoice
	}{
		{"no mode is auto", &llmrelayv1.GenerateRequest{Tools: offered, ToolChoice: &llmrelayv1.ToolChoice{DisableParallelToolCalls: true}},
			provider.ToolChoice{Mode: provider.ToolChoiceAuto, DisableParallel: true}},
		{"auto", &llmrelayv1.GenerateRequest{Tools: offered, ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, "")},
			provider.ToolChoice{Mode: provider.ToolChoiceAuto, DisableParallel: true}},
		{"required", &llmrelayv1.GenerateRequest{Tools: offered, ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED, "")},
			provider.ToolChoice{Mode: provider.ToolChoiceRequired, DisableParallel: true}},
		{"a forced tool", &llmrelayv1.GenerateRequest{Tools: offered, ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, "lookup")},
			provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: "lookup", DisableParallel: true}},
		{"none calls no tool", &llmrelayv1.GenerateRequest{Tools: offered, ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE, "")},
			provider.ToolChoice{Mode: provider.ToolChoiceNone}},
		{"a response format offers no tool", &llmrelayv1.GenerateRequest{Tools: offered, ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, ""),
			ResponseFormat: &llmrelayv1.ResponseFormat{JsonSchema: schema}}, provider.ToolChoice{}},
		{"unset", &llmrelayv1.GenerateRequest{Tools: offered, ToolChoice: &llmrelayv1.ToolChoice{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}},
			provider.ToolChoice{Mode: provider.ToolChoiceRequired}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := providerRequest(tt.req, "echo", tt.req.GetResponseFormat())
			if err != nil {
				t.Fatal(err)
			}
			if out.ToolChoice != tt.want {
				t.Fatalf("tool choice %+v, want %+v", out.ToolChoice, tt.want)
			}
		})
	}
	t.Run("a later turn of server tools", func(t *testing.T) {
		preq := &provider.Request{ToolChoice: provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: "lookup", DisableParallel: true}}
		(&tools{}).offerTools(preq, 2)
		if want := (provider.ToolChoice{Mode: provider.ToolChoiceAuto, DisableParallel: true}); preq.ToolChoice != want {
			t.Fatalf("turn 2's tool choice %+v, want %+v", preq.ToolChoice, want)
		}
	})
}

// TestToolResultsCheckAllocatesNothing: the check runs on every request,
// so it allocates nothing for a conversation, with tool calls or
// without.
func TestToolResultsCheckAllocatesNothing(t *testing.T) {
	plain := []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}, {Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "hello"}}
	tools := []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "q"},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, ToolCalls: []*llmrelayv1.ToolCall{{Id: "a"}, {Id: "b"}}},
		{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: "b"}, {Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: "a"},
		{Role: llmrelayv1.Role_ROLE_USER, Content: "thanks"}}
	for name, msgs := range map[string][]*llmrelayv1.Message{"without tools": plain, "with tools": tools} {
		if n := testing.AllocsPerRun(100, func() {
			if err := toolResults(msgs); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations, want none", name, n)
		}
	}
}
