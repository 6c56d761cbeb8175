package openai

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// chatRequest is the body of POST /chat/completions, with the fields
// llmrelay sets.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	Stream              bool          `json:"stream"`
	StreamOptions       streamOptions `json:"stream_options"`
	MaxTokens           *int          `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int          `json:"max_completion_tokens,omitempty"`
	Temperature         *float64      `json:"temperature,omitempty"`
	TopP                *float64      `json:"top_p,omitempty"`
	Stop                []string      `json:"stop,omitempty"`
	Tools               []chatTool    `json:"tools,omitempty"`
	ToolChoice          any           `json:"tool_choice,omitempty"`
	// ParallelToolCalls is false when the request asks for at most one
	// tool call per reply, and absent otherwise (the API's default, true,
	// which provider_options may still set): OpenAI refuses it without
	// tools, so it is sent only with them.
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	// ResponseFormat asks for structured output: {"type": "json_schema",
	// "json_schema": {name, schema, strict}}, strict only when the schema
	// fits OpenAI's strict subset (see newResponseFormat).
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

// responseFormat is OpenAI's `response_format` for structured output.
type responseFormat struct {
	Type       string     `json:"type"` // always "json_schema"
	JSONSchema jsonSchema `json:"json_schema"`
}

// jsonSchema is the `json_schema` member of responseFormat.
type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// dialect is OpenAI's structured output: any schema, sent as it is, and
// enforced strictly when it fits the strict subset and its limits.
var dialect = &schema.Dialect{
	Name: "OpenAI",
	Strict: &schema.StrictSubset{
		Keywords: []string{"type", "properties", "required", "additionalProperties", "items",
			"enum", "const", "anyOf", "$ref", "$defs", "definitions", "description", "title",
			"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
			"multipleOf", "minItems", "maxItems"},
		Formats:       []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"},
		MaxProperties: 5000,
		MaxNesting:    10,
		MaxEnumValues: 1000,
	},
}

// newResponseFormat returns the response_format for a schema: the schema as
// it is (less $schema and $comment), with strict true only when it fits
// OpenAI's strict subset. name defaults to "response" and is reduced to
// OpenAI's alphabet. It fails only when the schema is not JSON.
func newResponseFormat(name string, s []byte) (*responseFormat, error) {
	l, err := schema.Lower(s, dialect)
	if err != nil {
		return nil, err
	}
	return &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: formatName(name), Schema: l.Schema, Strict: l.Strict}}, nil
}

var formatNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// formatName reduces name to the letters, digits, '_' and '-' that OpenAI
// allows, and to 64 of them; "response" when empty.
func formatName(name string) string {
	name = formatNameChars.ReplaceAllString(name, "_")
	if name == "" {
		return "response"
	}
	return name[:min(len(name), 64)]
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, or for an assistant turn with Mistral thinking
	// a list of parts (contentParts); omitted only for an assistant turn
	// that is all tool calls.
	Content any `json:"content,omitempty"`
	// ReasoningContent and Reasoning send an assistant turn's reasoning
	// back under the name it came in (DeepSeek requires it after tool
	// calls).
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	Reasoning        *string `json:"reasoning,omitempty"`
	// ReasoningDetails sends OpenRouter's reasoning details back, in
	// order, as they came (OpenRouter passes them to the model's own
	// provider, which needs its signatures and encrypted reasoning).
	ReasoningDetails []requestDetail `json:"reasoning_details,omitempty"`
	ToolCalls        []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

// requestDetail is one of OpenRouter's reasoning details in a request:
// reasoning.text (text, signature), reasoning.summary (summary) or
// reasoning.encrypted (data), with its id, its upstream's format and its
// index among the message's details.
type requestDetail struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Data      string `json:"data,omitempty"`
	Signature string `json:"signature,omitempty"`
	ID        string `json:"id,omitempty"`
	Format    string `json:"format,omitempty"`
	Index     int    `json:"index"`
}

// detailOf returns reasoning block r, of FormatOpenRouterDetails, as the
// index-th reasoning detail of its message.
func detailOf(r *provider.Reasoning, index int) requestDetail {
	d := requestDetail{Type: r.Kind, Signature: r.Signature, ID: r.ID, Format: r.ProviderFormat, Index: index, Data: r.Redacted}
	switch r.Kind {
	case "reasoning.summary":
		d.Summary = r.Text
	case "reasoning.encrypted":
	default:
		d.Text = r.Text
	}
	if d.Type == "" {
		d.Type = "reasoning.text"
	}
	return d
}

// requestPart is a part of a list content: {"type": "text", "text": ...},
// a user's {"type": "image_url", "image_url": {"url": ..., "detail": ...}}
// or Mistral's {"type": "thinking", "thinking": [{"type": "text", ...}]}.
type requestPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *imageURL     `json:"image_url,omitempty"`
	Thinking []requestPart `json:"thinking,omitempty"`
}

// imageURL is an image_url part's image: an https URL, or an inline image
// as a data: URL.
type imageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// userParts returns a user message with images as a list content: its
// text parts and image_url parts, in order (provider.Message.Blocks);
// empty text parts are left out.
func userParts(m *provider.Message) []requestPart {
	parts := make([]requestPart, 0, len(m.Parts))
	for _, b := range m.Blocks() {
		switch {
		case b.Kind == provider.PartText && b.Text != "":
			parts = append(parts, requestPart{Type: "text", Text: b.Text})
		case b.Kind == provider.PartImage:
			parts = append(parts, imagePart(&m.Images[b.Index]))
		}
	}
	return parts
}

// toolResultImages returns a tool result's images as the parts of the
// user message that follows the turn's tool messages: the API's tool
// messages take text only, so a tool result's text goes in its tool
// message and its images, in order, after a text part that says whose
// they are ("Images in the result of tool call call_1:"), in a user
// message after the last tool message of the run (a user message between
// them would leave the tool calls after it unanswered).
func (p *Provider) toolResultImages(m *provider.Message) []requestPart {
	parts := make([]requestPart, 0, 1+len(m.Images))
	parts = append(parts, requestPart{Type: "text", Text: "Images in the result of tool call " + p.callID(m.ToolCallID) + ":"})
	for _, b := range m.Blocks() {
		if b.Kind == provider.PartImage {
			parts = append(parts, imagePart(&m.Images[b.Index]))
		}
	}
	return parts
}

// imagePart returns an image as an image_url part: its https URL, or the
// image inline as a data: URL, with its detail.
func imagePart(img *provider.Image) requestPart {
	u := img.URL
	if u == "" {
		u = img.DataURL()
	}
	return requestPart{Type: "image_url", ImageURL: &imageURL{URL: u, Detail: img.Detail}}
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function chatToolDef `json:"function"`
}

type chatToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type namedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// emptyObjectSchema is sent for a tool without parameters: some compatible
// servers reject a function without a schema.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// request maps a provider-neutral request to a streamed chat completion
// request that also asks for the usage chunk. A response format whose
// schema is not JSON is a *provider.FieldError.
func (p *Provider) request(req *provider.Request) (*chatRequest, error) {
	if n := len(req.Generation.Stop); p.maxStop > 0 && n > p.maxStop {
		return nil, provider.TooManyStops(n, p.maxStop, "OpenAI")
	}
	r := &chatRequest{
		Model:         req.Model,
		Messages:      make([]chatMessage, 0, len(req.Messages)),
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
		Temperature:   req.Generation.Temperature,
		TopP:          req.Generation.TopP,
		Stop:          req.Generation.Stop,
	}
	if p.maxCompletionTokens {
		r.MaxCompletionTokens = req.Generation.MaxOutputTokens
	} else {
		r.MaxTokens = req.Generation.MaxOutputTokens
	}
	var toolImages []requestPart // the images of the tool results since the last other message
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role != provider.RoleTool && toolImages != nil {
			r.Messages = append(r.Messages, chatMessage{Role: "user", Content: toolImages})
			toolImages = nil
		}
		r.Messages = append(r.Messages, p.message(m))
		if m.Role == provider.RoleTool && len(m.Images) > 0 {
			toolImages = append(toolImages, p.toolResultImages(m)...)
		}
	}
	if toolImages != nil {
		r.Messages = append(r.Messages, chatMessage{Role: "user", Content: toolImages})
	}
	if len(req.Tools) > 0 {
		r.Tools = make([]chatTool, len(req.Tools))
		for i, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 {
				params = emptyObjectSchema
			}
			r.Tools[i] = chatTool{Type: "function", Function: chatToolDef{Name: t.Name, Description: t.Description, Parameters: params}}
		}
		r.ToolChoice = toolChoice(req.ToolChoice)
		if req.ToolChoice.DisableParallel {
			r.ParallelToolCalls = new(bool)
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		f, err := newResponseFormat(rf.Name, rf.Schema)
		if err != nil {
			return nil, &provider.FieldError{Field: "response_format.json_schema", Description: err.Error()}
		}
		r.ResponseFormat = f
	}
	return r, nil
}

// message maps a message. A user message with images is a list content
// of text and image_url parts, in order (userParts); a tool result is its
// text alone, the API's tool messages taking no image (its images follow
// in a user message, toolResultImages). An assistant turn's reasoning goes back in the
// field it came in: reasoning_content, reasoning, OpenRouter's
// reasoning_details, or Mistral's thinking parts, which make the content
// a list of parts in the order of the turn's blocks (thinking and text;
// provider.Message.Blocks); reasoning of other providers' formats is left
// out.
func (p *Provider) message(m *provider.Message) chatMessage {
	out := chatMessage{Role: m.Role.String(), ToolCallID: p.callID(m.ToolCallID)}
	if m.Content != "" || len(m.ToolCalls) == 0 {
		out.Content = m.Content
	}
	if len(m.Images) > 0 && m.Role == provider.RoleUser {
		out.Content = userParts(m)
	}
	var mistral bool
	for i := range m.Reasoning {
		switch r := &m.Reasoning[i]; r.Format {
		case provider.FormatReasoningContent:
			out.ReasoningContent = appendText(out.ReasoningContent, r.Text)
		case provider.FormatReasoning:
			out.Reasoning = appendText(out.Reasoning, r.Text)
		case provider.FormatOpenRouterDetails:
			out.ReasoningDetails = append(out.ReasoningDetails, detailOf(r, len(out.ReasoningDetails)))
		case provider.FormatMistralThinking:
			mistral = true
		}
	}
	if mistral {
		var parts []requestPart
		for _, b := range m.Blocks() {
			switch {
			case b.Kind == provider.PartText && b.Text != "":
				parts = append(parts, requestPart{Type: "text", Text: b.Text})
			case b.Kind == provider.PartReasoning && m.Reasoning[b.Index].Format == provider.FormatMistralThinking:
				parts = append(parts, requestPart{Type: "thinking", Thinking: []requestPart{{Type: "text", Text: m.Reasoning[b.Index].Text}}})
			}
		}
		out.Content = parts
	}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]chatToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			out.ToolCalls[i] = chatToolCall{ID: p.callID(c.ID), Type: "function", Function: chatFunction{Name: c.Name, Arguments: c.Arguments}}
		}
	}
	return out
}

// maxCallID is the longest tool call id OpenAI takes, in an assistant
// message's tool_calls[].id and a tool message's tool_call_id: it answers
// 400 "string too long. Expected a string with maximum length 40" to a
// longer one.
const maxCallID = 40

// callID returns a tool call's id as the server takes it, the same in the
// call and in the result that answers it: by Mistral's rule
// (mistralCallID) for a server that has it, else as OpenAI takes it, an
// id of at most maxCallID bytes as it is, a longer one cut, with 8 hex
// digits of its hash (provider.FitCallID). OpenAI's own ids fit; a
// client's (up to 256 characters) or another provider's may not, and a
// route that falls back to an openai target sends them. The ids of the
// reply are the server's own, so a mapped id never reaches the client.
func (p *Provider) callID(id string) string {
	if p.mistralCallIDs {
		return mistralCallID(id)
	}
	return provider.FitCallID(id, maxCallID, nil)
}

// mistralCallIDLen is the length of the tool call ids Mistral's API
// takes, all letters and digits: it answers 400 "Tool call id was ... but
// must be a-z, A-Z, 0-9, with a length of 9" to any other.
const mistralCallIDLen = 9

// base62 are the characters of a Mistral tool call id.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// mistralCallID returns an id as Mistral takes it: one of its own (9
// letters and digits) as it is, any other as 9 letters and digits of its
// SHA-256 (53 bits: two ids of a conversation stay two). "" stays "".
func mistralCallID(id string) string {
	fits := len(id) == mistralCallIDLen
	for i := 0; fits && i < len(id); i++ {
		fits = strings.IndexByte(base62, id[i]) >= 0
	}
	if fits || id == "" {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	n := binary.BigEndian.Uint64(sum[:8])
	var b [mistralCallIDLen]byte
	for i := range b {
		b[i] = base62[n%62]
		n /= 62
	}
	return string(b[:])
}

// appendText appends text to the reasoning field *s, creating it.
func appendText(s *string, text string) *string {
	if s == nil {
		return &text
	}
	joined := *s + text
	return &joined
}

// owned are the body fields the adapter sets from the request itself,
// which provider_options may not set.
var owned = httpx.Owned{
	"model": "model", "messages": "messages", "stream": "", "stream_options": "", "n": "",
	"tools": "tools", "tool_choice": "tool_choice", "functions": "tools", "function_call": "tool_choice",
	"response_format": "response_format",
}

func toolChoice(c provider.ToolChoice) any {
	switch c.Mode {
	case provider.ToolChoiceNone:
		return "none"
	case provider.ToolChoiceRequired:
		return "required"
	case provider.ToolChoiceTool:
		n := namedToolChoice{Type: "function"}
		n.Function.Name = c.Name
		return n
	}
	return "auto"
}
