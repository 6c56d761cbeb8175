package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// This file is OpenAI's Responses API (POST /v1/responses), stateless: a
// request's input items become the engine's GenerateRequest, the call's
// events become the Responses stream's events or one response object, and
// errors become OpenAI's error body, as the Chat Completions door writes
// it. llmrelay keeps no response: nothing is stored (store is accepted and
// ignored), and a request that names an earlier response or a
// conversation (previous_response_id, conversation, item_reference items)
// is refused; the client sends the whole conversation every time.

// responses is the OpenAI Responses wire format.
type responses struct{}

func (responses) name() string { return InterfaceOpenAIResponses }

// responsesOptions are the Responses parameters llmrelay passes to the
// provider as provider_options under their own names, each unless it has
// its default value.
var responsesOptions = map[string]string{
	"service_tier":           `"auto"`,
	"prompt_cache_key":       "",
	"prompt_cache_retention": "",
	"safety_identifier":      "",
}

// responsesRefused are Responses parameters whose answer llmrelay's reply
// cannot carry, or that need state llmrelay does not keep, refused unless
// they have their default value.
var responsesRefused = map[string]string{
	"background":   "false",
	"top_logprobs": "0",
	"truncation":   `"disabled"`,
	"prompt":       "",
}

// noState is why a request that names stored state is refused.
const noState = "llmrelay keeps no response state (it is stateless, and stores nothing): send the whole conversation in input"

// decode translates a Responses request. Its instructions are the first
// message, whatever the order of the members.
func (responses) decode(body []byte, _ http.Header) (*translated, *failure) {
	fields, err := objectFields(body)
	if err != nil {
		f := requestError("", "the request body "+err.Error())
		return nil, &f
	}
	t := &translated{req: &llmrelayv1.GenerateRequest{}, own: map[string]bool{}, format: responses{}, maxTokensField: "max_output_tokens"}
	var instructions *llmrelayv1.Message
	var wire echoWire
	field := func(key string, raw json.RawMessage) error {
		if key != "instructions" {
			if err := t.responsesField(key, raw); err != nil {
				return err
			}
			wire.note(key, raw)
			return nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return errors.New("must be a string")
		}
		instructions = &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: s}
		return nil
	}
	if f := t.decodeFields(fields, field); f != nil {
		return nil, f
	}
	if instructions != nil {
		t.req.Messages = append([]*llmrelayv1.Message{instructions}, t.req.Messages...)
		t.messages = append([]string{"instructions"}, t.messages...)
		wire.instructions = &instructions.Content
	}
	t.echo = wire.echo(t)
	return t, nil
}

// echoWire is what a Responses reply repeats of its request that the
// engine's request does not keep as the client wrote it: the
// instructions (which become a system message), metadata and user (which
// share the call's labels), max_tool_calls (nothing to do) and whether
// text.format was json_object (a schema of any object to the engine).
type echoWire struct {
	instructions *string
	metadata     map[string]string
	user         *string
	maxToolCalls *int64
	jsonObject   bool
}

// note keeps what echo needs of a request member the door translated.
func (w *echoWire) note(key string, raw json.RawMessage) {
	switch key {
	case "metadata":
		_ = json.Unmarshal(raw, &w.metadata)
	case "user":
		_ = json.Unmarshal(raw, &w.user)
	case "max_tool_calls":
		if n, ok := integerIn(raw, 0, math.MaxInt64); ok {
			w.maxToolCalls = &n
		}
	case "text":
		var tc struct {
			Format struct {
				Type string `json:"type"`
			} `json:"format"`
		}
		_ = json.Unmarshal(raw, &tc)
		w.jsonObject = tc.Format.Type == "json_object"
	}
}

// responsesEcho is the request's settings as a Responses reply repeats
// them, with the names and shapes of OpenAI's response object: what
// llmrelay applied, read from the engine's request where it keeps them,
// so that nothing is echoed that the call does not do. A setting the
// request left out is null (a route's defaults may fill it in, which the
// door does not see), or the API's default where llmrelay does the same
// (tool_choice auto, parallel tool calls, no truncation, no logprobs).
type responsesEcho struct {
	Instructions      *string           `json:"instructions"`
	MaxOutputTokens   *uint32           `json:"max_output_tokens"`
	MaxToolCalls      *int64            `json:"max_tool_calls"`
	Metadata          map[string]string `json:"metadata"`
	ParallelToolCalls bool              `json:"parallel_tool_calls"`
	PromptCacheKey    *string           `json:"prompt_cache_key,omitempty"`
	Reasoning         *echoReasoning    `json:"reasoning"`
	SafetyIdentifier  *string           `json:"safety_identifier,omitempty"`
	Temperature       *float32          `json:"temperature"`
	Text              *echoText         `json:"text,omitempty"`
	ToolChoice        any               `json:"tool_choice"`
	Tools             []echoTool        `json:"tools"`
	TopLogprobs       int               `json:"top_logprobs"`
	TopP              *float32          `json:"top_p"`
	Truncation        string            `json:"truncation"`
	User              *string           `json:"user,omitempty"`
}

// echoReasoning is the reasoning settings: the effort the provider was
// asked for; no summary, which llmrelay does not make.
type echoReasoning struct {
	Effort  any `json:"effort"`
	Summary any `json:"summary"`
}

// echoText is text: its format when the request asked for structured
// output (a plain text format is not shown: the engine cannot tell it
// from none, for which a route's default structured output may stand in),
// and its verbosity when set.
type echoText struct {
	Format    *echoFormat `json:"format,omitempty"`
	Verbosity any         `json:"verbosity,omitempty"`
}

// echoFormat is a structured output format. strict is true: llmrelay
// validates every reply against the schema, whatever the request said.
type echoFormat struct {
	Type   string         `json:"type"`
	Name   *string        `json:"name,omitempty"`
	Schema map[string]any `json:"schema,omitempty"`
	Strict *bool          `json:"strict,omitempty"`
}

// echoTool is a function tool. strict is false: llmrelay does not hold
// a call's arguments to the tool's parameters.
type echoTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Parameters  map[string]any `json:"parameters"`
	Strict      bool           `json:"strict"`
}

// echo renders the request's settings (responsesEcho) as JSON members,
// each after a comma, for appendResponse.
func (w *echoWire) echo(t *translated) []byte {
	req := t.req
	e := responsesEcho{
		Instructions: w.instructions, MaxToolCalls: w.maxToolCalls,
		Metadata: w.metadata, User: w.user, ParallelToolCalls: !req.GetToolChoice().GetDisableParallelToolCalls(),
		ToolChoice: "auto", Tools: []echoTool{}, Truncation: "disabled",
	}
	if gen := req.GetGeneration(); gen != nil {
		e.MaxOutputTokens, e.Temperature, e.TopP = gen.MaxOutputTokens, gen.Temperature, gen.TopP
	}
	if e.Metadata == nil {
		e.Metadata = map[string]string{}
	}
	// The options the door passed to the provider under their own names.
	option := func(key string) any {
		if !t.own[key] {
			return nil
		}
		return req.GetProviderOptions().GetFields()[key].AsInterface()
	}
	str := func(v any) *string {
		if s, ok := v.(string); ok {
			return &s
		}
		return nil
	}
	e.PromptCacheKey, e.SafetyIdentifier = str(option("prompt_cache_key")), str(option("safety_identifier"))
	if effort := option("reasoning_effort"); effort != nil {
		e.Reasoning = &echoReasoning{Effort: effort}
	}
	var text echoText
	if rf := req.GetResponseFormat(); rf != nil {
		if w.jsonObject {
			text.Format = &echoFormat{Type: "json_object"}
		} else {
			strict, name := true, rf.GetName()
			text.Format = &echoFormat{Type: "json_schema", Name: &name, Schema: rf.GetJsonSchema().AsMap(), Strict: &strict}
		}
	}
	text.Verbosity = option("verbosity")
	if text.Format != nil || text.Verbosity != nil {
		e.Text = &text
	}
	switch tc := req.GetToolChoice(); tc.GetMode() {
	case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		e.ToolChoice = "none"
	case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
		e.ToolChoice = "required"
	case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL:
		e.ToolChoice = map[string]string{"type": "function", "name": tc.GetName()}
	}
	for _, tl := range req.GetTools() {
		et := echoTool{Type: "function", Name: tl.GetName()}
		if d := tl.GetDescription(); d != "" {
			et.Description = &d
		}
		if tl.GetParameters() != nil {
			et.Parameters = tl.GetParameters().AsMap()
		}
		e.Tools = append(e.Tools, et)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil // not reached: every member is plain JSON
	}
	// {...}\n: the members, after a comma.
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	out[0] = ','
	return out[:len(out)-1]
}

// responsesField translates one top-level member of the request.
func (t *translated) responsesField(key string, raw json.RawMessage) error {
	req := t.req
	switch key {
	case "input":
		return t.responsesInput(raw)
	case "tools":
		return responsesTools(req, raw)
	case "tool_choice":
		return responsesToolChoice(req, raw)
	case "text":
		return t.responsesText(raw)
	case "reasoning":
		// effort goes to the provider as the Chat Completions door's
		// reasoning_effort; the summary settings are accepted: llmrelay's
		// reasoning is the provider's own, summarised or not.
		var r struct {
			Effort          json.RawMessage `json:"effort"`
			Summary         *string         `json:"summary"`
			GenerateSummary *string         `json:"generate_summary"`
			Context         json.RawMessage `json:"context"`
		}
		if err := decodeStrict(raw, &r); err != nil {
			return err
		}
		if !isNull(r.Effort) {
			t.own["reasoning_effort"] = true
			return setOption(req, "reasoning_effort", r.Effort)
		}
	case "previous_response_id", "conversation":
		return errors.New(noState)
	case "store":
		// The API's default is true; llmrelay stores nothing either way.
		var store bool
		if err := json.Unmarshal(raw, &store); err != nil {
			return errors.New("must be true or false")
		}
	case "include":
		var include []string
		if err := json.Unmarshal(raw, &include); err != nil {
			return errors.New("must be a list of strings")
		}
		for i, inc := range include {
			if inc == "message.output_text.logprobs" {
				return &paramError{"[" + strconv.Itoa(i) + "]", "not supported by llmrelay: its replies carry no logprobs"}
			}
		}
	case "stream_options":
		var so struct {
			IncludeObfuscation bool `json:"include_obfuscation"`
		}
		return decodeStrict(raw, &so)
	case "max_tool_calls":
		// A bound on OpenAI's built-in tools, which llmrelay has none of.
		if _, ok := integerIn(raw, 0, math.MaxInt64); !ok {
			return errors.New("must be a whole number")
		}
	default:
		if handled, err := t.openAIField(key, raw); handled {
			return err
		}
		if handled, err := t.sharedField(key, raw); handled {
			return err
		}
		return t.otherField(key, raw, responsesOptions, responsesRefused, "unknown parameter")
	}
	return nil
}

// responsesItem is any item of a request's input: a message (whose type
// may be left out), a function call, its output, or reasoning.
type responsesItem struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Status  string          `json:"status"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Phase   json.RawMessage `json:"phase"` // accepted, not forwarded
	// A function call, and its output. ParsedArguments: the SDKs' parse
	// and stream helpers add it to a reply's function calls; accepted in a
	// request, not forwarded.
	CallID          string          `json:"call_id"`
	Name            string          `json:"name"`
	Arguments       string          `json:"arguments"`
	ParsedArguments json.RawMessage `json:"parsed_arguments"`
	Output          json.RawMessage `json:"output"`
	// Reasoning.
	Summary          json.RawMessage `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content"`
}

// responsesItemTypes are the input items llmrelay translates.
var responsesItemTypes = map[string]bool{"message": true, "function_call": true, "function_call_output": true, "reasoning": true}

var responsesRoles = map[string]llmrelayv1.Role{
	"system":    llmrelayv1.Role_ROLE_SYSTEM,
	"developer": llmrelayv1.Role_ROLE_SYSTEM,
	"user":      llmrelayv1.Role_ROLE_USER,
	"assistant": llmrelayv1.Role_ROLE_ASSISTANT,
}

// responsesInput translates input: a string is one user message; a list
// of items becomes the messages, an assistant's turn (its message, its
// reasoning and its function calls, which the API gives as items of their
// own) one assistant message, and each function call's output a tool
// message.
func (t *translated) responsesInput(raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t.add(&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: s}, "input")
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return errors.New("must be a string or a list of items")
	}
	// turn is the assistant message the last items made, which a function
	// call or reasoning item that follows joins.
	var turn *llmrelayv1.Message
	// signatures are the function calls' signatures whose reasoning items
	// came before their calls, by call id.
	signatures := map[string]string{}
	assistant := func(path string) *llmrelayv1.Message {
		if turn == nil {
			turn = &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
			t.add(turn, path)
		}
		return turn
	}
	for i, iraw := range items {
		at := "[" + strconv.Itoa(i) + "]"
		path := "input" + at
		var head struct {
			Type string `json:"type"`
			Role string `json:"role"`
		}
		if err := json.Unmarshal(iraw, &head); err != nil {
			return &paramError{at, "must be an item object"}
		}
		typ := head.Type
		if typ == "" && head.Role != "" {
			typ = "message"
		}
		if !responsesItemTypes[typ] {
			if typ == "item_reference" {
				return &paramError{at, noState}
			}
			return &paramError{at + ".type", strconv.Quote(typ) + " items are not supported by llmrelay: input holds message, function_call, function_call_output and reasoning items"}
		}
		var it responsesItem
		if err := decodeStrict(iraw, &it); err != nil {
			return inParam(at, err)
		}
		switch typ {
		case "message":
			role, ok := responsesRoles[it.Role]
			if !ok {
				return &paramError{at + ".role", "must be user, system, developer or assistant"}
			}
			content, refusal, err := responsesParts.content(it.Content, role)
			if err != nil {
				return inParam(at+".content", err)
			}
			if role != llmrelayv1.Role_ROLE_ASSISTANT {
				turn = nil
				m := &llmrelayv1.Message{Role: role}
				content.fill(m)
				t.add(m, path)
				continue
			}
			if turn != nil && (turn.Content != "" || turn.Refusal != "" || len(turn.ToolCalls) > 0) {
				turn = nil // a message after the turn's calls: the next turn
			}
			m := assistant(path)
			content.fill(m)
			m.Refusal = refusal
		case "function_call":
			m := assistant(path)
			m.ToolCalls = append(m.ToolCalls, &llmrelayv1.ToolCall{Id: it.CallID, Name: it.Name, Arguments: it.Arguments, Signature: signatures[it.CallID]})
		case "function_call_output":
			content, _, err := responsesParts.content(it.Output, llmrelayv1.Role_ROLE_TOOL)
			if err != nil {
				return inParam(at+".output", err)
			}
			turn = nil
			m := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: it.CallID}
			content.fill(m)
			t.add(m, path)
		case "reasoning":
			if call, sig, ok := callSignature(it); ok {
				// A function call's signature, not a reasoning block: it
				// goes on that call, wherever it is in the input.
				if tc := t.toolCall(call); tc != nil {
					tc.Signature = sig
				} else {
					signatures[call] = sig
				}
				continue
			}
			r, err := reasoningOf(it)
			if err != nil {
				return inParam(at, err)
			}
			if turn != nil && len(turn.ToolCalls) > 0 {
				turn = nil
			}
			m := assistant(path)
			m.Reasoning = append(m.Reasoning, r)
		}
	}
	return nil
}

// toolCall returns the function call of the input so far with the call
// id, nil when there is none.
func (t *translated) toolCall(id string) *llmrelayv1.ToolCall {
	for _, m := range slices.Backward(t.req.GetMessages()) {
		for _, tc := range m.GetToolCalls() {
			if tc.GetId() == id {
				return tc
			}
		}
	}
	return nil
}

// responsesParts are the Responses API's content parts: input_text and
// output_text, input_image parts (image_url, detail, file_id) and refusal.
var responsesParts = openAIParts{text: []string{"input_text", "output_text"}, image: "input_image", urlAt: ".image_url", detailAt: ".detail", toolImages: true, decode: responsesPart}

func responsesPart(raw json.RawMessage) (openAIPart, error) {
	var p struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Refusal  string `json:"refusal"`
		ImageURL string `json:"image_url"`
		Detail   string `json:"detail"`
		FileID   string `json:"file_id"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return openAIPart{}, err
	}
	return openAIPart{typ: p.Type, text: p.Text, refusal: p.Refusal, imageURL: p.ImageURL, detail: p.Detail, fileID: p.FileID}, nil
}

// reasoningOf reads a reasoning item: its content's reasoning_text (or,
// without content, its summary's summary_text) is the block's text, and
// the encrypted_content llmrelay gave it (reasoningSeal) restores the
// block's format, signature and redacted data, so that the block goes back
// to its provider. Encrypted content llmrelay did not make (OpenAI's own)
// cannot be sent anywhere and is dropped.
func reasoningOf(it responsesItem) (*llmrelayv1.Reasoning, error) {
	type textPart struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var content, summary []textPart
	if err := decodeAs(it.Content, &content, "must be a list of reasoning_text parts"); !isNull(it.Content) && err != nil {
		return nil, inParam(".content", err)
	}
	if err := decodeAs(it.Summary, &summary, "must be a list of summary_text parts"); !isNull(it.Summary) && err != nil {
		return nil, inParam(".summary", err)
	}
	if len(content) == 0 {
		content = summary
	}
	var texts []string
	for _, p := range content {
		texts = append(texts, p.Text)
	}
	r := &llmrelayv1.Reasoning{Text: strings.Join(texts, "\n")}
	if it.EncryptedContent != nil {
		unsealReasoning(*it.EncryptedContent, r)
	}
	return r, nil
}

// sealPrefix opens the encrypted_content of a reasoning item llmrelay
// wrote: the block's opaque members, base64url JSON. It is not encrypted:
// the block's signature and redacted data are the provider's own opaque
// strings, which the client sends back as they came.
const sealPrefix = "llmrelay:"

// sealedReasoning is what a reasoning item's encrypted_content keeps of
// the engine's block.
type sealedReasoning struct {
	Format         string `json:"f,omitempty"`
	Signature      string `json:"s,omitempty"`
	Redacted       string `json:"r,omitempty"`
	ID             string `json:"i,omitempty"`
	Kind           string `json:"k,omitempty"`
	ProviderFormat string `json:"p,omitempty"`
	// Call: the sealed item carries the signature of the function call
	// with this call id (Gemini's thoughtSignature on a functionCall),
	// which a function_call item has no member for.
	Call string `json:"c,omitempty"`
}

// sealReasoning returns the encrypted_content of a reasoning block, empty
// when it has nothing to keep but its text.
func sealReasoning(r *llmrelayv1.Reasoning) string {
	s := sealedReasoning{Format: r.GetFormat(), Signature: r.GetSignature(), Redacted: r.GetRedacted(),
		ID: r.GetId(), Kind: r.GetKind(), ProviderFormat: r.GetProviderFormat()}
	if s == (sealedReasoning{}) {
		return ""
	}
	b, _ := json.Marshal(s)
	return sealPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// sealCall returns the encrypted_content of the reasoning item that
// carries a function call's signature, empty when it has none.
func sealCall(tc *llmrelayv1.ToolCall) string {
	if tc.GetSignature() == "" {
		return ""
	}
	b, _ := json.Marshal(sealedReasoning{Signature: tc.GetSignature(), Call: tc.GetId()})
	return sealPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// callSignature reads a reasoning item that sealCall wrote: the call id
// and its signature; false for any other item.
func callSignature(it responsesItem) (call, signature string, ok bool) {
	if it.EncryptedContent == nil {
		return "", "", false
	}
	data, ok := strings.CutPrefix(*it.EncryptedContent, sealPrefix)
	if !ok {
		return "", "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(data)
	var s sealedReasoning
	if err != nil || json.Unmarshal(b, &s) != nil || s.Call == "" {
		return "", "", false
	}
	return s.Call, s.Signature, true
}

// unsealReasoning restores into r what sealReasoning kept; anything else
// is ignored.
func unsealReasoning(sealed string, r *llmrelayv1.Reasoning) {
	data, ok := strings.CutPrefix(sealed, sealPrefix)
	if !ok {
		return
	}
	b, err := base64.RawURLEncoding.DecodeString(data)
	var s sealedReasoning
	if err != nil || json.Unmarshal(b, &s) != nil {
		return
	}
	r.Format, r.Signature, r.Redacted, r.Id, r.Kind, r.ProviderFormat = s.Format, s.Signature, s.Redacted, s.ID, s.Kind, s.ProviderFormat
}

// responsesTools translates tools: function tools are the request's
// tools; OpenAI's built-in tools (web_search, file_search, ...) are
// refused by name.
func responsesTools(req *llmrelayv1.GenerateRequest, raw json.RawMessage) error {
	var tools []json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return errors.New("must be a list of tools")
	}
	for i, traw := range tools {
		at := "[" + strconv.Itoa(i) + "]"
		var tl struct {
			Type         string          `json:"type"`
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			Parameters   json.RawMessage `json:"parameters"`
			Strict       *bool           `json:"strict"`        // accepted; llmrelay checks tool arguments no further
			DeferLoading *bool           `json:"defer_loading"` // accepted, not forwarded
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(traw, &head); err != nil {
			return &paramError{at, "must be a tool object"}
		}
		if head.Type != "function" {
			return &paramError{at + ".type", strconv.Quote(head.Type) + " tools are not supported by llmrelay: only function tools"}
		}
		if err := decodeStrict(traw, &tl); err != nil {
			return inParam(at, err)
		}
		tool := &llmrelayv1.Tool{Name: tl.Name, Description: tl.Description}
		if !isNull(tl.Parameters) {
			p, err := structOf(tl.Parameters)
			if err != nil {
				return inParam(at+".parameters", err)
			}
			tool.Parameters = p
		}
		req.Tools = append(req.Tools, tool)
	}
	return nil
}

// responsesToolChoice translates tool_choice: "auto", "none",
// "required", or a function by name.
func responsesToolChoice(req *llmrelayv1.GenerateRequest, raw json.RawMessage) error {
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
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := decodeStrict(raw, &tc); err != nil || tc.Type != "function" {
		return errors.New(`must be "auto", "none", "required" or {"type": "function", "name": ...}`)
	}
	c := toolChoice(req)
	c.Mode, c.Name = llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, tc.Name
	return nil
}

// responsesText translates text: its format is the Chat Completions
// door's response_format, flattened (json_schema's name, schema and
// strict beside its type); verbosity goes to the provider.
func (t *translated) responsesText(raw json.RawMessage) error {
	var tc struct {
		Format    json.RawMessage `json:"format"`
		Verbosity json.RawMessage `json:"verbosity"`
	}
	if err := decodeStrict(raw, &tc); err != nil {
		return err
	}
	if !isNull(tc.Verbosity) {
		t.own["verbosity"] = true
		if err := setOption(t.req, "verbosity", tc.Verbosity); err != nil {
			return inParam(".verbosity", err)
		}
	}
	if isNull(tc.Format) {
		return nil
	}
	var f struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"` // llmrelay always validates
	}
	if err := decodeStrict(tc.Format, &f); err != nil {
		return inParam(".format", err)
	}
	switch f.Type {
	case "text":
		return nil
	case "json_object":
		t.req.ResponseFormat = &llmrelayv1.ResponseFormat{JsonSchema: &structpb.Struct{Fields: map[string]*structpb.Value{
			"type": structpb.NewStringValue("object"),
		}}}
		return nil
	case "json_schema":
	default:
		return &paramError{".format.type", "must be text, json_object or json_schema"}
	}
	if isNull(f.Schema) {
		return &paramError{".format.schema", "required with type json_schema"}
	}
	s, err := structOf(f.Schema)
	if err != nil {
		return inParam(".format.schema", err)
	}
	t.req.ResponseFormat = &llmrelayv1.ResponseFormat{Name: f.Name, JsonSchema: s}
	return nil
}

// responsesParam names a field of the engine's request as the client
// wrote it in a Responses request.
func (t *translated) responsesParam(field string) string {
	head, idx, rest := splitField(field)
	switch head {
	case "generation":
		if rest == ".max_output_tokens" {
			return "max_output_tokens"
		}
		return strings.TrimPrefix(rest, ".")
	case "messages":
		i, err := strconv.Atoi(strings.Trim(idx, "[]"))
		if err != nil || i < 0 || i >= len(t.messages) {
			return "input"
		}
		// A message with parts is a user's message item with images, or a
		// function_call_output item with images in its output.
		if part, ok := responsesParts.param(rest); ok && i < len(t.req.GetMessages()) && len(t.req.GetMessages()[i].GetParts()) > 0 {
			if t.req.GetMessages()[i].GetRole() == llmrelayv1.Role_ROLE_TOOL {
				part = ".output" + strings.TrimPrefix(part, ".content")
			}
			return t.messages[i] + part
		}
		return t.messages[i]
	case "tools":
		return head + idx + rest
	case "tool_choice":
		switch rest {
		case ".name":
			return "tool_choice.name"
		case ".disable_parallel_tool_calls":
			return "parallel_tool_calls"
		}
		return head
	case "response_format":
		if rest == ".name" {
			return "text.format.name"
		}
		return "text.format.schema"
	case "provider_options":
		// The options the Responses API nests, which the Chat Completions
		// door (commonParam's naming) has at the top.
		key, _, _ := strings.Cut(strings.TrimPrefix(rest, "."), ".")
		if member, ok := responsesNested[key]; ok && t.own[key] {
			return member + strings.TrimPrefix(rest, "."+key)
		}
	}
	return t.commonParam(field)
}

// responsesNested are the provider options a Responses request sets from
// a nested member, by the member's path.
var responsesNested = map[string]string{"reasoning_effort": "reasoning.effort", "verbosity": "text.verbosity"}

// The reply.

// responsesUsage is the Responses API's usage.
type responsesUsage struct {
	InputTokens        uint64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens uint64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        uint64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens uint64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens uint64 `json:"total_tokens"`
}

func responsesUsageOf(u *llmrelayv1.Usage) responsesUsage {
	ru := responsesUsage{InputTokens: u.GetInputTokens(), OutputTokens: u.GetOutputTokens(), TotalTokens: u.GetInputTokens() + u.GetOutputTokens()}
	ru.InputTokensDetails.CachedTokens = u.GetCachedInputTokens()
	ru.OutputTokensDetails.ReasoningTokens = u.GetReasoningTokens()
	return ru
}

// responsesStatus is a finished reply's status, and for an incomplete
// one why: the output token limit (or max_tool_turns, which the engine
// reports as a length stop), or the provider's content filter.
func responsesStatus(r llmrelayv1.FinishReason) (status, incomplete string) {
	switch r {
	case llmrelayv1.FinishReason_FINISH_REASON_LENGTH, llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS:
		return "incomplete", "max_output_tokens"
	case llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER:
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

// itemID is the id of a reply's n-th item: prefix (msg_, fc_, rs_), the
// request id, n.
func itemID(r *replyInfo, prefix string, n int) string {
	return prefix + r.requestID + "_" + strconv.Itoa(n)
}

// appendResponse appends a response object: status, the items of its
// output (JSON, comma-separated), and, when not nil, its usage, error and
// incomplete reason.
func appendResponse(b []byte, r *replyInfo, status string, output []byte, usage *llmrelayv1.Usage, fail *failure, incomplete string) []byte {
	b = append(b, `{"id":"resp_`...)
	b = append(b, r.requestID...)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, r.created, 10)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","background":false,"error":`...)
	if fail != nil {
		_, code := openAIErrorCode(*fail)
		b = append(b, '{')
		b = appendKeyString(b, "code", code)
		b = append(b, ',')
		b = appendKeyString(b, "message", fail.message)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if incomplete != "" {
		b = append(b, `{"reason":"`...)
		b = append(b, incomplete...)
		b = append(b, `"}`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"model":`...)
	b = appendString(b, r.model)
	b = append(b, `,"output":[`...)
	b = append(b, output...)
	b = append(b, `],"previous_response_id":null,"store":false`...)
	b = append(b, r.echo...)
	b = append(b, `,"usage":`...)
	if usage != nil {
		u, _ := json.Marshal(responsesUsageOf(usage))
		b = append(b, u...)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// appendMessageItem appends a message item whose content parts (JSON,
// comma-separated) are parts.
func appendMessageItem(b []byte, id, status string, parts []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, id)
	b = append(b, `,"type":"message","status":"`...)
	b = append(b, status...)
	b = append(b, `","role":"assistant","content":[`...)
	b = append(b, parts...)
	return append(b, "]}"...)
}

// appendPart appends a message's content part: output_text, or refusal.
func appendPart(b []byte, refusal bool, text string) []byte {
	if refusal {
		b = append(b, `{"type":"refusal","refusal":`...)
		b = appendString(b, text)
		return append(b, '}')
	}
	b = append(b, `{"type":"output_text","text":`...)
	b = appendString(b, text)
	return append(b, `,"annotations":[],"logprobs":[]}`...)
}

// appendCallItem appends a function_call item.
func appendCallItem(b []byte, id, status, callID, name, arguments string) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, id)
	b = append(b, `,"type":"function_call","status":"`...)
	b = append(b, status...)
	b = append(b, `",`...)
	b = appendKeyString(b, "call_id", callID)
	b = append(b, ',')
	b = appendKeyString(b, "name", name)
	b = append(b, ',')
	b = appendKeyString(b, "arguments", arguments)
	return append(b, '}')
}

// appendReasoningItem appends a reasoning item: its text as one
// reasoning_text part, and, in encrypted_content, what the block needs to
// go back to its provider (sealReasoning).
func appendReasoningItem(b []byte, id, status, text, sealed string) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, id)
	b = append(b, `,"type":"reasoning","status":"`...)
	b = append(b, status...)
	b = append(b, `","summary":[],"content":[`...)
	if text != "" {
		b = append(b, `{"type":"reasoning_text","text":`...)
		b = appendString(b, text)
		b = append(b, '}')
	}
	b = append(b, `],"encrypted_content":`...)
	if sealed != "" {
		b = appendString(b, sealed)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// reply renders a Final as one response whose output has the items of a
// streamed reply's terminal event, in their order (responsesBlocks): a
// reasoning item per reasoning block, a message item per text block (the
// refusal in the last), a function_call item per tool call, then a
// reasoning item with each call's signature. A message item that ends
// the blocks has the response's status, as the stream's item open at its
// end does; every other item is completed.
func (responses) reply(r *replyInfo, f *llmrelayv1.Final) ([]byte, error) {
	m := f.GetMessage()
	status, incomplete := responsesStatus(f.GetFinishReason())
	var out []byte
	n := 0
	next := func() {
		if n > 0 {
			out = append(out, ',')
		}
		n++
	}
	blocks := responsesBlocks(m)
	lastText := -1
	for i, b := range blocks {
		if b.text != nil {
			lastText = i
		}
	}
	for i, b := range blocks {
		switch {
		case b.reasoning != nil:
			next()
			out = appendReasoningItem(out, itemID(r, "rs_", n-1), "completed", b.reasoning.GetText(), sealReasoning(b.reasoning))
		case b.call != nil:
			next()
			out = appendCallItem(out, itemID(r, "fc_", n-1), "completed", b.call.GetId(), b.call.GetName(), b.call.GetArguments())
		default:
			refusal := ""
			if i == lastText {
				refusal = m.GetRefusal()
			}
			var parts []byte
			if *b.text != "" || refusal == "" {
				parts = appendPart(parts, false, *b.text)
			}
			if refusal != "" {
				if len(parts) > 0 {
					parts = append(parts, ',')
				}
				parts = appendPart(parts, true, refusal)
			}
			itemStatus := "completed"
			if i == len(blocks)-1 {
				itemStatus = status
			}
			next()
			out = appendMessageItem(out, itemID(r, "msg_", n-1), itemStatus, parts)
		}
	}
	for _, tc := range m.GetToolCalls() {
		if sealed := sealCall(tc); sealed != "" {
			next()
			out = appendReasoningItem(out, itemID(r, "rs_", n-1), "completed", "", sealed)
		}
	}
	return appendResponse(nil, r, status, out, f.GetUsage(), nil, incomplete), nil
}

// responsesBlock is a block of a reply's message that is an item of a
// Responses reply: exactly one of its fields is set.
type responsesBlock struct {
	text      *string
	reasoning *llmrelayv1.Reasoning
	call      *llmrelayv1.ToolCall
}

// responsesBlocks returns m's blocks that a Responses reply shows, in the
// order a stream shows them: its parts' order (a reply of server tools
// has each turn's reasoning and text, clientFinal), else the usual order
// (reasoning, text, tool calls). Provider tool blocks have no item. A
// message without text has an empty text block, where the usual order
// puts it, when it has a refusal or no tool call: a reply always has a
// message item or a call.
func responsesBlocks(m *llmrelayv1.Message) []responsesBlock {
	var blocks []responsesBlock
	hasText := false
	text := func(s string) {
		blocks = append(blocks, responsesBlock{text: &s})
		hasText = true
	}
	reasoning := func(rs *llmrelayv1.Reasoning) { blocks = append(blocks, responsesBlock{reasoning: rs}) }
	call := func(tc *llmrelayv1.ToolCall) { blocks = append(blocks, responsesBlock{call: tc}) }
	if parts := m.GetParts(); len(parts) > 0 {
		for _, p := range parts {
			switch p := p.GetPart().(type) {
			case *llmrelayv1.Part_Text:
				text(p.Text)
			case *llmrelayv1.Part_Reasoning:
				if int(p.Reasoning) < len(m.GetReasoning()) {
					reasoning(m.GetReasoning()[p.Reasoning])
				}
			case *llmrelayv1.Part_ToolCall:
				if int(p.ToolCall) < len(m.GetToolCalls()) {
					call(m.GetToolCalls()[p.ToolCall])
				}
			}
		}
	} else {
		for _, rs := range m.GetReasoning() {
			reasoning(rs)
		}
		if c := m.GetContent(); c != "" {
			text(c)
		}
		for _, tc := range m.GetToolCalls() {
			call(tc)
		}
	}
	if !hasText && (m.GetRefusal() != "" || len(m.GetToolCalls()) == 0) {
		at := slices.IndexFunc(blocks, func(b responsesBlock) bool { return b.call != nil })
		if at < 0 {
			at = len(blocks)
		}
		empty := ""
		blocks = slices.Insert(blocks, at, responsesBlock{text: &empty})
	}
	return blocks
}

// itemKind is what the open item of a stream holds.
type itemKind uint8

const (
	itemNone itemKind = iota
	itemMessage
	itemReasoning
)

// responsesCall is a function call item of a stream.
type responsesCall struct {
	id, callID, name string
	index            int
	arguments        []byte
	// scan reads the arguments as they come.
	scan jsonScan
	done bool
}

// responsesStream writes a reply as the Responses API's stream events,
// numbered from 0 (sequence_number). Text and refusals go to a message
// item's output_text and refusal parts, reasoning to a reasoning item,
// each tool call to a function_call item; an item of another kind, or a
// later turn, closes the open item and starts the next one (another call
// closes the calls before it whose arguments are whole). The items
// done so far are the output of the terminal event's response.
type responsesStream struct {
	r       *replyInfo
	seq     uint64
	attempt uint32
	// next is the output index of the next item; serial counts the items
	// started, for their ids, which a restart does not reuse.
	next, serial int
	// The open message or reasoning item: its kind, output index and id;
	// its done parts, and how many; its open part (refusal or not) and
	// that part's text.
	kind    itemKind
	open    int
	id      string
	parts   []byte
	nparts  int
	inPart  bool
	refusal bool
	text    []byte
	// reasoning is the open reasoning item's block so far, block its
	// index in the attempt's reply.
	reasoning *llmrelayv1.Reasoning
	block     uint32
	// calls are the function calls by their index, in order.
	calls map[uint32]*responsesCall
	order []*responsesCall
	// output holds the done items, comma-separated.
	output []byte
}

func (responses) stream(r *replyInfo) streamEncoder {
	return &responsesStream{r: r, calls: map[uint32]*responsesCall{}}
}

// event opens an event: its name, then its data up to its sequence number.
func (s *responsesStream) event(b []byte, typ string) []byte {
	b = appendEvent(b, typ)
	b = append(b, `data: {"type":"`...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = appendUint(b, s.seq)
	s.seq++
	return b
}

// end appends an event's llmrelay member, when the client opted in, and
// closes the event.
func (s *responsesStream) end(b []byte) []byte {
	if s.r.extension {
		b = append(b, `,"llmrelay":{"attempt":`...)
		b = appendUint(b, uint64(s.attempt))
		b = append(b, '}')
	}
	return append(b, "}\n\n"...)
}

// appendItemRef appends an event's item_id and output_index members.
func appendItemRef(b []byte, id string, index int) []byte {
	b = append(b, ',')
	b = appendKeyString(b, "item_id", id)
	b = append(b, `,"output_index":`...)
	return strconv.AppendInt(b, int64(index), 10)
}

// item appends an output_item event (added or done) of the item at index.
func (s *responsesStream) item(b []byte, typ string, index int, item []byte) []byte {
	b = s.event(b, typ)
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"item":`...)
	b = append(b, item...)
	return s.end(b)
}

// done adds a done item to the output.
func (s *responsesStream) done(item []byte) {
	if len(s.output) > 0 {
		s.output = append(s.output, ',')
	}
	s.output = append(s.output, item...)
}

// start writes response.created and response.in_progress, which belong
// to no attempt: they carry no llmrelay member.
func (s *responsesStream) start(b []byte, _ *llmrelayv1.Usage) []byte {
	for _, typ := range []string{"response.created", "response.in_progress"} {
		b = s.event(b, typ)
		b = append(b, `,"response":`...)
		b = appendResponse(b, s.r, "in_progress", nil, nil, nil, "")
		b = append(b, "}\n\n"...)
	}
	return b
}

// startItem closes the open item and starts one of kind.
func (s *responsesStream) startItem(b []byte, kind itemKind) []byte {
	b = s.closeItem(b, "completed")
	s.kind, s.open, s.parts, s.nparts = kind, s.next, s.parts[:0], 0
	s.next++
	prefix := "msg_"
	if kind == itemReasoning {
		prefix = "rs_"
		s.reasoning = &llmrelayv1.Reasoning{}
	}
	s.id = itemID(s.r, prefix, s.serial)
	s.serial++
	var item []byte
	if kind == itemReasoning {
		item = appendReasoningItem(nil, s.id, "in_progress", "", "")
	} else {
		item = appendMessageItem(nil, s.id, "in_progress", nil)
	}
	return s.item(b, "response.output_item.added", s.open, item)
}

// startPart starts a content part of the open item: a refusal, or text.
func (s *responsesStream) startPart(b []byte, refusal bool) []byte {
	b = s.closePart(b)
	s.inPart, s.refusal, s.text = true, refusal, s.text[:0]
	b = s.event(b, "response.content_part.added")
	b = appendItemRef(b, s.id, s.open)
	b = append(b, `,"content_index":`...)
	b = appendUint(b, uint64(s.nparts))
	b = append(b, `,"part":`...)
	b = s.appendOpenPart(b)
	return s.end(b)
}

// appendOpenPart appends the open part as it is so far.
func (s *responsesStream) appendOpenPart(b []byte) []byte {
	if s.kind == itemReasoning {
		b = append(b, `{"type":"reasoning_text","text":`...)
		b = appendString(b, string(s.text))
		return append(b, '}')
	}
	return appendPart(b, s.refusal, string(s.text))
}

// closePart ends the open part: its text's done event, and
// content_part.done.
func (s *responsesStream) closePart(b []byte) []byte {
	if !s.inPart {
		return b
	}
	s.inPart = false
	switch {
	case s.kind == itemReasoning:
		b = s.event(b, "response.reasoning_text.done")
	case s.refusal:
		b = s.event(b, "response.refusal.done")
	default:
		b = s.event(b, "response.output_text.done")
	}
	b = appendItemRef(b, s.id, s.open)
	b = append(b, `,"content_index":`...)
	b = appendUint(b, uint64(s.nparts))
	b = append(b, ',')
	switch {
	case s.refusal && s.kind == itemMessage:
		b = appendKeyString(b, "refusal", string(s.text))
	default:
		b = appendKeyString(b, "text", string(s.text))
		if s.kind == itemMessage {
			b = append(b, `,"logprobs":[]`...)
		}
	}
	b = s.end(b)
	b = s.event(b, "response.content_part.done")
	b = appendItemRef(b, s.id, s.open)
	b = append(b, `,"content_index":`...)
	b = appendUint(b, uint64(s.nparts))
	b = append(b, `,"part":`...)
	b = s.appendOpenPart(b)
	b = s.end(b)
	if s.kind == itemReasoning {
		s.reasoning.Text = string(s.text)
	} else {
		if s.nparts > 0 {
			s.parts = append(s.parts, ',')
		}
		s.parts = appendPart(s.parts, s.refusal, string(s.text))
	}
	s.nparts++
	return b
}

// closeItem ends the open message or reasoning item with status.
func (s *responsesStream) closeItem(b []byte, status string) []byte {
	if s.kind == itemNone {
		return b
	}
	b = s.closePart(b)
	var item []byte
	if s.kind == itemReasoning {
		item = appendReasoningItem(nil, s.id, "completed", s.reasoning.Text, sealReasoning(s.reasoning))
	} else {
		item = appendMessageItem(nil, s.id, status, s.parts)
	}
	s.kind = itemNone
	s.done(item)
	return s.item(b, "response.output_item.done", s.open, item)
}

// closeCalls ends the function calls under way.
func (s *responsesStream) closeCalls(b []byte) []byte {
	for _, c := range s.order {
		b = s.closeCall(b, c)
	}
	return b
}

// closeWholeCalls ends the function calls under way, in order, up to the
// first whose arguments are not yet whole JSON, which stays open with the
// calls after it: some OpenAI-compatible servers interleave the fragments
// of parallel calls, so a call that starts does not mean that the earlier
// ones are done, and an item that is done takes no more arguments.
func (s *responsesStream) closeWholeCalls(b []byte) []byte {
	for _, c := range s.order {
		if !c.done && !c.scan.whole() {
			break
		}
		b = s.closeCall(b, c)
	}
	return b
}

// closeCall ends the function call c, unless it is done.
func (s *responsesStream) closeCall(b []byte, c *responsesCall) []byte {
	if c.done {
		return b
	}
	c.done = true
	b = s.event(b, "response.function_call_arguments.done")
	b = appendItemRef(b, c.id, c.index)
	b = append(b, ',')
	b = appendKeyString(b, "name", c.name)
	b = append(b, ',')
	b = appendKeyString(b, "arguments", string(c.arguments))
	b = s.end(b)
	item := appendCallItem(nil, c.id, "completed", c.callID, c.name, string(c.arguments))
	s.done(item)
	return s.item(b, "response.output_item.done", c.index, item)
}

func (s *responsesStream) delta(b []byte, d *llmrelayv1.Delta, attempt uint32) []byte {
	s.attempt = attempt
	switch {
	case d.GetText() != "" || d.GetRefusal() != "":
		refusal := d.GetText() == ""
		b = s.closeCalls(b)
		if s.kind != itemMessage {
			b = s.startItem(b, itemMessage)
		}
		if !s.inPart || s.refusal != refusal {
			b = s.startPart(b, refusal)
		}
		typ, text := "response.output_text.delta", d.GetText()
		if refusal {
			typ, text = "response.refusal.delta", d.GetRefusal()
		}
		s.text = append(s.text, text...)
		b = s.event(b, typ)
		b = appendItemRef(b, s.id, s.open)
		b = append(b, `,"content_index":`...)
		b = appendUint(b, uint64(s.nparts))
		b = append(b, ',')
		b = appendKeyString(b, "delta", text)
		if !refusal {
			b = append(b, `,"logprobs":[]`...)
		}
		return s.end(b)
	case d.GetToolCall() != nil:
		return s.toolDelta(b, d.GetToolCall())
	case d.GetReasoning() != nil:
		return s.reasoningDelta(b, d.GetReasoning())
	}
	return b
}

func (s *responsesStream) toolDelta(b []byte, tc *llmrelayv1.ToolCallDelta) []byte {
	c, seen := s.calls[tc.GetIndex()]
	if !seen {
		b = s.closeItem(b, "completed")
		b = s.closeWholeCalls(b)
		c = &responsesCall{id: itemID(s.r, "fc_", s.serial), callID: tc.GetId(), name: tc.GetName(), index: s.next}
		s.serial++
		s.next++
		s.calls[tc.GetIndex()] = c
		s.order = append(s.order, c)
		b = s.item(b, "response.output_item.added", c.index, appendCallItem(nil, c.id, "in_progress", c.callID, c.name, ""))
	}
	if tc.GetArgumentsDelta() == "" {
		return b
	}
	c.arguments = append(c.arguments, tc.GetArgumentsDelta()...)
	c.scan.write(tc.GetArgumentsDelta())
	b = s.event(b, "response.function_call_arguments.delta")
	b = appendItemRef(b, c.id, c.index)
	b = append(b, ',')
	b = appendKeyString(b, "delta", tc.GetArgumentsDelta())
	return s.end(b)
}

func (s *responsesStream) reasoningDelta(b []byte, rd *llmrelayv1.ReasoningDelta) []byte {
	if s.kind != itemReasoning || s.block != rd.GetIndex() {
		b = s.closeCalls(b)
		b = s.startItem(b, itemReasoning)
		s.reasoning.Format, s.block = rd.GetFormat(), rd.GetIndex()
	}
	s.reasoning.Redacted += rd.GetRedacted()
	s.reasoning.Signature += rd.GetSignature()
	if rd.GetText() == "" {
		return b
	}
	if !s.inPart {
		b = s.startPart(b, false)
	}
	s.text = append(s.text, rd.GetText()...)
	b = s.event(b, "response.reasoning_text.delta")
	b = appendItemRef(b, s.id, s.open)
	b = append(b, `,"content_index":`...)
	b = appendUint(b, uint64(s.nparts))
	b = append(b, ',')
	b = appendKeyString(b, "delta", rd.GetText())
	return s.end(b)
}

// restart tells a client that opted in that attempt, whose output it was
// shown, failed: an llmrelay.restart event (which the SDKs pass on as an
// event of a type they do not know) says so, and the next attempt's items
// start over from output index 0, with new ids.
func (s *responsesStream) restart(b []byte, w *llmrelayv1.WillRetry, attempt uint32) []byte {
	s.kind, s.inPart, s.next, s.output = itemNone, false, 0, s.output[:0]
	clear(s.calls)
	s.order = s.order[:0]
	b = s.event(b, "llmrelay.restart")
	b = append(b, `,"llmrelay":{"attempt":`...)
	b = appendUint(b, uint64(attempt))
	b = appendRestart(b, w)
	return append(b, "}}\n\n"...)
}

// turn ends the open item: a later turn's text is an item of its own.
func (s *responsesStream) turn(b []byte) []byte {
	return s.closeCalls(s.closeItem(b, "completed"))
}

// ping is an SSE comment: the Responses stream has no keep-alive event.
func (s *responsesStream) ping(b []byte) []byte { return append(b, ": ping\n\n"...) }

// final ends the stream: the open items, then response.completed, or
// response.incomplete with the reason, whose response has the items and
// the call's usage.
func (s *responsesStream) final(b []byte, f *llmrelayv1.Final) ([]byte, error) {
	status, incomplete := responsesStatus(f.GetFinishReason())
	b = s.closeItem(b, status)
	b = s.closeCalls(b)
	// The calls' signatures, known once the calls are whole: a reasoning
	// item each after them, as the reply that is not streamed has them.
	for _, tc := range f.GetMessage().GetToolCalls() {
		if sealed := sealCall(tc); sealed != "" {
			index, id := s.next, itemID(s.r, "rs_", s.serial)
			s.next++
			s.serial++
			b = s.item(b, "response.output_item.added", index, appendReasoningItem(nil, id, "in_progress", "", ""))
			item := appendReasoningItem(nil, id, "completed", "", sealed)
			s.done(item)
			b = s.item(b, "response.output_item.done", index, item)
		}
	}
	b = s.event(b, "response."+status)
	b = append(b, `,"response":`...)
	b = appendResponse(b, s.r, status, s.output, f.GetUsage(), nil, incomplete)
	if s.r.extension {
		b = appendFinalExtension(b, f)
	}
	return append(b, "}\n\n"...), nil
}

// fail ends the stream with response.failed, whose response has the error
// and the items done so far, then an error event, which the SDKs raise:
// it has the members OpenAI's reference gives it (code, message, param)
// and, as OpenAI's API sends it, the error object the SDKs look for.
func (s *responsesStream) fail(b []byte, f failure) []byte {
	b = s.event(b, "response.failed")
	b = append(b, `,"response":`...)
	b = appendResponse(b, s.r, "failed", s.output, nil, &f, "")
	b = append(b, "}\n\n"...)
	_, code := openAIErrorCode(f)
	b = s.event(b, "error")
	b = append(b, ',')
	b = appendKeyString(b, "code", code)
	b = append(b, ',')
	b = appendKeyString(b, "message", f.message)
	b = append(b, `,"param":`...)
	if f.param != "" {
		b = appendString(b, f.param)
	} else {
		b = append(b, "null"...)
	}
	body, _ := openAI{}.errorBody(f, s.r.requestID)
	b = append(b, ',')
	b = append(b, body[1:]...) // {"error":{...}}, without its opening brace
	return append(b, "\n\n"...)
}

// errorBody renders a failure as OpenAI's error object, as the Chat
// Completions door does.
func (responses) errorBody(f failure, requestID string) ([]byte, int) {
	return openAI{}.errorBody(f, requestID)
}

func (responses) models(list *llmrelayv1.ListModelsResponse) ([]byte, error) {
	return openAI{}.models(list)
}

func (responses) model(m *llmrelayv1.Model) ([]byte, error) { return openAI{}.model(m) }
