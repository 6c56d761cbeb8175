package gemini

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// generateRequest is the body of streamGenerateContent, with the fields
// llmrelay sets.
type generateRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []toolSet         `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is a part of a content: text (present even when empty, for a part
// that only carries a signature), a function call or a function response.
// ThoughtSignature goes back on the part it came on.
type part struct {
	Text             *string           `json:"text,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

// textPart returns a text part.
func textPart(text string) part { return part{Text: &text} }

// blob is an inlineData part's data: its MIME type and its bytes, base64.
type blob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

// userParts returns a user message (messages[i]) with images as parts:
// its text parts and inlineData parts, in order (provider.Message.Blocks);
// empty text parts are left out. An image at a URL is refused (inline).
func userParts(i int, m *provider.Message) ([]part, error) {
	parts := make([]part, 0, len(m.Parts))
	for j, b := range m.Blocks() {
		switch {
		case b.Kind == provider.PartText && b.Text != "":
			parts = append(parts, textPart(b.Text))
		case b.Kind == provider.PartImage:
			data, err := inline(i, j, &m.Images[b.Index])
			if err != nil {
				return nil, err
			}
			parts = append(parts, part{InlineData: data})
		}
	}
	return parts, nil
}

// toolImages returns a tool result's (messages[i]'s) images, in order, as
// the parts of its functionResponse: inlineData, which Gemini 3 models
// read as the function's output beside its response (the text, which
// keeps no place among the images). An image at a URL is refused, as in
// a user message (inline).
func toolImages(i int, m *provider.Message) ([]functionResponsePart, error) {
	if len(m.Images) == 0 {
		return nil, nil
	}
	parts := make([]functionResponsePart, 0, len(m.Images))
	for j, b := range m.Blocks() {
		if b.Kind != provider.PartImage {
			continue
		}
		data, err := inline(i, j, &m.Images[b.Index])
		if err != nil {
			return nil, err
		}
		parts = append(parts, functionResponsePart{InlineData: data})
	}
	return parts, nil
}

// inline returns an image, part j of messages[i], as inline data. An image
// the API would have to fetch from a URL is a *provider.FieldError naming
// it: generateContent's fileData takes files the Files API holds, not
// https URLs.
func inline(i, j int, img *provider.Image) (*blob, error) {
	if img.URL != "" {
		return nil, &provider.FieldError{Field: fmt.Sprintf("messages[%d].parts[%d].image.url", i, j),
			Description: "the gemini provider cannot fetch images from URLs: send the image inline (data, with its media_type)"}
	}
	return &blob{MIMEType: img.MediaType, Data: base64.StdEncoding.EncodeToString(img.Data)}, nil
}

// owned are the body fields the adapter sets from the request itself,
// which provider_options may not set (in either spelling the API accepts).
var owned = httpx.Owned{
	"contents": "messages", "systemInstruction": "messages (ROLE_SYSTEM)", "system_instruction": "messages (ROLE_SYSTEM)",
	"tools": "tools", "toolConfig": "tool_choice", "tool_config": "tool_choice",
	"generation_config":                   "generation (add to it as generationConfig)",
	"generationConfig.responseMimeType":   "response_format",
	"generationConfig.responseJsonSchema": "response_format",
	"generationConfig.responseSchema":     "response_format",
}

// modelParts returns an assistant turn (messages[i]) as "model" parts, in
// the order of its blocks (provider.Message.Blocks): its text parts and
// function calls (with their signatures; names records each call's name by
// its id, for the function responses after it), and the signatures of its
// Gemini reasoning, each back on a part as the API wants (the thought text
// itself is not sent back): a reasoning block's signature goes on the
// text part that follows it, the signatures no text part takes on empty
// text parts of their own, where the next function call or the turn's end
// comes. In the usual order (reasoning, text, calls) that puts the first
// signature on the text and the others on empty parts after it; in a
// reply's own order (Message.Parts) every signature goes back to the place
// it came from. A call whose arguments are not a JSON object is a
// *provider.FieldError.
func modelParts(i int, m *provider.Message, names map[string]string) ([]part, error) {
	var parts []part
	var sigs []string // signatures waiting for their part
	flush := func() {
		for _, s := range sigs {
			p := textPart("")
			p.ThoughtSignature = s
			parts = append(parts, p)
		}
		sigs = sigs[:0]
	}
	for _, b := range m.Blocks() {
		switch b.Kind {
		case provider.PartReasoning:
			if r := &m.Reasoning[b.Index]; r.Format == provider.FormatGemini && r.Signature != "" {
				sigs = append(sigs, r.Signature)
			}
		case provider.PartText:
			if b.Text == "" {
				continue
			}
			p := textPart(b.Text)
			if len(sigs) > 0 {
				p.ThoughtSignature, sigs = sigs[0], sigs[1:]
			}
			parts = append(parts, p)
			flush()
		case provider.PartToolCall:
			flush()
			c := &m.ToolCalls[b.Index]
			args, err := httpx.JSONObject(c.Arguments)
			if err != nil {
				return nil, &provider.FieldError{Field: fmt.Sprintf("messages[%d].tool_calls[%d].arguments", i, b.Index), Description: err.Error() + " for the gemini provider"}
			}
			names[c.ID] = c.Name
			parts = append(parts, part{FunctionCall: &functionCall{ID: c.ID, Name: c.Name, Args: args}, ThoughtSignature: c.Signature})
		}
	}
	flush()
	return parts, nil
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	// Parts are the result's images, inline (Gemini 3's multimodal
	// function responses).
	Parts []functionResponsePart `json:"parts,omitempty"`
}

// functionResponsePart is one image of a function response.
type functionResponsePart struct {
	InlineData *blob `json:"inlineData"`
}

type toolSet struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens *int     `json:"maxOutputTokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
	TopP            *float64 `json:"topP,omitempty"`
	StopSequences   []string `json:"stopSequences,omitempty"`
	// ResponseMIMEType and ResponseJSONSchema ask for structured output:
	// "application/json" and the schema in Gemini's subset (dialect).
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
}

// dialect is what Gemini's responseJsonSchema takes of JSON Schema: $id,
// $defs, $ref, $anchor, type, format, title, description, enum of strings
// and numbers, items, prefixItems, minItems, maxItems, minimum, maximum,
// anyOf, oneOf, properties, additionalProperties, required and
// propertyOrdering; const sent as a one-value enum; nothing but
// $-keywords beside a $ref (Gemini's rule). No recursion, no dynamic
// references.
var dialect = &schema.Dialect{
	Name: "Gemini",
	Keywords: []string{"$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description",
		"enum", "items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf",
		"properties", "additionalProperties", "required", "propertyOrdering"},
	Unsupported: []string{"$dynamicRef", "$dynamicAnchor", "$recursiveRef"},
	ConstAsEnum: true,
	RefAlone:    true,
}

// maxStop is the most stop sequences Gemini's generationConfig takes
// ("up to 5"); it answers 400 to more ("the number of stop_sequences must
// not exceed 5").
const maxStop = 5

// newRequest maps a provider-neutral request to a streamGenerateContent
// request: system messages are joined into systemInstruction, a user
// message with images is its text and inlineData parts in order
// (userParts: an image URL is refused), the assistant's turns are the "model" role (with their thought signatures
// where the API wants them back, see modelParts), tool results become
// functionResponse parts (named after the call they answer; their images,
// toolImages, in the response's parts; a failed result under "error",
// toolOutput), and
// consecutive turns of one role are merged. A tool call whose arguments are
// not a JSON object is a *provider.FieldError, and so is a response format
// whose schema is not JSON. A schema Gemini cannot enforce goes into the
// system instruction instead.
func newRequest(req *provider.Request) (*generateRequest, error) {
	if n := len(req.Generation.Stop); n > maxStop {
		return nil, provider.TooManyStops(n, maxStop, "Gemini")
	}
	r := &generateRequest{}
	var system []string
	names := map[string]string{} // tool call id -> tool name, latest first
	for i, m := range req.Messages {
		role, parts := "user", []part(nil)
		switch m.Role {
		case provider.RoleSystem:
			system = append(system, m.Content)
			continue
		case provider.RoleTool:
			name := names[m.ToolCallID]
			if name == "" {
				name = m.ToolCallID
			}
			images, err := toolImages(i, &m)
			if err != nil {
				return nil, err
			}
			parts = []part{{FunctionResponse: &functionResponse{ID: m.ToolCallID, Name: name, Response: toolOutput(m.Content, m.ToolError), Parts: images}}}
		case provider.RoleAssistant:
			role = "model"
			var err error
			if parts, err = modelParts(i, &m, names); err != nil {
				return nil, err
			}
		default:
			if len(m.Images) > 0 {
				var err error
				if parts, err = userParts(i, &m); err != nil {
					return nil, err
				}
			} else if m.Content != "" {
				parts = []part{textPart(m.Content)}
			}
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(r.Contents); n > 0 && r.Contents[n-1].Role == role {
			r.Contents[n-1].Parts = append(r.Contents[n-1].Parts, parts...)
			continue
		}
		r.Contents = append(r.Contents, content{Role: role, Parts: parts})
	}
	var format json.RawMessage
	if rf := req.ResponseFormat; rf != nil {
		l, err := schema.Lower(rf.Schema, dialect)
		switch {
		case errors.Is(err, schema.ErrNoNativeForm):
			// A schema Gemini cannot take (a recursive one): ask for it in
			// the prompt; llmrelay validates the reply either way.
			system = append(system, schema.Instruction(rf.Schema))
		case err != nil:
			return nil, &provider.FieldError{Field: "response_format.json_schema", Description: err.Error()}
		default:
			format = l.Schema
		}
	}
	if len(system) > 0 {
		r.SystemInstruction = &content{Parts: []part{textPart(strings.Join(system, "\n\n"))}}
	}
	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, len(req.Tools))
		for i, t := range req.Tools {
			decls[i] = functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: t.Parameters}
		}
		r.Tools = []toolSet{{FunctionDeclarations: decls}}
		r.ToolConfig = newToolConfig(req.ToolChoice)
	}
	g := req.Generation
	if g.MaxOutputTokens != nil || g.Temperature != nil || g.TopP != nil || len(g.Stop) > 0 || format != nil {
		r.GenerationConfig = &generationConfig{MaxOutputTokens: g.MaxOutputTokens, Temperature: g.Temperature, TopP: g.TopP, StopSequences: g.Stop}
	}
	if format != nil {
		r.GenerationConfig.ResponseMIMEType = "application/json"
		r.GenerationConfig.ResponseJSONSchema = format
	}
	return r, nil
}

// toolOutput returns a tool result as the object functionResponse carries,
// by the API's convention: the function's output under "output", a failure
// under "error" (the tool's message, or its JSON object), and a result that
// is a JSON object as it is, which the API reads whole as the output.
func toolOutput(result string, failed bool) json.RawMessage {
	s := strings.TrimSpace(result)
	object := strings.HasPrefix(s, "{") && json.Valid([]byte(s))
	if object && !failed {
		return json.RawMessage(s)
	}
	var value any = result
	if object {
		value = json.RawMessage(s)
	}
	key := "output"
	if failed {
		key = "error"
	}
	b, _ := json.Marshal(map[string]any{key: value})
	return b
}

func newToolConfig(c provider.ToolChoice) *toolConfig {
	cfg := functionCallingConfig{Mode: "AUTO"}
	switch c.Mode {
	case provider.ToolChoiceNone:
		cfg.Mode = "NONE"
	case provider.ToolChoiceRequired:
		cfg.Mode = "ANY"
	case provider.ToolChoiceTool:
		cfg.Mode, cfg.AllowedFunctionNames = "ANY", []string{c.Name}
	}
	return &toolConfig{FunctionCallingConfig: cfg}
}
