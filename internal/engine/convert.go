package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
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
// does not encode as JSON (a NaN), and a tool result that answers no call
// or a call left unanswered (toolResults), is a *provider.FieldError
// naming it.
func providerRequest(req *llmrelayv1.GenerateRequest, model string, rf *llmrelayv1.ResponseFormat) (*provider.Request, error) {
	if err := toolResults(req.GetMessages()); err != nil {
		return nil, err
	}
	out := &provider.Request{
		Model:    model,
		Messages: make([]provider.Message, len(req.GetMessages())),
	}
	for i, m := range req.GetMessages() {
		pm, err := providerMessage(i, m)
		if err != nil {
			return nil, err
		}
		out.Messages[i] = pm
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
			// A name given twice leaves the model's call of it ambiguous;
			// OpenAI, Anthropic and Gemini each refuse it after a round
			// trip, and the mock ran it.
			if j := slices.IndexFunc(req.GetTools()[:i], func(u *llmrelayv1.Tool) bool { return u.GetName() == t.GetName() }); j >= 0 {
				return nil, &provider.FieldError{Field: fmt.Sprintf("tools[%d].name", i),
					Description: fmt.Sprintf("%q is also the name of tools[%d]: each tool needs a name of its own", t.GetName(), j)}
			}
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
				if len(req.GetTools()) == 0 && len(req.GetServerTools()) == 0 {
					return nil, &provider.FieldError{Field: "tool_choice.mode", Description: "requires a tool to call, and the request offers none (tools, server_tools)"}
				}
				out.ToolChoice.Mode = provider.ToolChoiceRequired
			case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
				if err := forcedTool(req, tc.GetName()); err != nil {
					return nil, err
				}
				out.ToolChoice = provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: tc.GetName()}
			}
			// At most one call per reply means nothing to a reply that
			// calls no tool; the adapters send it only with tools.
			out.ToolChoice.DisableParallel = tc.GetDisableParallelToolCalls() && out.ToolChoice.Mode != provider.ToolChoiceNone
		}
	}
	if opts := req.GetProviderOptions(); opts != nil {
		if path := nonFinite(structpb.NewStructValue(opts), "provider_options"); path != "" {
			return nil, &provider.FieldError{Field: path, Description: "is NaN or infinite, which JSON has no number for"}
		}
		out.Options = opts.AsMap()
	}
	return out, nil
}

// forcedTool checks the tool TOOL_CHOICE_MODE_TOOL forces: it must be
// named, and be one of the request's tools (or, with server_tools, may be
// one of theirs, which are only known later). Sent on, a provider refuses
// either mistake after a round trip, and the mock ignored it.
func forcedTool(req *llmrelayv1.GenerateRequest, name string) error {
	switch {
	case name == "":
		return &provider.FieldError{Field: "tool_choice.name", Description: "is required to force a tool: the name of the tool the model must call"}
	case len(req.GetServerTools()) > 0 || slices.ContainsFunc(req.GetTools(), func(t *llmrelayv1.Tool) bool { return t.GetName() == name }):
		return nil
	}
	return &provider.FieldError{Field: "tool_choice.name", Description: fmt.Sprintf("%q is not the name of one of the request's tools", name)}
}

// nonFinite returns the path (below path) of the first NaN or infinite
// number in v, "" when it has none. AsMap would turn one into the string
// "NaN", sending the provider a string where the client set a number.
func nonFinite(v *structpb.Value, path string) string {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		if math.IsNaN(k.NumberValue) || math.IsInf(k.NumberValue, 0) {
			return path
		}
	case *structpb.Value_StructValue:
		for _, name := range slices.Sorted(maps.Keys(k.StructValue.GetFields())) {
			if p := nonFinite(k.StructValue.GetFields()[name], path+"."+name); p != "" {
				return p
			}
		}
	case *structpb.Value_ListValue:
		for i, item := range k.ListValue.GetValues() {
			if p := nonFinite(item, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// providerMessage converts messages[i] of a conversation (the request's,
// then, with server tools, the transcript's), its parts checked.
func providerMessage(i int, m *llmrelayv1.Message) (provider.Message, error) {
	pm := provider.Message{
		Role:       provider.Role(m.GetRole()), // the enums share their numbering
		Content:    m.GetContent(),
		ToolCallID: m.GetToolCallId(),
		ToolError:  m.GetToolError(),
		Refusal:    m.GetRefusal(),
	}
	for _, tc := range m.GetToolCalls() {
		pm.ToolCalls = append(pm.ToolCalls, provider.ToolCall{ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArguments(), Signature: tc.GetSignature()})
	}
	for _, r := range m.GetReasoning() {
		pm.Reasoning = append(pm.Reasoning, provider.Reasoning{Text: r.GetText(), Signature: r.GetSignature(), Redacted: r.GetRedacted(), Format: r.GetFormat(),
			ID: r.GetId(), Kind: r.GetKind(), ProviderFormat: r.GetProviderFormat()})
	}
	for _, t := range m.GetProviderTools() {
		pm.ProviderTools = append(pm.ProviderTools, provider.ProviderTool{Kind: t.GetKind(), ID: t.GetId(), Name: t.GetName(),
			Input: t.GetInput(), Result: t.GetResult(), Extra: t.GetExtra(), Format: t.GetFormat()})
	}
	parts, err := messageParts(i, m, &pm)
	if err != nil {
		return pm, err
	}
	pm.Parts = parts
	return pm, nil
}

// imageDetails are ImageDetail's names on the wire (OpenAI's detail).
var imageDetails = [...]string{
	llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW:      "low",
	llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH:     "high",
	llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO:     "auto",
	llmrelayv1.ImageDetail_IMAGE_DETAIL_ORIGINAL: "original",
}

// providerImage converts an image part.
func providerImage(img *llmrelayv1.Image) provider.Image {
	out := provider.Image{URL: img.GetUrl(), Data: img.GetData(), MediaType: img.GetMediaType()}
	if d := img.GetDetail(); d > 0 && int(d) < len(imageDetails) {
		out.Detail = imageDetails[d]
	}
	return out
}

// imageDataType returns the media type an inline image's bytes announce
// (provider.ImageTypeOf), and false when it is another of
// the four image types than the image's media_type says (PNG bytes
// labelled image/jpeg, which the provider refuses after a round trip).
// Bytes of no type it knows as one of the four pass: the media type
// stands.
func imageDataType(img *llmrelayv1.Image) (sniffed string, ok bool) {
	data := img.GetData()
	if len(data) == 0 {
		return "", true
	}
	if sniffed = provider.ImageTypeOf(data); sniffed != "" {
		return sniffed, sniffed == img.GetMediaType()
	}
	return sniffed, true
}

// messageParts converts messages[i]'s parts, nil when it has none, and
// checks that they describe the message exactly: each names a block that
// exists, every block is named once, and the text parts, concatenated,
// are the message's content. Anything else is a *provider.FieldError:
// sent on, the adapters would drop or repeat blocks. The image parts of a
// user message or a tool result become pm.Images, in order, each placed
// by its part.
func messageParts(i int, m *llmrelayv1.Message, pm *provider.Message) ([]provider.Part, error) {
	if len(m.GetParts()) == 0 {
		return nil, nil
	}
	field := fmt.Sprintf("messages[%d].parts", i)
	kinds := [...]struct {
		name  string
		count int
		seen  []bool
	}{
		provider.PartReasoning:    {name: "reasoning", count: len(m.GetReasoning())},
		provider.PartToolCall:     {name: "tool_calls", count: len(m.GetToolCalls())},
		provider.PartProviderTool: {name: "provider_tools", count: len(m.GetProviderTools())},
	}
	for k := range kinds {
		kinds[k].seen = make([]bool, kinds[k].count)
	}
	parts := make([]provider.Part, len(m.GetParts()))
	text := 0
	for j, p := range m.GetParts() {
		var part provider.Part
		var index uint32
		switch v := p.GetPart().(type) {
		case *llmrelayv1.Part_Text:
			if !strings.HasPrefix(m.GetContent()[text:], v.Text) {
				return nil, &provider.FieldError{Field: fmt.Sprintf("%s[%d].text", field, j), Description: "is not the next piece of content: the text parts, in order, must add up to content (send the message as final.message gave it, or without parts)"}
			}
			text += len(v.Text)
			parts[j] = provider.Part{Kind: provider.PartText, Text: v.Text}
			continue
		case *llmrelayv1.Part_Reasoning:
			part, index = provider.Part{Kind: provider.PartReasoning}, v.Reasoning
		case *llmrelayv1.Part_ToolCall:
			part, index = provider.Part{Kind: provider.PartToolCall}, v.ToolCall
		case *llmrelayv1.Part_ProviderTool:
			part, index = provider.Part{Kind: provider.PartProviderTool}, v.ProviderTool
		case *llmrelayv1.Part_Image:
			if r := m.GetRole(); r != llmrelayv1.Role_ROLE_USER && r != llmrelayv1.Role_ROLE_TOOL {
				return nil, &provider.FieldError{Field: fmt.Sprintf("%s[%d].image", field, j), Description: "image parts belong to ROLE_USER and ROLE_TOOL messages"}
			}
			if sniffed, ok := imageDataType(v.Image); !ok {
				return nil, &provider.FieldError{Field: fmt.Sprintf("%s[%d].image.data", field, j),
					Description: fmt.Sprintf("holds %s data, but media_type says %s", sniffed, v.Image.GetMediaType())}
			}
			parts[j] = provider.Part{Kind: provider.PartImage, Index: len(pm.Images)}
			pm.Images = append(pm.Images, providerImage(v.Image))
			continue
		default:
			return nil, &provider.FieldError{Field: fmt.Sprintf("%s[%d]", field, j), Description: "is empty: set text, reasoning, tool_call, provider_tool or image"}
		}
		k := &kinds[part.Kind]
		switch {
		case int64(index) >= int64(k.count):
			return nil, &provider.FieldError{Field: fmt.Sprintf("%s[%d]", field, j), Description: fmt.Sprintf("names %s[%d], but the message has %d", k.name, index, k.count)}
		case k.seen[index]:
			return nil, &provider.FieldError{Field: fmt.Sprintf("%s[%d]", field, j), Description: fmt.Sprintf("names %s[%d] a second time", k.name, index)}
		}
		k.seen[index] = true
		part.Index = int(index)
		parts[j] = part
	}
	if text != len(m.GetContent()) {
		return nil, &provider.FieldError{Field: field, Description: "its text parts do not add up to content (send the message as final.message gave it, or without parts)"}
	}
	for _, k := range kinds {
		if n := slices.Index(k.seen, false); n >= 0 {
			return nil, &provider.FieldError{Field: field, Description: fmt.Sprintf("does not name %s[%d]: every block of the message needs its part", k.name, n)}
		}
	}
	return parts, nil
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

// finalMessage returns the final's message of a successful attempt: its
// text, reasoning, tool calls (those that got an id, a name or arguments),
// provider tool blocks, refusal, and the order of its blocks.
func finalMessage(res *attemptResult) *llmrelayv1.Message {
	more := res.more()
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: res.text.String(), Refusal: more.refusal.String()}
	for _, r := range res.providerReasoning() {
		msg.Reasoning = append(msg.Reasoning, &llmrelayv1.Reasoning{Text: r.Text, Signature: r.Signature, Redacted: r.Redacted, Format: r.Format,
			Id: r.ID, Kind: r.Kind, ProviderFormat: r.ProviderFormat})
	}
	calls := make([]int, len(more.toolCalls)) // a call's index in msg.ToolCalls, -1 when left out
	for i, tc := range more.toolCalls {
		calls[i] = -1
		if tc.id != "" || tc.name != "" || tc.arguments.Len() > 0 {
			calls[i] = len(msg.ToolCalls)
			msg.ToolCalls = append(msg.ToolCalls, tc.message())
		}
	}
	for i := range more.providerTools {
		t := &more.providerTools[i]
		msg.ProviderTools = append(msg.ProviderTools, &llmrelayv1.ProviderToolBlock{
			Kind: t.Kind, Id: t.ID, Name: t.Name, Input: t.Input, Result: t.Result, Extra: t.Extra, Format: t.Format,
		})
	}
	if res.order.Usual(msg.Content) {
		return msg // the order every adapter takes without parts: no need to send it
	}
	for _, p := range res.order.Parts(msg.Content) {
		var part llmrelayv1.Part
		switch p.Kind {
		case provider.PartText:
			part.Part = &llmrelayv1.Part_Text{Text: p.Text}
		case provider.PartReasoning:
			part.Part = &llmrelayv1.Part_Reasoning{Reasoning: uint32(p.Index)}
		case provider.PartToolCall:
			if p.Index >= len(calls) || calls[p.Index] < 0 {
				continue
			}
			part.Part = &llmrelayv1.Part_ToolCall{ToolCall: uint32(calls[p.Index])}
		case provider.PartProviderTool:
			part.Part = &llmrelayv1.Part_ProviderTool{ProviderTool: uint32(p.Index)}
		}
		msg.Parts = append(msg.Parts, &part)
	}
	return msg
}
