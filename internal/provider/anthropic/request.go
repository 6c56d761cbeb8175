package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// messagesRequest is the body of POST /messages, with the fields llmrelay
// sets.
type messagesRequest struct {
	Model         string    `json:"model"`
	MaxTokens     int       `json:"max_tokens"`
	System        string    `json:"system,omitempty"`
	Messages      []message `json:"messages"`
	Stream        bool      `json:"stream"`
	Temperature   *float64  `json:"temperature,omitempty"`
	TopP          *float64  `json:"top_p,omitempty"`
	StopSequences []string  `json:"stop_sequences,omitempty"`
	// Tools are the request's tools (tool), then the server tools of
	// provider_options.server_tools, as they were given.
	Tools      []any       `json:"tools,omitempty"`
	ToolChoice *toolChoice `json:"tool_choice,omitempty"`
	// OutputConfig asks for structured output: {"format": {"type":
	// "json_schema", "schema": ...}}, the schema in Anthropic's subset
	// (dialect).
	OutputConfig *outputConfig `json:"output_config,omitempty"`
}

type outputConfig struct {
	Format *outputFormat `json:"format"`
}

// outputFormat is the `format` member of output_config.
type outputFormat struct {
	Type   string          `json:"type"` // always "json_schema"
	Schema json.RawMessage `json:"schema"`
}

// dialect is what Anthropic's structured output takes of JSON Schema: $ref,
// $defs, definitions, type, anyOf, allOf (without references among its
// members), enum and const of plain values, properties, required, items,
// the common formats, pattern, description and minItems 0 or 1;
// additionalProperties false on every object, as Anthropic requires; oneOf
// sent as anyOf. No recursion, no anchors or dynamic references.
var dialect = &schema.Dialect{
	Name: "Anthropic",
	Keywords: []string{"$ref", "$defs", "definitions", "type", "anyOf", "allOf", "enum", "const",
		"properties", "required", "items", "format", "pattern", "description", "additionalProperties", "minItems"},
	Formats:          []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"},
	EnumBoolsAndNull: true,
	Keep: func(k string, v any) bool {
		switch k {
		case "minItems":
			return v == json.Number("0") || v == json.Number("1")
		case "allOf":
			list, _ := v.([]any)
			return !slices.ContainsFunc(list, func(member any) bool {
				m, _ := member.(map[string]any)
				_, ref := m["$ref"]
				return ref
			})
		}
		return true
	},
	Unsupported:  []string{"$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$id"},
	CloseObjects: true,
	OneOfAsAnyOf: true,
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block: text, thinking, redacted_thinking, tool_use
// or tool_result, or, as raw JSON, a provider tool block sent back as it
// came. A thinking block always has its thinking and signature fields,
// empty or not.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content is a tool_result's content: its text, or, for a result
	// with images, its text and image blocks ([]block, imageBlocks);
	// nil for an empty result.
	Content any `json:"content,omitempty"`
	// IsError marks a tool_result that is the tool's failure.
	IsError bool `json:"is_error,omitempty"`
	// Source is an image block's image.
	Source *imageSource `json:"source,omitempty"`
	// raw, when set, is the whole block (providerToolBlock).
	raw json.RawMessage
}

// imageSource is an image block's source: {"type": "base64",
// "media_type": ..., "data": ...} for an inline image, {"type": "url",
// "url": ...} for one the API fetches.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// imageBlocks returns a user message or a tool result with images as
// content blocks: its text blocks and image blocks, in order
// (provider.Message.Blocks); empty text blocks, which the API refuses,
// are left out. The API has no detail hint: Detail is not sent.
func imageBlocks(m *provider.Message) []block {
	out := make([]block, 0, len(m.Parts))
	for _, p := range m.Blocks() {
		switch {
		case p.Kind == provider.PartText && p.Text != "":
			out = append(out, block{Type: "text", Text: p.Text})
		case p.Kind == provider.PartImage:
			img := &m.Images[p.Index]
			src := &imageSource{Type: "url", URL: img.URL}
			if img.URL == "" {
				src = &imageSource{Type: "base64", MediaType: img.MediaType, Data: base64.StdEncoding.EncodeToString(img.Data)}
			}
			out = append(out, block{Type: "image", Source: src})
		}
	}
	return out
}

// toolResult returns a tool result as a tool_result block: its content
// the result's text, or, with images, a list of its text and image blocks
// in order, which the API takes as a tool_result's content (a screenshot
// a computer-use tool returns); no content for an empty result.
func toolResult(m *provider.Message) block {
	b := block{Type: "tool_result", ToolUseID: toolUseID(m.ToolCallID), IsError: m.ToolError}
	switch {
	case len(m.Images) > 0:
		b.Content = imageBlocks(m)
	case m.Content != "":
		b.Content = m.Content
	}
	return b
}

// toolUseID returns a tool call's id as Anthropic takes it: an id of
// letters, digits, "_" and "-" (Anthropic's pattern for tool_use.id and
// tool_result.tool_use_id) as it is; any other with each run of other
// characters made one "_" (none after a "_"), then "_" and 8 hex digits of
// its SHA-256, so that two ids that differ only there stay two. Another
// provider's ids may hold characters Anthropic refuses (Kimi K2's
// "functions.get_weather:0" through an OpenAI-compatible server), and a
// route that falls back to Anthropic sends them; the same id maps to the
// same one in a tool_use block and in the tool_result that answers it, and
// the ids of the reply are Anthropic's own, so the mapping is never seen.
func toolUseID(id string) string { return provider.FitCallID(id, 0, idByte) }

// idByte reports whether Anthropic's tool_use id pattern,
// ^[a-zA-Z0-9_-]+$, allows c.
func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// MarshalJSON implements json.Marshaler: a raw block as it is, any other
// by its fields.
func (b block) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return b.raw, nil
	}
	type fields block
	return json.Marshal(fields(b))
}

// owned are the body fields the adapter sets from the request itself,
// which provider_options may not set.
var owned = httpx.Owned{
	"model": "model", "messages": "messages", "system": "messages (ROLE_SYSTEM)", "stream": "",
	"tools": "tools", "tool_choice": "tool_choice", "output_config.format": "response_format",
}

// assistantBlocks returns an assistant turn (messages[i]) as content
// blocks, in the order of its blocks (provider.Message.Blocks): its
// reasoning as the thinking and redacted_thinking blocks it came in,
// unchanged (blocks of other providers' formats are left out: their
// signatures would not verify), its text, its tool calls as tool_use
// blocks, and its provider tool blocks as they came (those of other
// formats left out). A tool call whose arguments are not a JSON object,
// or a provider tool block whose input, result or extra fields are not
// JSON, is a *provider.FieldError.
func assistantBlocks(i int, m *provider.Message) ([]block, error) {
	var out []block
	for _, p := range m.Blocks() {
		switch p.Kind {
		case provider.PartText:
			if p.Text != "" {
				out = append(out, block{Type: "text", Text: p.Text})
			}
		case provider.PartReasoning:
			r := &m.Reasoning[p.Index]
			switch {
			case r.Format != provider.FormatAnthropic:
			case r.Redacted != "":
				out = append(out, block{Type: "redacted_thinking", Data: r.Redacted})
			default:
				out = append(out, block{Type: "thinking", Thinking: &r.Text, Signature: &r.Signature})
			}
		case provider.PartToolCall:
			c := &m.ToolCalls[p.Index]
			input, err := httpx.JSONObject(c.Arguments)
			if err != nil {
				return nil, &provider.FieldError{Field: fmt.Sprintf("messages[%d].tool_calls[%d].arguments", i, p.Index), Description: err.Error() + " for the anthropic provider"}
			}
			out = append(out, block{Type: "tool_use", ID: toolUseID(c.ID), Name: c.Name, Input: input})
		case provider.PartProviderTool:
			t := &m.ProviderTools[p.Index]
			if t.Format != provider.FormatAnthropic {
				continue
			}
			if err := checkProviderTool(t); err != "" {
				return nil, &provider.FieldError{Field: fmt.Sprintf("messages[%d].provider_tools[%d].%s", i, p.Index, err), Description: "is not the JSON the provider sent: send the block back as final.message gave it"}
			}
			out = append(out, block{raw: providerToolBlock(t)})
		}
	}
	return out, nil
}

// checkProviderTool returns the field of t that cannot be sent back as
// raw JSON ("" when every one can): input and result must be one JSON
// value each (when set), extra a JSON object. The block's bytes go into
// the request as they are, so nothing else may get in.
func checkProviderTool(t *provider.ProviderTool) string {
	switch {
	case t.Input != "" && !json.Valid([]byte(t.Input)):
		return "input"
	case t.Result != "" && !json.Valid([]byte(t.Result)):
		return "result"
	case t.Extra != "" && (!json.Valid([]byte(t.Extra)) || !strings.HasPrefix(strings.TrimSpace(t.Extra), "{")):
		return "extra"
	}
	return ""
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// toolChoice is the Messages API's tool_choice. DisableParallelToolUse,
// at most one tool_use block per reply, is sent with types auto, any and
// tool, the ones that take it.
type toolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// maxTemperature is the highest temperature the Messages API takes (0 to
// 1; llmrelay's generation.temperature goes to 2, as OpenAI's does): it
// answers 400 to more, so such a request is refused before any attempt.
const maxTemperature = 1

// newRequest maps a provider-neutral request to a streamed Messages API
// request: system messages are joined into the top-level system prompt,
// a user message with images is its text and image blocks in order
// (imageBlocks), an assistant turn is its blocks in the order they came (assistantBlocks:
// thinking sent back unchanged, as the API requires with tool use, text,
// tool_use, and the blocks of server tools as they came, as a paused turn
// needs), tool results become tool_result blocks of a user turn (toolResult:
// text, or text and image blocks), and consecutive turns of one role are merged, as the API expects (so a
// paused turn sent back after the reply before it continues that turn). A tool call whose
// arguments are not a JSON object is a *provider.FieldError, and so is a
// response format whose schema is not JSON. A schema Anthropic cannot
// enforce goes into the system prompt as an instruction instead.
func newRequest(req *provider.Request) (*messagesRequest, error) {
	if t := req.Generation.Temperature; t != nil && *t > maxTemperature {
		return nil, &provider.FieldError{Field: "generation.temperature",
			Description: "is " + strconv.FormatFloat(*t, 'g', -1, 32) + "; Anthropic takes 0 to 1"}
	}
	r := &messagesRequest{
		Model:         req.Model,
		MaxTokens:     maxTokens(req),
		Stream:        true,
		Temperature:   req.Generation.Temperature,
		TopP:          req.Generation.TopP,
		StopSequences: req.Generation.Stop,
	}
	var system []string
	for i, m := range req.Messages {
		role, blocks := "user", []block(nil)
		switch m.Role {
		case provider.RoleSystem:
			system = append(system, m.Content)
			continue
		case provider.RoleTool:
			blocks = []block{toolResult(&m)}
		case provider.RoleAssistant:
			role = "assistant"
			var err error
			if blocks, err = assistantBlocks(i, &m); err != nil {
				return nil, err
			}
		default:
			if len(m.Images) > 0 {
				blocks = imageBlocks(&m)
			} else if m.Content != "" {
				blocks = []block{{Type: "text", Text: m.Content}}
			}
		}
		if len(blocks) == 0 {
			continue // the API rejects empty turns and empty text blocks
		}
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
			continue
		}
		r.Messages = append(r.Messages, message{Role: role, Content: blocks})
	}
	if rf := req.ResponseFormat; rf != nil {
		l, err := schema.Lower(rf.Schema, dialect)
		switch {
		case errors.Is(err, schema.ErrNoNativeForm):
			// A schema Anthropic cannot take (a recursive one): ask for it
			// in the prompt; llmrelay validates the reply either way.
			system = append(system, schema.Instruction(rf.Schema))
		case err != nil:
			return nil, &provider.FieldError{Field: "response_format.json_schema", Description: err.Error()}
		default:
			r.OutputConfig = &outputConfig{Format: &outputFormat{Type: "json_schema", Schema: l.Schema}}
		}
	}
	r.System = strings.Join(system, "\n\n")
	if len(req.Tools) > 0 {
		r.Tools = make([]any, len(req.Tools))
		for i, t := range req.Tools {
			schema := t.Parameters
			if len(schema) == 0 {
				schema = emptyObjectSchema
			}
			r.Tools[i] = tool{Name: t.Name, Description: t.Description, InputSchema: schema}
		}
		r.ToolChoice = newToolChoice(req.ToolChoice)
	}
	return r, nil
}

// maxTokens returns the request's max_tokens: its max_output_tokens, else
// DefaultMaxTokens, or, when provider_options ask for extended thinking
// with a budget (thinking.budget_tokens) that leaves the default no room,
// the budget and DefaultMaxTokens for the answer: the API refuses a
// budget that is not less than max_tokens, and max_tokens is llmrelay's
// default here, not the caller's.
func maxTokens(req *provider.Request) int {
	if n := req.Generation.MaxOutputTokens; n != nil {
		return *n
	}
	thinking, _ := req.Options["thinking"].(map[string]any)
	if budget, _ := thinking["budget_tokens"].(float64); budget >= DefaultMaxTokens && budget <= math.MaxInt32-DefaultMaxTokens {
		return int(budget) + DefaultMaxTokens
	}
	return DefaultMaxTokens
}

// newToolChoice maps a tool choice; type none, which calls no tool, has no
// disable_parallel_tool_use.
func newToolChoice(c provider.ToolChoice) *toolChoice {
	switch c.Mode {
	case provider.ToolChoiceNone:
		return &toolChoice{Type: "none"}
	case provider.ToolChoiceRequired:
		return &toolChoice{Type: "any", DisableParallelToolUse: c.DisableParallel}
	case provider.ToolChoiceTool:
		return &toolChoice{Type: "tool", Name: c.Name, DisableParallelToolUse: c.DisableParallel}
	}
	return &toolChoice{Type: "auto", DisableParallelToolUse: c.DisableParallel}
}
