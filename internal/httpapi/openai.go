package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// This file is OpenAI's Chat Completions API (POST /v1/chat/completions,
// GET /v1/models): a request in that format becomes the engine's
// GenerateRequest, the call's events become chat.completion.chunk events
// or one chat.completion, and errors become OpenAI's error body.

// openAI is the OpenAI Chat Completions wire format.
type openAI struct{}

func (openAI) name() string { return InterfaceOpenAI }

// openAIOptions are the Chat Completions parameters llmrelay passes to the
// provider as provider_options under their own names (the operator's
// provider_options policy applies to them as to any), each unless it has
// its default value, which is the same as not sending it.
var openAIOptions = map[string]string{
	"reasoning_effort":       "",
	"seed":                   "",
	"frequency_penalty":      "0",
	"presence_penalty":       "0",
	"logit_bias":             "{}",
	"service_tier":           `"auto"`,
	"store":                  "false",
	"verbosity":              "",
	"prompt_cache_key":       "",
	"prompt_cache_options":   "",
	"prompt_cache_retention": "",
	"safety_identifier":      "",
	"moderation":             "",
}

// openAIRefused are Chat Completions parameters whose answer llmrelay's
// reply cannot carry, refused unless they have their default value.
var openAIRefused = map[string]string{
	"logprobs":           "false",
	"top_logprobs":       "0",
	"audio":              "",
	"prediction":         "",
	"web_search_options": "",
	"functions":          "",
	"function_call":      "",
}

// decode translates a Chat Completions request.
func (openAI) decode(body []byte, _ http.Header) (*translated, *failure) {
	fields, err := objectFields(body)
	if err != nil {
		f := requestError("", "the request body "+err.Error())
		return nil, &f
	}
	t := &translated{req: &llmrelayv1.GenerateRequest{}, own: map[string]bool{}, format: openAI{}}
	if f := t.decodeFields(fields, t.chatField); f != nil {
		return nil, f
	}
	if t.maxTokensField == "" {
		t.maxTokensField = "max_completion_tokens"
	}
	return t, nil
}

// chatField translates one top-level member of the request.
func (t *translated) chatField(key string, raw json.RawMessage) error {
	req := t.req
	switch key {
	case "messages":
		return t.chatMessages(raw)
	case "stream_options":
		var so struct {
			IncludeUsage       bool `json:"include_usage"`
			IncludeObfuscation bool `json:"include_obfuscation"`
		}
		if err := decodeStrict(raw, &so); err != nil {
			return err
		}
		t.includeUsage = so.IncludeUsage
	case "tools":
		return chatTools(req, raw)
	case "tool_choice":
		return chatToolChoice(req, raw)
	case "response_format":
		return chatResponseFormat(req, raw)
	case "max_completion_tokens", "max_tokens":
		if t.maxTokensField != "" {
			return fmt.Errorf("set only one of max_completion_tokens and max_tokens")
		}
		t.maxTokensField = key
		_, err := t.sharedField(key, raw)
		return err
	case "stop":
		stop, err := stringOrStrings(raw)
		if err != nil {
			return err
		}
		generation(req).Stop = stop
	case "n":
		if _, ok := integerIn(raw, 1, 1); !ok {
			return errors.New("llmrelay returns one choice: n must be 1")
		}
	case "modalities":
		var m []string
		if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 || m[0] != "text" {
			return errors.New(`llmrelay replies with text only: modalities must be ["text"]`)
		}
	default:
		if handled, err := t.openAIField(key, raw); handled {
			return err
		}
		if handled, err := t.sharedField(key, raw); handled {
			return err
		}
		return t.otherField(key, raw, openAIOptions, openAIRefused, "unrecognized request argument")
	}
	return nil
}

// openAIField translates the members OpenAI's two APIs, Chat Completions
// and Responses, write alike.
func (t *translated) openAIField(key string, raw json.RawMessage) (handled bool, err error) {
	switch key {
	case "parallel_tool_calls":
		// false: at most one tool call per reply; true is the default.
		var parallel bool
		if err := json.Unmarshal(raw, &parallel); err != nil {
			return true, errors.New("must be true or false")
		}
		if !parallel {
			toolChoice(t.req).DisableParallelToolCalls = true
		}
	case "metadata":
		var md map[string]string
		if err := json.Unmarshal(raw, &md); err != nil {
			return true, errors.New("must be an object of strings")
		}
		for k, v := range md {
			labels(t.req)[k] = v
		}
	case "user":
		// An end user's id: a label of the call's log line.
		var u string
		if err := json.Unmarshal(raw, &u); err != nil {
			return true, errors.New("must be a string")
		}
		labels(t.req)["user"] = u
		t.userMember = true
	default:
		return false, nil
	}
	return true, nil
}

// chatMessage is one message of a Chat Completions request.
type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name"` // accepted, not forwarded: llmrelay's messages have no author name
	ToolCalls        []chatToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	Refusal          *string         `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"`
	Audio            json.RawMessage `json:"audio"`
	FunctionCall     json.RawMessage `json:"function_call"`
	// Members of a reply's message that an application sends back with
	// it, accepted and not forwarded: the SDKs' parse and stream helpers
	// add parsed (and parsed_arguments to its tool calls); OpenAI's
	// replies carry annotations.
	Parsed      json.RawMessage `json:"parsed"`
	Annotations json.RawMessage `json:"annotations"`
}

// chatToolCall is a tool call, in an assistant message or a reply.
type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatFunctionCall `json:"function"`
	// ExtraContent carries the call's signature where Google's
	// OpenAI-compatible API does, for a Gemini call: Chat Completions has
	// no member for it, and Gemini 3 refuses a turn whose function call
	// comes back without it.
	ExtraContent *chatExtraContent `json:"extra_content,omitempty"`
}

// chatExtraContent is a tool call's extra_content as Google's
// OpenAI-compatible API writes it: {"google": {"thought_signature": ...}}.
type chatExtraContent struct {
	Google *chatGoogleContent `json:"google,omitempty"`
}

type chatGoogleContent struct {
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

// extraContentOf returns the extra_content that carries a call's
// signature, nil when it has none. ToolCall.signature is only ever a
// Gemini thoughtSignature (the gemini adapter alone makes one, and alone
// sends one back), so Google's member is its place whatever the model.
func extraContentOf(tc *llmrelayv1.ToolCall) *chatExtraContent {
	if tc.GetSignature() == "" {
		return nil
	}
	return &chatExtraContent{Google: &chatGoogleContent{ThoughtSignature: tc.GetSignature()}}
}

// signature returns the call signature e carries, empty when none.
func (e *chatExtraContent) signature() string {
	if e == nil || e.Google == nil {
		return ""
	}
	return e.Google.ThoughtSignature
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// ParsedArguments: the SDKs' helpers add it to a reply's strict tool
	// calls; accepted in a request, not forwarded, never in a reply.
	ParsedArguments json.RawMessage `json:"parsed_arguments,omitempty"`
}

var chatRoles = map[string]llmrelayv1.Role{
	"system":    llmrelayv1.Role_ROLE_SYSTEM,
	"developer": llmrelayv1.Role_ROLE_SYSTEM,
	"user":      llmrelayv1.Role_ROLE_USER,
	"assistant": llmrelayv1.Role_ROLE_ASSISTANT,
	"tool":      llmrelayv1.Role_ROLE_TOOL,
}

func (t *translated) chatMessages(raw json.RawMessage) error {
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return errors.New("must be a list of messages")
	}
	t.req.Messages = make([]*llmrelayv1.Message, 0, len(msgs))
	for i, mraw := range msgs {
		m, err := chatMessageOf(mraw)
		if err != nil {
			return inParam("["+strconv.Itoa(i)+"]", err)
		}
		t.req.Messages = append(t.req.Messages, m)
	}
	return nil
}

func chatMessageOf(raw json.RawMessage) (*llmrelayv1.Message, error) {
	var cm chatMessage
	if err := decodeStrict(raw, &cm); err != nil {
		return nil, err
	}
	role, ok := chatRoles[cm.Role]
	if !ok {
		return nil, &paramError{".role", "must be system, developer, user, assistant or tool"}
	}
	switch {
	case !isNull(cm.Audio):
		return nil, &paramError{".audio", "not supported by llmrelay"}
	case !isNull(cm.FunctionCall):
		return nil, &paramError{".function_call", "not supported by llmrelay: use tool_calls"}
	}
	m := &llmrelayv1.Message{Role: role, ToolCallId: cm.ToolCallID}
	content, refusal, err := chatParts.content(cm.Content, role)
	if err != nil {
		return nil, inParam(".content", err)
	}
	content.fill(m)
	if role != llmrelayv1.Role_ROLE_ASSISTANT {
		if len(cm.ToolCalls) > 0 || cm.Refusal != nil || cm.ReasoningContent != "" {
			return nil, &paramError{"", "only assistant messages carry tool_calls, refusal or reasoning_content"}
		}
		return m, nil
	}
	if cm.Refusal != nil {
		m.Refusal = *cm.Refusal
	}
	if refusal != "" {
		if m.Refusal != "" {
			m.Refusal += "\n"
		}
		m.Refusal += refusal
	}
	if cm.ReasoningContent != "" {
		m.Reasoning = []*llmrelayv1.Reasoning{{Text: cm.ReasoningContent, Format: provider.FormatReasoningContent}}
	}
	for j, tc := range cm.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return nil, &paramError{".tool_calls[" + strconv.Itoa(j) + "].type", "must be function"}
		}
		m.ToolCalls = append(m.ToolCalls, &llmrelayv1.ToolCall{Id: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
			Signature: tc.ExtraContent.signature()})
	}
	return m, nil
}

// openAIParts is how one of OpenAI's two APIs, Chat Completions and
// Responses, writes a message's content: alike but for the names of its
// parts' types and where an image part holds its URL and detail.
type openAIParts struct {
	text     []string // the text parts' types
	image    string   // the image part's type
	urlAt    string   // where an image part holds its URL: ".image_url.url"
	detailAt string   // and its detail
	// toolImages: a tool result may carry image parts (the Responses
	// API's function_call_output; Chat Completions' tool messages take
	// text only).
	toolImages bool
	// decode reads one content part; false: it is not a part object.
	decode func(json.RawMessage) (openAIPart, error)
}

// openAIPart is one content part as either API writes it.
type openAIPart struct {
	typ, text, refusal string
	// An image part's URL and detail; its file_id (the Responses API's
	// image from its Files API).
	imageURL, detail, fileID string
}

// chatParts are Chat Completions' content parts: text, image_url parts
// ({"url", "detail"}) and refusal.
var chatParts = openAIParts{text: []string{"text"}, image: "image_url", urlAt: ".image_url.url", detailAt: ".image_url.detail", decode: chatPart}

func chatPart(raw json.RawMessage) (openAIPart, error) {
	var p struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Refusal  string `json:"refusal"`
		ImageURL *struct {
			URL    string `json:"url"`
			Detail string `json:"detail"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return openAIPart{}, err
	}
	part := openAIPart{typ: p.Type, text: p.Text, refusal: p.Refusal}
	if p.ImageURL != nil {
		part.imageURL, part.detail = p.ImageURL.URL, p.ImageURL.Detail
	}
	return part, nil
}

// content reads a message's content: a string, or a list of text parts,
// joined by newlines (llmrelay's messages carry text), in a user's message
// (and, where the API has them, a tool result) image parts among them (an https URL, or the image inline as a data:
// URL), kept in order (userContent), and, in an assistant's message,
// refusal parts, joined alike into its refusal. Other parts (audio,
// files) are refused, naming the part's type, and so is an image by
// file_id: llmrelay has no Files API.
func (f openAIParts) content(raw json.RawMessage, role llmrelayv1.Role) (content userContent, refusal string, _ error) {
	if isNull(raw) {
		return content, "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		content.text(s)
		return content, "", nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return content, "", errors.New("must be a string or a list of content parts")
	}
	var refused []string
	for i, praw := range parts {
		at := "[" + strconv.Itoa(i) + "]"
		p, err := f.decode(praw)
		if err != nil {
			// A member of the wrong type (the other API's image_url: an
			// object in Chat Completions, a string in Responses) is named.
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				return content, "", &paramError{at + "." + te.Field, "must not be a JSON " + te.Value}
			}
			return content, "", &paramError{at, "must be a content part object"}
		}
		switch {
		case slices.Contains(f.text, p.typ):
			content.text(p.text)
		case p.typ == "refusal" && role == llmrelayv1.Role_ROLE_ASSISTANT:
			refused = append(refused, p.refusal)
		case p.typ == "refusal":
			return content, "", &paramError{at + ".type", "only assistant messages carry refusal parts"}
		case p.typ == f.image && (role == llmrelayv1.Role_ROLE_USER || role == llmrelayv1.Role_ROLE_TOOL && f.toolImages):
			if p.fileID != "" {
				return content, "", &paramError{at + ".file_id", "llmrelay has no Files API: send the image in image_url, an https URL or a data: URL"}
			}
			img, err := openAIImage(p.imageURL, p.detail, f.urlAt, f.detailAt)
			if err != nil {
				return content, "", inParam(at, err)
			}
			content.image(img)
		case p.typ == f.image:
			return content, "", &paramError{at + ".type", "only " + f.imagesIn() + " carry " + f.image + " parts"}
		default:
			return content, "", &paramError{at + ".type", strconv.Quote(p.typ) + " parts are not supported by llmrelay: messages carry text, and " + f.imagesIn() + " images (" + f.image + ")"}
		}
	}
	return content, strings.Join(refused, "\n"), nil
}

// imagesIn says which messages carry images in this API.
func (f openAIParts) imagesIn() string {
	if f.toolImages {
		return "user messages and function call outputs"
	}
	return "user messages"
}

// param names, as this API writes it, the place in a message's content
// of the engine's field path rest into the message's parts: a user
// message's parts are its content parts, one for one
// (".parts[1].image.url" is ".content[1]" and the image's URL member).
// false: rest is not in the parts.
func (f openAIParts) param(rest string) (string, bool) {
	p, ok := strings.CutPrefix(rest, ".parts")
	if !ok {
		return "", false
	}
	i := strings.Index(p, "]") + 1
	path := ".content" + p[:i]
	switch tail := p[i:]; {
	case tail == ".image.detail":
		return path + f.detailAt, true
	case strings.HasPrefix(tail, ".image"):
		return path + f.urlAt, true
	default:
		return path + tail, true
	}
}

func chatTools(req *llmrelayv1.GenerateRequest, raw json.RawMessage) error {
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"` // accepted; llmrelay checks tool arguments no further
		} `json:"function"`
	}
	if err := decodeStrict(raw, &tools); err != nil {
		return err
	}
	for i, tl := range tools {
		at := "[" + strconv.Itoa(i) + "]"
		if tl.Type != "function" {
			return &paramError{at + ".type", "must be function"}
		}
		tool := &llmrelayv1.Tool{Name: tl.Function.Name, Description: tl.Function.Description}
		if !isNull(tl.Function.Parameters) {
			p, err := structOf(tl.Function.Parameters)
			if err != nil {
				return inParam(at+".function.parameters", err)
			}
			tool.Parameters = p
		}
		req.Tools = append(req.Tools, tool)
	}
	return nil
}

var chatToolModes = map[string]llmrelayv1.ToolChoiceMode{
	"auto":     llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO,
	"none":     llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE,
	"required": llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED,
}

func chatToolChoice(req *llmrelayv1.GenerateRequest, raw json.RawMessage) error {
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		m, ok := chatToolModes[mode]
		if !ok {
			return errors.New(`must be "auto", "none", "required" or a function`)
		}
		toolChoice(req).Mode = m
		return nil
	}
	var tc struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := decodeStrict(raw, &tc); err != nil || tc.Type != "function" {
		return errors.New(`must be "auto", "none", "required" or {"type": "function", "function": {"name": ...}}`)
	}
	c := toolChoice(req)
	c.Mode, c.Name = llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, tc.Function.Name
	return nil
}

// chatResponseFormat translates response_format: json_schema is
// llmrelay's structured output (validated locally, re-asked); json_object
// is structured output with the schema {"type": "object"}.
func chatResponseFormat(req *llmrelayv1.GenerateRequest, raw json.RawMessage) error {
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Strict      *bool           `json:"strict"` // llmrelay always validates
		} `json:"json_schema"`
	}
	if err := decodeStrict(raw, &rf); err != nil {
		return err
	}
	switch rf.Type {
	case "text":
		return nil
	case "json_object":
		req.ResponseFormat = &llmrelayv1.ResponseFormat{JsonSchema: &structpb.Struct{Fields: map[string]*structpb.Value{
			"type": structpb.NewStringValue("object"),
		}}}
		return nil
	case "json_schema":
	default:
		return &paramError{".type", "must be text, json_object or json_schema"}
	}
	if rf.JSONSchema == nil {
		return &paramError{".json_schema", "required with type json_schema"}
	}
	out := &llmrelayv1.ResponseFormat{Name: rf.JSONSchema.Name}
	if !isNull(rf.JSONSchema.Schema) {
		s, err := structOf(rf.JSONSchema.Schema)
		if err != nil {
			return inParam(".json_schema.schema", err)
		}
		out.JsonSchema = s
	}
	req.ResponseFormat = out
	return nil
}

// openAIParam names a field of the engine's request as the client wrote
// it in a Chat Completions request.
func (t *translated) openAIParam(field string) string {
	head, idx, rest := splitField(field)
	switch head {
	case "generation":
		switch {
		case rest == ".max_output_tokens":
			return t.maxTokensField
		case strings.HasPrefix(rest, ".stop"):
			return "stop"
		}
		return strings.TrimPrefix(rest, ".")
	case "messages":
		if part, ok := chatParts.param(rest); ok {
			return head + idx + part
		}
		rest = strings.NewReplacer(".arguments", ".function.arguments", ".name", ".function.name").Replace(rest)
		if strings.HasPrefix(rest, ".reasoning") {
			rest = ".reasoning_content"
		}
		return head + idx + rest
	case "tools":
		if rest != "" {
			rest = ".function" + rest
		}
		return head + idx + rest
	case "tool_choice":
		switch rest {
		case ".name":
			return "tool_choice.function.name"
		case ".disable_parallel_tool_calls":
			return "parallel_tool_calls"
		}
		return head
	case "response_format":
		if rest == ".name" {
			return "response_format.json_schema.name"
		}
		return "response_format.json_schema.schema"
	}
	return t.commonParam(field)
}

// The reply.

// chatUsage is Chat Completions' usage.
type chatUsage struct {
	PromptTokens        uint64 `json:"prompt_tokens"`
	CompletionTokens    uint64 `json:"completion_tokens"`
	TotalTokens         uint64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens uint64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens uint64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func chatUsageOf(u *llmrelayv1.Usage) chatUsage {
	cu := chatUsage{
		PromptTokens:     u.GetInputTokens(),
		CompletionTokens: u.GetOutputTokens(),
		TotalTokens:      u.GetInputTokens() + u.GetOutputTokens(),
	}
	cu.PromptTokensDetails.CachedTokens = u.GetCachedInputTokens()
	cu.CompletionTokensDetails.ReasoningTokens = u.GetReasoningTokens()
	return cu
}

var chatFinishReasons = map[llmrelayv1.FinishReason]string{
	llmrelayv1.FinishReason_FINISH_REASON_STOP:           "stop",
	llmrelayv1.FinishReason_FINISH_REASON_LENGTH:         "length",
	llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS:     "tool_calls",
	llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER: "content_filter",
	llmrelayv1.FinishReason_FINISH_REASON_REFUSAL:        "stop", // the refusal is in the message's refusal
	// The call reached max_tool_turns: the answer is unfinished.
	llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS: "length",
}

func chatFinishReason(r llmrelayv1.FinishReason) string {
	if s, ok := chatFinishReasons[r]; ok {
		return s
	}
	return "stop"
}

// reply renders a Final as one chat.completion.
func (openAI) reply(r *replyInfo, f *llmrelayv1.Final) ([]byte, error) {
	m := f.GetMessage()
	type replyMessage struct {
		Role             string         `json:"role"`
		Content          *string        `json:"content"`
		Refusal          *string        `json:"refusal"`
		ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
		ReasoningContent string         `json:"reasoning_content,omitempty"`
	}
	msg := replyMessage{Role: "assistant"}
	if c := m.GetContent(); c != "" || len(m.GetToolCalls()) == 0 {
		msg.Content = &c
	}
	if rf := m.GetRefusal(); rf != "" {
		msg.Refusal = &rf
	}
	for _, tc := range m.GetToolCalls() {
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{ID: tc.GetId(), Type: "function",
			Function: chatFunctionCall{Name: tc.GetName(), Arguments: tc.GetArguments()}, ExtraContent: extraContentOf(tc)})
	}
	for _, rs := range m.GetReasoning() {
		msg.ReasoningContent += rs.GetText()
	}
	usage := chatUsageOf(f.GetUsage())
	return json.Marshal(struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Index        int          `json:"index"`
			Message      replyMessage `json:"message"`
			Logprobs     *struct{}    `json:"logprobs"`
			FinishReason string       `json:"finish_reason"`
		} `json:"choices"`
		Usage chatUsage `json:"usage"`
	}{
		ID: "chatcmpl-" + r.requestID, Object: "chat.completion", Created: r.created, Model: r.model,
		Choices: []struct {
			Index        int          `json:"index"`
			Message      replyMessage `json:"message"`
			Logprobs     *struct{}    `json:"logprobs"`
			FinishReason string       `json:"finish_reason"`
		}{{Message: msg, FinishReason: chatFinishReason(f.GetFinishReason())}},
		Usage: usage,
	})
}

// chatStream writes a reply as chat.completion.chunk events.
type chatStream struct {
	r *replyInfo
	// prefix opens every chunk: its id, created, model, up to its choices.
	prefix []byte
	// roleSent: the stream's first delta carried the role.
	roleSent bool
}

func (openAI) stream(r *replyInfo) streamEncoder {
	p := append([]byte(nil), `data: {"id":"chatcmpl-`...)
	p = append(p, r.requestID...)
	p = append(p, `","object":"chat.completion.chunk","created":`...)
	p = strconv.AppendInt(p, r.created, 10)
	p = append(p, `,"model":`...)
	p = appendString(p, r.model)
	p = append(p, `,"choices":[`...)
	return &chatStream{r: r, prefix: p}
}

// open starts a chunk whose choices hold one choice, up to its delta's
// first member.
func (s *chatStream) open(b []byte) []byte {
	b = append(b, s.prefix...)
	b = append(b, `{"index":0,"delta":{`...)
	if !s.roleSent {
		s.roleSent = true
		b = append(b, `"role":"assistant",`...)
	}
	return b
}

// close ends a chunk opened by open: the delta, the choice, and the
// llmrelay extension with the attempt when the client opted in.
func (s *chatStream) close(b []byte, attempt uint32) []byte {
	b = append(b, `},"logprobs":null,"finish_reason":null}]`...)
	b = s.extension(b, attempt)
	return append(b, "}\n\n"...)
}

func (s *chatStream) extension(b []byte, attempt uint32) []byte {
	if !s.r.extension {
		return b
	}
	b = append(b, `,"llmrelay":{"attempt":`...)
	b = appendUint(b, uint64(attempt))
	return append(b, '}')
}

// start writes nothing: a chunk's usage is the last chunk's alone.
func (s *chatStream) start(b []byte, _ *llmrelayv1.Usage) []byte { return b }

func (s *chatStream) delta(b []byte, d *llmrelayv1.Delta, attempt uint32) []byte {
	switch {
	case d.GetText() != "":
		b = s.open(b)
		b = appendKeyString(b, "content", d.GetText())
	case d.GetToolCall() != nil:
		tc := d.GetToolCall()
		b = s.open(b)
		b = append(b, `"tool_calls":[{"index":`...)
		b = appendUint(b, uint64(tc.GetIndex()))
		if tc.GetId() != "" {
			b = append(b, ',')
			b = appendKeyString(b, "id", tc.GetId())
			b = append(b, `,"type":"function"`...)
		}
		b = append(b, `,"function":{`...)
		if tc.GetName() != "" {
			b = appendKeyString(b, "name", tc.GetName())
			b = append(b, ',')
		}
		b = appendKeyString(b, "arguments", tc.GetArgumentsDelta())
		b = append(b, '}')
		if sig := tc.GetSignature(); sig != "" {
			// As Google's OpenAI-compatible API streams it: in the
			// call's first chunk, where Gemini's whole call comes.
			b = append(b, `,"extra_content":{"google":{`...)
			b = appendKeyString(b, "thought_signature", sig)
			b = append(b, "}}"...)
		}
		b = append(b, "}]"...)
	case d.GetReasoning().GetText() != "":
		b = s.open(b)
		b = appendKeyString(b, "reasoning_content", d.GetReasoning().GetText())
	case d.GetRefusal() != "":
		b = s.open(b)
		b = appendKeyString(b, "refusal", d.GetRefusal())
	default:
		// A reasoning signature or redacted block: Chat Completions has
		// no place for it.
		return b
	}
	return s.close(b, attempt)
}

// restart tells a client that opted in that the attempt it was shown
// failed and the next one starts over: a chunk without choices whose
// llmrelay extension says so.
func (s *chatStream) restart(b []byte, w *llmrelayv1.WillRetry, attempt uint32) []byte {
	b = append(b, s.prefix...)
	b = append(b, ']')
	b = append(b, `,"llmrelay":{"attempt":`...)
	b = appendUint(b, uint64(attempt))
	b = appendRestart(b, w)
	return append(b, "}}\n\n"...)
}

func (s *chatStream) ping(b []byte) []byte { return append(b, ": ping\n\n"...) }

// turn writes nothing: a message's content is one string in this format.
func (s *chatStream) turn(b []byte) []byte { return b }

// final ends the stream: the chunk with the finish reason, the usage
// chunk when the client asked for it, then [DONE].
func (s *chatStream) final(b []byte, f *llmrelayv1.Final) ([]byte, error) {
	b = append(b, s.prefix...)
	b = append(b, `{"index":0,"delta":{`...)
	if !s.roleSent {
		s.roleSent = true
		b = append(b, `"role":"assistant"`...)
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = appendString(b, chatFinishReason(f.GetFinishReason()))
	b = append(b, "}]"...)
	if s.r.extension {
		b = appendFinalExtension(b, f)
	}
	b = append(b, "}\n\n"...)
	if s.r.includeUsage {
		u, err := json.Marshal(chatUsageOf(f.GetUsage()))
		if err != nil {
			return b, err
		}
		b = append(b, s.prefix...)
		b = append(b, `],"usage":`...)
		b = append(b, u...)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...), nil
}

// fail ends the stream with the error, as OpenAI does: an event whose
// only member is error, which the SDKs raise.
func (s *chatStream) fail(b []byte, f failure) []byte {
	b = append(b, "data: "...)
	body, _ := openAI{}.errorBody(f, s.r.requestID)
	b = append(b, body...)
	return append(b, "\n\n"...)
}

// openAIErrorTypes are the error types by HTTP status.
var openAIErrorTypes = map[int]string{
	http.StatusBadRequest:            "invalid_request_error",
	http.StatusUnauthorized:          "authentication_error",
	http.StatusForbidden:             "permission_error",
	http.StatusNotFound:              "not_found_error",
	http.StatusMethodNotAllowed:      "invalid_request_error",
	http.StatusConflict:              "conflict_error",
	http.StatusRequestEntityTooLarge: "invalid_request_error",
	http.StatusUnsupportedMediaType:  "invalid_request_error",
	http.StatusTooManyRequests:       "rate_limit_error",
	http.StatusGatewayTimeout:        "timeout_error",
	StatusClientClosed:               "cancelled",
}

// openAIErrorCode returns a failure's OpenAI error type and code: the
// type by its status, the code OpenAI's own where llmrelay's reason means
// the same, llmrelay's reason in lower case otherwise.
func openAIErrorCode(f failure) (typ, code string) {
	typ, ok := openAIErrorTypes[f.status]
	if !ok {
		typ = "server_error"
	}
	code = f.code()
	switch {
	case f.class == provider.ClassQuotaExhausted:
		typ, code = "insufficient_quota", "insufficient_quota"
	case f.class == provider.ClassContextLength:
		code = "context_length_exceeded"
	case f.reason == engine.ReasonAPIKeyUnknown || f.reason == engine.ReasonCredentialsMalformed || f.reason == apierr.ReasonCredentialsMissing:
		code = "invalid_api_key"
	case f.status == http.StatusNotFound && (f.reason == apierr.ReasonUnknownModel || f.reason == apierr.ReasonUnknownProvider):
		code = "model_not_found"
	}
	return typ, code
}

// errorBody renders a failure as OpenAI's error object, with OpenAI's own
// codes where llmrelay's reason means the same (invalid_api_key,
// model_not_found, insufficient_quota, context_length_exceeded) and llmrelay's reason, lower-case,
// otherwise; an llmrelay member keeps the reason and its metadata as
// llmrelay's gRPC API gives them.
func (openAI) errorBody(f failure, _ string) ([]byte, int) {
	status := f.status
	typ, code := openAIErrorCode(f)
	var param *string
	if f.param != "" {
		param = &f.param
	}
	type llmrelayErr struct {
		Reason   string            `json:"reason"`
		Metadata map[string]string `json:"metadata,omitempty"`
	}
	body, _ := json.Marshal(struct {
		Error struct {
			Message  string      `json:"message"`
			Type     string      `json:"type"`
			Param    *string     `json:"param"`
			Code     string      `json:"code"`
			Llmrelay llmrelayErr `json:"llmrelay"`
		} `json:"error"`
	}{Error: struct {
		Message  string      `json:"message"`
		Type     string      `json:"type"`
		Param    *string     `json:"param"`
		Code     string      `json:"code"`
		Llmrelay llmrelayErr `json:"llmrelay"`
	}{Message: f.message, Type: typ, Param: param, Code: code, Llmrelay: llmrelayErr{Reason: f.reason, Metadata: f.metadata}}})
	return body, status
}

// openAIModel is OpenAI's model object.
type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// openAIModelOf is m as OpenAI's model object: owned by its provider, or
// by llmrelay for a route.
func openAIModelOf(m *llmrelayv1.Model) openAIModel {
	owner := m.GetProvider()
	if owner == "" {
		owner = "llmrelay" // a route
	}
	return openAIModel{ID: m.GetId(), Object: "model", OwnedBy: owner}
}

// models renders the model list as OpenAI's, with llmrelay's member
// when a provider accepts any model name (extensionOf).
func (openAI) models(list *llmrelayv1.ListModelsResponse) ([]byte, error) {
	out := struct {
		Object   string         `json:"object"`
		Data     []openAIModel  `json:"data"`
		Llmrelay *listExtension `json:"llmrelay,omitempty"`
	}{Object: "list", Data: []openAIModel{}, Llmrelay: extensionOf(list)}
	for _, m := range list.GetModels() {
		out.Data = append(out.Data, openAIModelOf(m))
	}
	return json.Marshal(out)
}

// model renders one model as OpenAI's model object.
func (openAI) model(m *llmrelayv1.Model) ([]byte, error) { return json.Marshal(openAIModelOf(m)) }
