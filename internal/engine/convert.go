package engine

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// responseFormat returns the call's structured-output request, nil for
// plain text. Only the request sets one today; a server default per model
// would be returned here for requests that set none, never replacing a
// request's own.
func responseFormat(req *llmrelayv1.GenerateRequest) *llmrelayv1.ResponseFormat {
	return req.GetResponseFormat()
}

// providerRequest converts a validated GenerateRequest into the
// provider-neutral request for the given model name, asking for structured
// output with rf (nil: none; the schema is replaced by its canonical form
// once compiled). Attempt is set per attempt by the caller. A Struct that
// does not encode as JSON (a NaN) is a *provider.FieldError naming it.
func providerRequest(req *llmrelayv1.GenerateRequest, model string, rf *llmrelayv1.ResponseFormat) (*provider.Request, error) {
	out := &provider.Request{
		Model:    model,
		Messages: make([]provider.Message, len(req.GetMessages())),
	}
	for i, m := range req.GetMessages() {
		out.Messages[i] = providerMessage(m)
	}
	if g := req.GetGeneration(); g != nil {
		if g.MaxOutputTokens != nil {
			n := int(g.GetMaxOutputTokens())
			out.Generation.MaxOutputTokens = &n
		}
		if g.Temperature != nil {
			t := float64(g.GetTemperature())
			out.Generation.Temperature = &t
		}
		if g.TopP != nil {
			p := float64(g.GetTopP())
			out.Generation.TopP = &p
		}
		out.Generation.Stop = g.GetStop()
	}
	if rf != nil {
		schema, err := structJSON(rf.GetJsonSchema())
		if err != nil {
			return nil, &provider.FieldError{Field: "response_format.json_schema", Description: err.Error()}
		}
		name := rf.GetName()
		if name == "" {
			name = "response"
		}
		out.ResponseFormat = &provider.ResponseFormat{Name: name, Schema: schema}
	} else {
		// Tools are offered only without a response format: a structured
		// output call always ends with the object.
		for i, t := range req.GetTools() {
			params, err := structJSON(t.GetParameters())
			if err != nil {
				return nil, &provider.FieldError{Field: fmt.Sprintf("tools[%d].parameters", i), Description: err.Error()}
			}
			out.Tools = append(out.Tools, provider.Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: params})
		}
		if tc := req.GetToolChoice(); tc != nil {
			switch tc.GetMode() {
			case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
				out.ToolChoice.Mode = provider.ToolChoiceNone
			case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
				out.ToolChoice.Mode = provider.ToolChoiceRequired
			case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
				out.ToolChoice = provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: tc.GetName()}
			}
		}
	}
	if opts := req.GetProviderOptions(); opts != nil {
		out.Options = opts.AsMap()
	}
	return out, nil
}

// providerMessage converts one message of a conversation.
func providerMessage(m *llmrelayv1.Message) provider.Message {
	pm := provider.Message{
		Role:       provider.Role(m.GetRole()), // the enums share their numbering
		Content:    m.GetContent(),
		ToolCallID: m.GetToolCallId(),
		Refusal:    m.GetRefusal(),
	}
	for _, tc := range m.GetToolCalls() {
		pm.ToolCalls = append(pm.ToolCalls, provider.ToolCall{ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArguments(), Signature: tc.GetSignature()})
	}
	for _, r := range m.GetReasoning() {
		pm.Reasoning = append(pm.Reasoning, provider.Reasoning{Text: r.GetText(), Signature: r.GetSignature(), Redacted: r.GetRedacted(), Format: r.GetFormat()})
	}
	return pm
}

// structJSON encodes a Struct as JSON, nil for an unset Struct.
func structJSON(s *structpb.Struct) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	return s.MarshalJSON()
}

// usage converts a call's usage.
func usage(u provider.Usage) *llmrelayv1.Usage {
	return &llmrelayv1.Usage{
		InputTokens:              uint64(u.InputTokens),
		OutputTokens:             uint64(u.OutputTokens),
		ReasoningTokens:          uint64(u.ReasoningTokens),
		CachedInputTokens:        uint64(u.CachedInputTokens),
		CacheCreationInputTokens: uint64(u.CacheCreationInputTokens),
	}
}

// finishReason maps the provider's finish reason onto the proto enum; the
// two share their numbering.
func finishReason(r provider.FinishReason) llmrelayv1.FinishReason {
	return llmrelayv1.FinishReason(r)
}
