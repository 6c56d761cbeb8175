package telemetry

import (
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Prompt and completion content, in the GenAI conventions' JSON shapes for
// gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.system_instructions. Only recorded when the operator opts in
// (tracing.capture_content); the SDK's attribute limits
// (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) bound how much of it a span keeps.

type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

// inputContent returns the attributes that record a request's messages:
// system messages as the system instructions, the rest as the input.
func inputContent(msgs []provider.Message) []attribute.KeyValue {
	var system []part
	var input []message
	for _, m := range msgs {
		switch m.Role {
		case provider.RoleSystem:
			system = append(system, part{Type: "text", Content: m.Content})
		case provider.RoleTool:
			input = append(input, message{Role: "tool", Parts: []part{{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content}}})
		default:
			msg := message{Role: m.Role.String()}
			if m.Content != "" {
				msg.Parts = append(msg.Parts, part{Type: "text", Content: m.Content})
			}
			for _, tc := range m.ToolCalls {
				msg.Parts = append(msg.Parts, toolCallPart(tc.ID, tc.Name, tc.Arguments))
			}
			input = append(input, msg)
		}
	}
	var attrs []attribute.KeyValue
	if len(system) > 0 {
		attrs = append(attrs, AttrSystemInstructions.String(jsonText(system)))
	}
	return append(attrs, AttrInputMessages.String(jsonText(input)))
}

// toolCallPart is a tool call's part; arguments that are not JSON are
// kept as a JSON string.
func toolCallPart(id, name, args string) part {
	raw := json.RawMessage(args)
	if !json.Valid(raw) {
		raw, _ = json.Marshal(args)
	}
	return part{Type: "tool_call", ID: id, Name: name, Arguments: raw}
}

// Output is an attempt's reply, for gen_ai.output.messages.
type Output struct {
	Text      string
	ToolCalls []provider.ToolCall
}

func (o *Output) attribute(finish string) attribute.KeyValue {
	msg := message{Role: "assistant", FinishReason: finish, Parts: []part{}}
	if o.Text != "" {
		msg.Parts = append(msg.Parts, part{Type: "text", Content: o.Text})
	}
	for _, tc := range o.ToolCalls {
		msg.Parts = append(msg.Parts, toolCallPart(tc.ID, tc.Name, tc.Arguments))
	}
	return AttrOutputMessages.String(jsonText([]message{msg}))
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
