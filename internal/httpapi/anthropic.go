package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// This file is Anthropic's Messages API (POST /v1/messages, and GET
// /v1/models when asked with an anthropic-version header): a request in
// that format becomes the engine's GenerateRequest, the call's events
// become Anthropic's stream events or one message, and errors become
// Anthropic's error body.

// anthropic is the Anthropic Messages wire format.
type anthropic struct{}

func (anthropic) name() string { return InterfaceAnthropic }

// HeaderAnthropicVersion is the header every Anthropic request carries; it
// also tells GET /v1/models to answer in Anthropic's shape.
const HeaderAnthropicVersion = "Anthropic-Version"

// HeaderAnthropicBeta is the header with which Anthropic's SDKs turn on
// beta features: comma-separated names, in one or more header lines.
const HeaderAnthropicBeta = "Anthropic-Beta"

// headerAnthropicBetaParam names the header in an error.
const headerAnthropicBetaParam = "anthropic-beta"

// maxBetas bounds the beta names one request may carry.
const maxBetas = 32

// anthropicBetas returns the beta names of h's anthropic-beta header
// lines, each once, in their order; an error when one is not a name
// (letters, digits, '.', '_' and '-', at most 128 bytes) or there are more
// than maxBetas. Where they go is the provider's decision
// (provider.WithClientBetas): the anthropic adapter sends them, the others
// ignore them.
func anthropicBetas(h http.Header) ([]string, error) {
	var names []string
	for _, line := range h.Values(HeaderAnthropicBeta) {
		for n := range strings.SplitSeq(line, ",") {
			n = strings.TrimSpace(n)
			if n == "" || slices.Contains(names, n) {
				continue
			}
			if !betaName(n) {
				return nil, fmt.Errorf("%q is not a beta name (letters, digits, '.', '_' and '-', names separated by commas)", n)
			}
			if names = append(names, n); len(names) > maxBetas {
				return nil, fmt.Errorf("more than %d betas", maxBetas)
			}
		}
	}
	return names, nil
}

func betaName(n string) bool {
	if len(n) > 128 {
		return false
	}
	for _, c := range []byte(n) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// anthropicOptions are Messages parameters llmrelay passes to the provider
// as provider_options under their own names, each unless it has its
// default value.
var anthropicOptions = map[string]string{
	"top_k":         "",
	"thinking":      `{"type":"disabled"}`,
	"service_tier":  `"auto"`,
	"cache_control": "",
	"inference_geo": "",
	"speed":         "",
	"mcp_servers":   "",
	"container":     "",
}

// anthropicRefused are Messages parameters whose answer llmrelay's reply
// cannot carry.
var anthropicRefused = map[string]string{
	"context_management": "", "diagnostics": "",
}

// foreignSignature prefixes the signature of reasoning that another
// provider than Anthropic produced, with its format, so that the block,
// sent back in a later turn, returns to llmrelay with its format known:
// "llmrelay/<format>/<signature>". Anthropic's own signatures pass as
// they are.
const foreignSignature = "llmrelay/"

func wireSignature(format, sig string) string {
	if format == provider.FormatAnthropic || format == "" {
		return sig
	}
	return foreignSignature + format + "/" + sig
}

func parseSignature(s string) (format, sig string) {
	rest, ok := strings.CutPrefix(s, foreignSignature)
	if !ok {
		return provider.FormatAnthropic, s
	}
	format, sig, ok = strings.Cut(rest, "/")
	if !ok {
		return provider.FormatAnthropic, s
	}
	return format, sig
}

// callPrefix prefixes the signature of a thinking block that carries
// a tool call's signature rather than reasoning (Gemini's thoughtSignature
// on a functionCall, which Gemini 3 requires back): a tool_use block has
// no member for it, but the SDKs send a thinking block back as it came
// when an application appends a reply's content to its messages. The
// block has no text, and its signature is
// "llmrelay/call/<the call id, base64url>/<the call's signature>".
const callPrefix = foreignSignature + "call/"

// wireCallSignature returns the signature of the thinking block that
// carries tc's signature, empty when tc has none.
func wireCallSignature(tc *llmrelayv1.ToolCall) string {
	if tc.GetSignature() == "" {
		return ""
	}
	return callPrefix + base64.RawURLEncoding.EncodeToString([]byte(tc.GetId())) + "/" + tc.GetSignature()
}

// parseCallSignature reads a signature wireCallSignature wrote: the call
// id and its signature; false for any other.
func parseCallSignature(s string) (call, sig string, ok bool) {
	rest, ok := strings.CutPrefix(s, callPrefix)
	if !ok {
		return "", "", false
	}
	id, sig, ok := strings.Cut(rest, "/")
	b, err := base64.RawURLEncoding.DecodeString(id)
	if !ok || err != nil || len(b) == 0 || sig == "" {
		return "", "", false
	}
	return string(b), sig, true
}

// decode translates a Messages request, and its anthropic-beta header.
func (anthropic) decode(body []byte, h http.Header) (*translated, *failure) {
	fields, err := objectFields(body)
	if err != nil {
		f := requestError("", "the request body "+err.Error())
		return nil, &f
	}
	t := &translated{req: &llmrelayv1.GenerateRequest{}, own: map[string]bool{}, format: anthropic{}, maxTokensField: "max_tokens"}
	if t.betas, err = anthropicBetas(h); err != nil {
		f := requestError(headerAnthropicBetaParam, err.Error())
		return nil, &f
	}
	// The system prompt is the first message, whatever the members' order.
	if raw := fields["system"]; !isNull(raw) {
		text, err := anthropicText(raw)
		if err != nil {
			f := memberError("system", err)
			return nil, &f
		}
		t.req.Messages = append(t.req.Messages, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_SYSTEM, Content: text})
		t.messages = append(t.messages, "system")
	}
	delete(fields, "system")
	if f := t.decodeFields(fields, t.anthropicField); f != nil {
		return nil, f
	}
	return t, nil
}

// countMembers are the members of a token count request (POST
// /v1/messages/count_tokens, the SDKs' messages.count_tokens): a Messages
// request's input. Anthropic refuses any other (max_tokens, stream,
// sampling, metadata) as an extra input, and so does the door.
var countMembers = map[string]bool{
	"model": true, "messages": true, "system": true, "tools": true, "tool_choice": true,
	"thinking": true, "output_config": true, "output_format": true, "cache_control": true,
	"speed": true, "mcp_servers": true, "context_management": true,
}

// decodeCount translates a token count request, and its anthropic-beta
// header, into the Generate request whose input is counted: a Messages
// request of countMembers only, with its model and messages, which
// Anthropic requires ("Field required").
func (a anthropic) decodeCount(body []byte, h http.Header) (*translated, *failure) {
	fields, err := objectFields(body)
	if err != nil {
		f := requestError("", "the request body "+err.Error())
		return nil, &f
	}
	for _, key := range sortedKeys(fields) {
		if !countMembers[key] {
			f := requestError(key, "Extra inputs are not permitted")
			return nil, &f
		}
	}
	for _, key := range []string{"messages", "model"} {
		if isNull(fields[key]) {
			f := requestError(key, "Field required")
			return nil, &f
		}
	}
	return a.decode(body, h)
}

// tokenCount renders a token count's answer, as Anthropic's:
// {"input_tokens": N}.
func (anthropic) tokenCount(n int64) []byte {
	b := append(make([]byte, 0, 32), `{"input_tokens":`...)
	return append(strconv.AppendInt(b, n, 10), '}')
}

func (t *translated) anthropicField(key string, raw json.RawMessage) error {
	req := t.req
	switch key {
	case "messages":
		return t.anthropicMessages(raw)
	case "stop_sequences":
		var stop []string
		if err := json.Unmarshal(raw, &stop); err != nil {
			return errors.New("must be a list of strings")
		}
		generation(req).Stop = stop
	case "metadata":
		var md struct {
			UserID string `json:"user_id"`
		}
		if err := decodeStrict(raw, &md); err != nil {
			return err
		}
		if md.UserID != "" {
			labels(req)["user_id"] = md.UserID
		}
	case "tools":
		return t.anthropicTools(raw)
	case "tool_choice":
		return anthropicToolChoice(req, raw)
	case "output_config":
		return t.anthropicOutputConfig(raw)
	case "output_format":
		// The structured-outputs beta's spelling of output_config.format.
		return anthropicFormat(req, raw)
	default:
		if handled, err := t.sharedField(key, raw); handled {
			return err
		}
		return t.otherField(key, raw, anthropicOptions, anthropicRefused, "Extra inputs are not permitted")
	}
	return nil
}

// anthropicText reads a string or a list of text blocks (the system
// prompt), joined by newlines.
func anthropicText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", errors.New("must be a string or a list of text blocks")
	}
	var b strings.Builder
	for i, braw := range blocks {
		var blk block
		// The type first: an image block's source is no text block's
		// unknown member, but a block llmrelay does not take here.
		if err := json.Unmarshal(braw, &blk); err != nil {
			return "", inParam("["+strconv.Itoa(i)+"]", jsonProblem(err))
		}
		if blk.Type != "text" {
			return "", &paramError{"[" + strconv.Itoa(i) + "].type", strconv.Quote(blk.Type) + " blocks are not supported here by llmrelay: only text"}
		}
		if err := decodeStrict(braw, &blk); err != nil {
			return "", inParam("["+strconv.Itoa(i)+"]", err)
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(blk.Text)
	}
	return b.String(), nil
}

// block is any content block of a Messages request.
type block struct {
	Type string `json:"type"`
	// text
	Text      string          `json:"text"`
	Citations json.RawMessage `json:"citations"` // accepted on text sent back; not forwarded
	// tool_use
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result (is_error: the tool message's tool_error)
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	// thinking, redacted_thinking
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	// image
	Source json.RawMessage `json:"source"`
	// a prompt-caching hint, accepted and not forwarded
	CacheControl json.RawMessage `json:"cache_control"`
}

// imageSource is an image block's source: base64 (media_type, data) or
// url.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

// anthropicImage reads an image block's source: the image inline (base64)
// or at a URL. A file source (the Files API's file_id) is refused: the
// file is at Anthropic, which other providers cannot reach.
func anthropicImage(raw json.RawMessage) (*llmrelayv1.Image, error) {
	var src imageSource
	if isNull(raw) {
		return nil, &paramError{"", "is required"}
	}
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, jsonProblem(err)
	}
	if src.Type != "base64" && src.Type != "url" {
		return nil, &paramError{".type", strconv.Quote(src.Type) + " image sources are not supported by llmrelay: use base64 or url"}
	}
	if err := decodeStrict(raw, &src); err != nil {
		return nil, err
	}
	if src.Type == "url" {
		if src.URL == "" {
			return nil, &paramError{".url", "is required"}
		}
		return &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: src.URL}}, nil
	}
	img, err := inlineImage(src.MediaType, src.Data)
	if err != nil {
		return nil, inParam(".data", err)
	}
	return img, nil
}

// anthropicToolResult reads a tool_result's content: a string, or a list
// of text and image blocks (a computer-use tool's screenshot), kept in
// order as a user message's are (userContent: with images, the tool
// message's parts; without, its text blocks joined by newlines). Other
// blocks (document, search_result) are refused, naming the block.
func anthropicToolResult(raw json.RawMessage) (userContent, error) {
	var content userContent
	var s string
	if json.Unmarshal(raw, &s) == nil {
		content.text(s)
		return content, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return content, errors.New("must be a string or a list of text and image blocks")
	}
	for i, braw := range blocks {
		at := "[" + strconv.Itoa(i) + "]"
		var b block
		// The type first, then the block's members, strictly.
		if err := json.Unmarshal(braw, &b); err != nil {
			return content, inParam(at, jsonProblem(err))
		}
		if b.Type != "text" && b.Type != "image" {
			return content, &paramError{at + ".type", strconv.Quote(b.Type) + " blocks are not supported in a tool_result by llmrelay: only text and image"}
		}
		if err := decodeStrict(braw, &b); err != nil {
			return content, inParam(at, err)
		}
		if b.Type == "text" {
			content.text(b.Text)
			continue
		}
		img, err := anthropicImage(b.Source)
		if err != nil {
			return content, inParam(at+".source", err)
		}
		content.image(img)
	}
	return content, nil
}

func (t *translated) anthropicMessages(raw json.RawMessage) error {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := decodeStrict(raw, &msgs); err != nil {
		return err
	}
	for i, m := range msgs {
		at := "[" + strconv.Itoa(i) + "]"
		if err := t.anthropicMessage(m.Role, m.Content, "messages"+at); err != nil {
			return inParam(at, err)
		}
	}
	return nil
}

// blockTypes are the content blocks llmrelay translates, by role; an
// assistant message may also carry the blocks of Anthropic's server tools
// (isProviderTool).
var blockTypes = map[llmrelayv1.Role]map[string]bool{
	llmrelayv1.Role_ROLE_USER:      {"text": true, "image": true, "tool_result": true},
	llmrelayv1.Role_ROLE_ASSISTANT: {"text": true, "tool_use": true, "thinking": true, "redacted_thinking": true},
}

// isProviderTool reports whether a block type is one of a tool Anthropic
// ran itself: server_tool_use, mcp_tool_use and their *_tool_result.
func isProviderTool(typ string) bool {
	return typ == "server_tool_use" || typ == "mcp_tool_use" || strings.HasSuffix(typ, "_tool_result")
}

// anthropicMessage translates one message: a user message's tool_result
// blocks each become a tool message, and its text and images a user
// message after them (text blocks joined by newlines; with images, the
// blocks in order, userContent); an assistant message's blocks
// become one assistant message, their order kept in its parts when it is
// not the usual one.
func (t *translated) anthropicMessage(role string, content json.RawMessage, path string) error {
	var r llmrelayv1.Role
	switch role {
	case "user":
		r = llmrelayv1.Role_ROLE_USER
	case "assistant":
		r = llmrelayv1.Role_ROLE_ASSISTANT
	default:
		return &paramError{".role", "must be user or assistant"}
	}
	var s string
	if json.Unmarshal(content, &s) == nil {
		t.add(&llmrelayv1.Message{Role: r, Content: s}, path)
		return nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil {
		return &paramError{".content", "must be a string or a list of content blocks"}
	}
	m := &llmrelayv1.Message{Role: r}
	var text []string
	var user userContent // a user message's text and images, in order
	// signatures are the tool calls' signatures the message's thinking
	// blocks carried (wireCallSignature), by call id; one whose call is
	// not in the message is dropped.
	var signatures map[string]string
	for j, braw := range blocks {
		at := ".content[" + strconv.Itoa(j) + "]"
		var b block
		if err := json.Unmarshal(braw, &b); err != nil {
			return inParam(at, jsonProblem(err))
		}
		if r == llmrelayv1.Role_ROLE_ASSISTANT && isProviderTool(b.Type) {
			pt, err := providerToolOf(braw)
			if err != nil {
				return inParam(at, err)
			}
			m.Parts = append(m.Parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_ProviderTool{ProviderTool: uint32(len(m.ProviderTools))}})
			m.ProviderTools = append(m.ProviderTools, pt)
			continue
		}
		if !blockTypes[r][b.Type] {
			return &paramError{at + ".type", strconv.Quote(b.Type) + " blocks are not supported in " + role + " messages by llmrelay"}
		}
		if err := decodeStrict(braw, &b); err != nil {
			return inParam(at, err)
		}
		switch b.Type {
		case "text":
			text = append(text, b.Text)
			user.text(b.Text)
			m.Parts = append(m.Parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_Text{Text: b.Text}})
		case "image":
			img, err := anthropicImage(b.Source)
			if err != nil {
				return inParam(at+".source", err)
			}
			user.image(img)
		case "tool_result":
			result := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: b.ToolUseID, ToolError: b.IsError}
			if !isNull(b.Content) {
				content, err := anthropicToolResult(b.Content)
				if err != nil {
					return inParam(at+".content", err)
				}
				content.fill(result)
			}
			t.add(result, path+at)
		case "tool_use":
			args := "{}"
			if !isNull(b.Input) {
				args = string(b.Input)
			}
			m.Parts = append(m.Parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_ToolCall{ToolCall: uint32(len(m.ToolCalls))}})
			m.ToolCalls = append(m.ToolCalls, &llmrelayv1.ToolCall{Id: b.ID, Name: b.Name, Arguments: args})
		case "thinking", "redacted_thinking":
			if call, sig, ok := parseCallSignature(b.Signature); ok && b.Type == "thinking" {
				// A tool call's signature, not a reasoning block: it goes
				// on its call.
				if signatures == nil {
					signatures = map[string]string{}
				}
				signatures[call] = sig
				continue
			}
			rs := &llmrelayv1.Reasoning{}
			if b.Type == "thinking" {
				rs.Format, rs.Signature = parseSignature(b.Signature)
				rs.Text = b.Thinking
			} else {
				rs.Format, rs.Redacted = parseSignature(b.Data)
			}
			m.Parts = append(m.Parts, &llmrelayv1.Part{Part: &llmrelayv1.Part_Reasoning{Reasoning: uint32(len(m.Reasoning))}})
			m.Reasoning = append(m.Reasoning, rs)
		}
	}
	for _, tc := range m.ToolCalls {
		tc.Signature = signatures[tc.GetId()]
	}
	if r == llmrelayv1.Role_ROLE_ASSISTANT {
		// The parts' text is the content, block by block.
		m.Content = strings.Join(text, "")
		if usualOrder(m.Parts) {
			m.Parts = nil
		}
	} else {
		m.Parts = nil
		user.fill(m)
	}
	if m.Content != "" || len(m.Parts) > 0 || len(m.ToolCalls) > 0 || len(m.Reasoning) > 0 || len(m.ProviderTools) > 0 || len(blocks) == 0 {
		t.add(m, path)
	}
	return nil
}

// usualOrder reports whether an assistant message's parts are in the
// order a message without parts means: its reasoning blocks, one text
// block, its provider tool blocks, its tool calls.
func usualOrder(parts []*llmrelayv1.Part) bool {
	rank, texts := 0, 0
	for _, p := range parts {
		var r int
		switch p.GetPart().(type) {
		case *llmrelayv1.Part_Reasoning:
			r = 0
		case *llmrelayv1.Part_Text:
			r, texts = 1, texts+1
		case *llmrelayv1.Part_ProviderTool:
			r = 2
		default:
			r = 3
		}
		if r < rank || texts > 1 {
			return false
		}
		rank = r
	}
	return true
}

// providerToolOf reads the block of a tool Anthropic ran itself, kept as
// llmrelay carries such blocks: its type, id, name, input and content, and
// its other members as extra.
func providerToolOf(raw json.RawMessage) (*llmrelayv1.ProviderToolBlock, error) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	pt := &llmrelayv1.ProviderToolBlock{Format: provider.FormatAnthropic}
	take := func(key string) json.RawMessage {
		v := fields[key]
		delete(fields, key)
		return v
	}
	for key, dst := range map[string]*string{"type": &pt.Kind, "id": &pt.Id, "tool_use_id": &pt.Id, "name": &pt.Name} {
		if v := take(key); !isNull(v) {
			if err := json.Unmarshal(v, dst); err != nil {
				return nil, &paramError{"." + key, "must be a string"}
			}
		}
	}
	if v := take("input"); !isNull(v) {
		pt.Input = string(v)
	}
	if v := take("content"); !isNull(v) {
		pt.Result = string(v)
	}
	if len(fields) > 0 {
		extra, err := json.Marshal(fields)
		if err != nil {
			return nil, err
		}
		pt.Extra = string(extra)
	}
	return pt, nil
}

// add appends a message translated from the wire member at path.
func (t *translated) add(m *llmrelayv1.Message, path string) {
	t.req.Messages = append(t.req.Messages, m)
	t.messages = append(t.messages, path)
}

// anthropicTools translates tools: custom tools are the request's tools;
// Anthropic's server tools (a versioned type, such as
// web_search_20250305) go, as they are, to provider_options.server_tools,
// which the anthropic adapter sends with them (docs/providers.md).
func (t *translated) anthropicTools(raw json.RawMessage) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return errors.New("must be a list of tools")
	}
	var server []any
	for i, traw := range raws {
		at := "[" + strconv.Itoa(i) + "]"
		var tl struct {
			Type         string          `json:"type"`
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl json.RawMessage `json:"cache_control"`
			// Hints about how Anthropic runs or streams a tool, accepted
			// and not forwarded.
			Strict              json.RawMessage `json:"strict"`
			EagerInputStreaming json.RawMessage `json:"eager_input_streaming"`
			DeferLoading        json.RawMessage `json:"defer_loading"`
		}
		if err := json.Unmarshal(traw, &tl); err != nil {
			return inParam(at, jsonProblem(err))
		}
		if tl.Type != "" && tl.Type != "custom" {
			var def any
			if err := json.Unmarshal(traw, &def); err != nil {
				return inParam(at, jsonProblem(err))
			}
			server = append(server, def)
			continue
		}
		if err := decodeStrict(traw, &tl); err != nil {
			return inParam(at, err)
		}
		tool := &llmrelayv1.Tool{Name: tl.Name, Description: tl.Description}
		if !isNull(tl.InputSchema) {
			s, err := structOf(tl.InputSchema)
			if err != nil {
				return inParam(at+".input_schema", err)
			}
			tool.Parameters = s
		}
		t.req.Tools = append(t.req.Tools, tool)
	}
	if len(server) > 0 {
		v, err := structpb.NewList(server)
		if err != nil {
			return err
		}
		t.own[serverToolsOption] = true
		if t.req.ProviderOptions == nil {
			t.req.ProviderOptions = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		}
		t.req.ProviderOptions.Fields[serverToolsOption] = structpb.NewListValue(v)
	}
	return nil
}

// serverToolsOption is the provider option of Anthropic's server tools.
const serverToolsOption = "server_tools"

var anthropicToolModes = map[string]llmrelayv1.ToolChoiceMode{
	"auto": llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO,
	"any":  llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED,
	"none": llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE,
	"tool": llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL,
}

func anthropicToolChoice(req *llmrelayv1.GenerateRequest, raw json.RawMessage) error {
	var tc struct {
		Type                   string `json:"type"`
		Name                   string `json:"name"`
		DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
	}
	if err := decodeStrict(raw, &tc); err != nil {
		return err
	}
	mode, ok := anthropicToolModes[tc.Type]
	if !ok {
		return &paramError{".type", "must be auto, any, tool or none"}
	}
	req.ToolChoice = &llmrelayv1.ToolChoice{Mode: mode, Name: tc.Name, DisableParallelToolCalls: tc.DisableParallelToolUse}
	return nil
}

// anthropicOutputConfig translates output_config: its format is
// llmrelay's structured output; the rest (effort) goes to the provider.
func (t *translated) anthropicOutputConfig(raw json.RawMessage) error {
	fields, err := objectFields(raw)
	if err != nil {
		return err
	}
	rest := map[string]*structpb.Value{}
	for k, v := range fields {
		if k == "format" {
			if err := anthropicFormat(t.req, v); err != nil {
				return inParam(".format", err)
			}
			continue
		}
		if rest[k], err = valueOf(v); err != nil {
			return inParam("."+k, err)
		}
	}
	if len(rest) > 0 {
		t.own["output_config"] = true
		if t.req.ProviderOptions == nil {
			t.req.ProviderOptions = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		}
		t.req.ProviderOptions.Fields["output_config"] = structpb.NewStructValue(&structpb.Struct{Fields: rest})
	}
	return nil
}

func anthropicFormat(req *llmrelayv1.GenerateRequest, raw json.RawMessage) error {
	var f struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}
	if err := decodeStrict(raw, &f); err != nil {
		return err
	}
	if f.Type != "json_schema" {
		return &paramError{".type", "must be json_schema"}
	}
	rf := &llmrelayv1.ResponseFormat{}
	if !isNull(f.Schema) {
		s, err := structOf(f.Schema)
		if err != nil {
			return inParam(".schema", err)
		}
		rf.JsonSchema = s
	}
	req.ResponseFormat = rf
	return nil
}

// anthropicParam names a field of the engine's request as the client
// wrote it in a Messages request.
func (t *translated) anthropicParam(field string) string {
	head, idx, rest := splitField(field)
	switch head {
	case "metadata":
		// The one label the format sets: metadata.user_id's.
		if idx == `["user_id"]` {
			return "metadata.user_id"
		}
	case "generation":
		switch {
		case rest == ".max_output_tokens":
			return "max_tokens"
		case strings.HasPrefix(rest, ".stop"):
			return "stop_sequences"
		}
		return strings.TrimPrefix(rest, ".")
	case "messages":
		i, err := strconv.Atoi(strings.Trim(idx, "[]"))
		if err != nil || i < 0 || i >= len(t.messages) {
			return field
		}
		return t.messages[i]
	case "tools":
		return head + idx + strings.Replace(rest, ".parameters", ".input_schema", 1)
	case "provider_options":
		if strings.HasPrefix(rest, "."+serverToolsOption) {
			return "tools" // one of Anthropic's server tools
		}
	case "tool_choice":
		if rest == ".disable_parallel_tool_calls" {
			return "tool_choice.disable_parallel_tool_use"
		}
		return field
	case "response_format":
		return "output_config.format.schema"
	}
	return t.commonParam(field)
}

// The reply.

type anthropicUsage struct {
	InputTokens              uint64 `json:"input_tokens"`
	OutputTokens             uint64 `json:"output_tokens"`
	CacheCreationInputTokens uint64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     uint64 `json:"cache_read_input_tokens"`
}

// anthropicUsageOf counts as Anthropic does: input_tokens without the
// cached and cache-writing ones, which llmrelay's input_tokens include.
func anthropicUsageOf(u *llmrelayv1.Usage) anthropicUsage {
	in := u.GetInputTokens()
	cached := u.GetCachedInputTokens() + u.GetCacheCreationInputTokens()
	if cached > in {
		cached = in
	}
	return anthropicUsage{
		InputTokens: in - cached, OutputTokens: u.GetOutputTokens(),
		CacheCreationInputTokens: u.GetCacheCreationInputTokens(), CacheReadInputTokens: u.GetCachedInputTokens(),
	}
}

var anthropicStopReasons = map[llmrelayv1.FinishReason]string{
	llmrelayv1.FinishReason_FINISH_REASON_STOP:           "end_turn",
	llmrelayv1.FinishReason_FINISH_REASON_LENGTH:         "max_tokens",
	llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS:     "tool_use",
	llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER: "refusal",
	llmrelayv1.FinishReason_FINISH_REASON_REFUSAL:        "refusal",
	llmrelayv1.FinishReason_FINISH_REASON_PAUSED:         "pause_turn",
	// The call reached max_tool_turns: the answer is unfinished.
	llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS: "max_tokens",
}

// anthropicStop returns the Final's stop_reason and stop_sequence (nil for
// null): "stop_sequence" and the sequence when the Final names the stop
// sequence that ended the reply, else the finish reason's stop reason.
func anthropicStop(f *llmrelayv1.Final) (string, *string) {
	if f.GetFinishReason() == llmrelayv1.FinishReason_FINISH_REASON_STOP && f.GetStopSequence() != "" {
		seq := f.GetStopSequence()
		return "stop_sequence", &seq
	}
	if s, ok := anthropicStopReasons[f.GetFinishReason()]; ok {
		return s, nil
	}
	return "end_turn", nil
}

// replyBlock is a content block of a reply.
type replyBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
}

// reply renders a Final as one message, its blocks in the message's
// order (its parts).
func (anthropic) reply(r *replyInfo, f *llmrelayv1.Final) ([]byte, error) {
	m := f.GetMessage()
	content := []json.RawMessage{}
	add := func(v any) error {
		b, err := json.Marshal(v)
		content = append(content, b)
		return err
	}
	reasoning := func(rs *llmrelayv1.Reasoning) error {
		if rs.GetRedacted() != "" {
			return add(replyBlock{Type: "redacted_thinking", Data: wireSignature(rs.GetFormat(), rs.GetRedacted())})
		}
		text, sig := rs.GetText(), wireSignature(rs.GetFormat(), rs.GetSignature())
		return add(replyBlock{Type: "thinking", Thinking: &text, Signature: &sig})
	}
	text := func(s string) error { return add(replyBlock{Type: "text", Text: &s}) }
	toolCall := func(tc *llmrelayv1.ToolCall) error {
		if sig := wireCallSignature(tc); sig != "" {
			// The call's signature, in a thinking block before it.
			empty := ""
			if err := add(replyBlock{Type: "thinking", Thinking: &empty, Signature: &sig}); err != nil {
				return err
			}
		}
		return add(replyBlock{Type: "tool_use", ID: tc.GetId(), Name: tc.GetName(), Input: toolInput(tc.GetArguments())})
	}
	providerTool := func(pt *llmrelayv1.ProviderToolBlock) error {
		if pt.GetFormat() != provider.FormatAnthropic {
			return nil // another provider's block: Anthropic's format has no place for it
		}
		b, err := providerToolBlock(pt)
		content = append(content, b)
		return err
	}
	var err error
	if parts := m.GetParts(); len(parts) > 0 {
		for _, p := range parts {
			switch p := p.GetPart().(type) {
			case *llmrelayv1.Part_Text:
				err = errors.Join(err, text(p.Text))
			case *llmrelayv1.Part_Reasoning:
				if int(p.Reasoning) < len(m.GetReasoning()) {
					err = errors.Join(err, reasoning(m.GetReasoning()[p.Reasoning]))
				}
			case *llmrelayv1.Part_ToolCall:
				if int(p.ToolCall) < len(m.GetToolCalls()) {
					err = errors.Join(err, toolCall(m.GetToolCalls()[p.ToolCall]))
				}
			case *llmrelayv1.Part_ProviderTool:
				if int(p.ProviderTool) < len(m.GetProviderTools()) {
					err = errors.Join(err, providerTool(m.GetProviderTools()[p.ProviderTool]))
				}
			}
		}
	} else {
		for _, rs := range m.GetReasoning() {
			err = errors.Join(err, reasoning(rs))
		}
		if c := m.GetContent(); c != "" {
			err = errors.Join(err, text(c))
		}
		for _, pt := range m.GetProviderTools() {
			err = errors.Join(err, providerTool(pt))
		}
		for _, tc := range m.GetToolCalls() {
			err = errors.Join(err, toolCall(tc))
		}
	}
	if rf := m.GetRefusal(); rf != "" {
		err = errors.Join(err, text(rf))
	}
	if err != nil {
		return nil, err
	}
	stopReason, stopSequence := anthropicStop(f)
	return json.Marshal(struct {
		ID           string            `json:"id"`
		Type         string            `json:"type"`
		Role         string            `json:"role"`
		Model        string            `json:"model"`
		Content      []json.RawMessage `json:"content"`
		StopReason   string            `json:"stop_reason"`
		StopSequence *string           `json:"stop_sequence"`
		Usage        anthropicUsage    `json:"usage"`
	}{
		ID: "msg_" + r.requestID, Type: "message", Role: "assistant", Model: r.model, Content: content,
		StopReason: stopReason, StopSequence: stopSequence, Usage: anthropicUsageOf(f.GetUsage()),
	})
}

// providerToolBlock renders the block of a tool Anthropic ran itself as it
// came: its type, its id (tool_use_id for a result), name, input,
// content and other members.
func providerToolBlock(pt *llmrelayv1.ProviderToolBlock) (json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if pt.GetExtra() != "" {
		if err := json.Unmarshal([]byte(pt.GetExtra()), &out); err != nil {
			return nil, err
		}
	}
	str := func(s string) json.RawMessage { return appendString(nil, s) }
	out["type"] = str(pt.GetKind())
	idKey := "id"
	if strings.HasSuffix(pt.GetKind(), "_tool_result") {
		idKey = "tool_use_id"
	}
	if pt.GetId() != "" {
		out[idKey] = str(pt.GetId())
	}
	if pt.GetName() != "" {
		out["name"] = str(pt.GetName())
	}
	if pt.GetInput() != "" {
		out["input"] = json.RawMessage(pt.GetInput())
	}
	if pt.GetResult() != "" {
		out["content"] = json.RawMessage(pt.GetResult())
	}
	return json.Marshal(out)
}

// toolInput is a tool call's arguments as a tool_use block's input: the
// arguments when they are a JSON object, else an empty object (the model
// wrote something else, which the stream showed as it came).
func toolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	return json.RawMessage("{}")
}

// blockKind is what an open content block of a stream holds.
type blockKind uint8

const (
	blockNone blockKind = iota
	blockText
	blockRefusal // a text block, of the refusal
	blockThinking
	blockRedacted
	blockTool
	blockCallSignature // a thinking block with a tool call's signature
)

// messagesStream writes a reply as Anthropic's stream events. Each kind of
// delta goes to a content block of its kind; a delta of another kind, or
// another tool call or reasoning block, closes the open block and starts
// the next one. One block is open at a time, as in Anthropic's stream:
// while a tool call's arguments are not whole JSON, the deltas of the
// calls after it wait (held) until its block can close.
type messagesStream struct {
	r *replyInfo
	// next is the index of the next block; open the open block's (valid
	// when kind is not blockNone), of kind, for the delta index key.
	next, open int
	kind       blockKind
	key        uint32
	// format and signed: the open thinking block's reasoning format, and
	// whether its signature was sent.
	format string
	signed bool
	// tools maps tool calls, by their index, to their blocks.
	tools map[uint32]toolBlock
	// args reads the open tool block's arguments so far; held are the tool
	// call deltas that wait for it to close.
	args jsonScan
	held heldDeltas
	// replayed counts the held deltas replayed, for the test that holds
	// it to one replay of each.
	replayed int
}

// heldDeltas are the tool call deltas that wait for the open tool block
// to close, in the order they came. A release replays them from the first
// that waits; once the replay opens a call's block, the deltas of the
// other calls wait where they are, and the replay steps from one delta of
// the open call to its next. So each delta is copied once, when it comes,
// and replayed once (twice, the open call's signature that comes with one
// of its fragments), however many calls close before it: replaying and
// holding again every delta that waited, at each call that closed, made
// an upstream that interleaves a thousand calls' fragments cost seconds
// of a core and gigabytes of copies for one reply.
type heldDeltas struct {
	list []heldDelta
	// first is the place in list of the first delta that waits (past
	// those replayed), len(list) when none does.
	first int
	// replaying: a release replays the delta at place at.
	replaying bool
	at        int
	// last is the place of each call's last delta, to link the next to it.
	last map[uint32]int
}

// heldDelta is a tool call delta that waits for the open tool block to
// close, with its attempt.
type heldDelta struct {
	// call is nil once replayed.
	call    *llmrelayv1.ToolCallDelta
	attempt uint32
	// next is how far ahead in the list the call's next delta is, 0 while
	// there is none.
	next int
}

// waits reports whether a delta waits ahead of the one written now: any,
// for a delta that comes; one before it, for a delta a release replays
// (which, taken out to be replayed, waits again when the open call's
// signature came with it).
func (h *heldDeltas) waits() bool {
	first := h.firstWaiting()
	return first < len(h.list) && (!h.replaying || first <= h.at)
}

// firstWaiting returns the place of the first delta that waits, len(list)
// when none does.
func (h *heldDeltas) firstWaiting() int {
	for h.first < len(h.list) && h.list[h.first].call == nil {
		h.first++
	}
	return h.first
}

// hold keeps tc, which it owns, to wait: the delta a release replays
// waits again where it was, one that comes waits last.
func (h *heldDeltas) hold(tc *llmrelayv1.ToolCallDelta, attempt uint32) {
	if h.replaying {
		h.list[h.at].call = tc
		h.first = min(h.first, h.at)
		return
	}
	place := len(h.list)
	if last, ok := h.last[tc.GetIndex()]; ok {
		h.list[last].next = place - last
	}
	if h.last == nil {
		h.last = map[uint32]int{}
	}
	h.last[tc.GetIndex()] = place
	h.list = append(h.list, heldDelta{call: tc, attempt: attempt})
}

// after returns the place of the next delta of the call of the delta at
// place, len(list) when none has come. It waits: a call's deltas are
// replayed in the order they came.
func (h *heldDeltas) after(place int) int {
	if next := h.list[place].next; next != 0 {
		return place + next
	}
	return len(h.list)
}

// compact drops the deltas replayed before the first that waits once
// they are half the list, so that a reply that keeps deltas waiting does
// not keep all those it replayed.
func (h *heldDeltas) compact() {
	if h.firstWaiting() < len(h.list)-h.first {
		return
	}
	n := copy(h.list, h.list[h.first:])
	clear(h.list[n:])
	h.list = h.list[:n]
	for call, last := range h.last {
		if last < h.first {
			delete(h.last, call)
		} else {
			h.last[call] = last - h.first
		}
	}
	h.first = 0
}

// reset drops the deltas that wait.
func (h *heldDeltas) reset() {
	clear(h.list)
	h.list = h.list[:0]
	h.first = 0
	clear(h.last)
}

// toolBlock is a streamed tool call's block: its index, and the call's id.
type toolBlock struct {
	index int
	id    string
}

func (anthropic) stream(r *replyInfo) streamEncoder {
	return &messagesStream{r: r, tools: map[uint32]toolBlock{}}
}

// start writes message_start, whose usage is, as in Anthropic's own
// stream, the prompt's: the input side of early, as Anthropic counts it
// (0 when the provider reported none before the reply started). Its
// output_tokens is 0: the output is message_delta's, which has the call's
// whole usage, so a client that adds the two events' counts (LangChain)
// counts the output once, and one that takes message_delta's (the SDKs)
// has the same.
func (s *messagesStream) start(b []byte, early *llmrelayv1.Usage) []byte {
	u := anthropicUsageOf(early)
	b = appendEvent(b, "message_start")
	b = append(b, `data: {"type":"message_start","message":{"id":"msg_`...)
	b = append(b, s.r.requestID...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = appendString(b, s.r.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = appendUint(b, u.InputTokens)
	b = append(b, `,"output_tokens":0,"cache_creation_input_tokens":`...)
	b = appendUint(b, u.CacheCreationInputTokens)
	b = append(b, `,"cache_read_input_tokens":`...)
	b = appendUint(b, u.CacheReadInputTokens)
	b = append(b, "}}}\n\n"...)
	return b
}

// end appends an event's llmrelay member, when the client opted in, and
// closes the event.
func (s *messagesStream) end(b []byte, attempt uint32) []byte {
	if s.r.extension {
		b = append(b, `,"llmrelay":{"attempt":`...)
		b = appendUint(b, uint64(attempt))
		b = append(b, '}')
	}
	return append(b, "}\n\n"...)
}

// closeBlock ends the open block, if any, and writes out the tool calls
// held behind it, each in a block of its own that it ends too.
func (s *messagesStream) closeBlock(b []byte) []byte {
	for s.held.waits() {
		b = s.release(b)
	}
	return s.stopBlock(b)
}

// release ends the open block and writes the tool call deltas held behind
// it, in order: the last call they start stays open for the fragments to
// come, and the deltas of calls that start while its arguments are not
// whole wait again.
func (s *messagesStream) release(b []byte) []byte {
	b = s.stopBlock(b)
	h := &s.held
	for place := h.firstWaiting(); place < len(h.list); {
		d := h.list[place]
		h.list[place].call = nil
		h.replaying, h.at = true, place
		s.replayed++
		var whole bool
		b, whole = s.writeToolDelta(b, d.call, d.attempt)
		switch {
		case whole:
			// The call the replay opened is whole, with deltas waiting
			// before this one: its block ends, and the replay goes on
			// from the first that waits.
			b = s.stopBlock(b)
			place = h.firstWaiting()
		case s.kind == blockTool && (h.waits() || !s.args.whole()):
			// The call this delta opened, or went to, stays open: the
			// deltas of the others wait, and its next is the next to go.
			place = h.after(place)
		default:
			// Nothing waits before this delta: the next that waits goes.
			place = h.firstWaiting()
		}
	}
	h.replaying = false
	h.compact()
	return b
}

// stopBlock writes the open block's content_block_stop, if a block is
// open.
func (s *messagesStream) stopBlock(b []byte) []byte {
	if s.kind == blockNone {
		return b
	}
	if s.kind == blockThinking && !s.signed && s.format != provider.FormatAnthropic {
		// An unsigned format still travels with the block.
		b = s.blockDelta(b, "signature_delta")
		b = appendKeyString(b, "signature", wireSignature(s.format, ""))
		b = append(b, "}}\n\n"...)
	}
	b = appendEvent(b, "content_block_stop")
	b = append(b, `data: {"type":"content_block_stop","index":`...)
	b = strconv.AppendInt(b, int64(s.open), 10)
	b = append(b, "}\n\n"...)
	s.kind = blockNone
	return b
}

// startBlock closes the open block and starts the next, up to its
// content_block's members after the type.
func (s *messagesStream) startBlock(b []byte, kind blockKind, key uint32, typ string) []byte {
	b = s.closeBlock(b)
	s.open, s.kind, s.key = s.next, kind, key
	s.next++
	s.args.reset()
	b = appendEvent(b, "content_block_start")
	b = append(b, `data: {"type":"content_block_start","index":`...)
	b = strconv.AppendInt(b, int64(s.open), 10)
	b = append(b, `,"content_block":{"type":"`...)
	b = append(b, typ...)
	return append(b, '"')
}

// blockDelta opens a content_block_delta of the open block, up to its
// delta's members after the type.
func (s *messagesStream) blockDelta(b []byte, typ string) []byte {
	return s.deltaAt(b, s.open, typ)
}

func (s *messagesStream) deltaAt(b []byte, index int, typ string) []byte {
	b = appendEvent(b, "content_block_delta")
	b = append(b, `data: {"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"delta":{"type":"`...)
	b = append(b, typ...)
	return append(b, `",`...)
}

func (s *messagesStream) delta(b []byte, d *llmrelayv1.Delta, attempt uint32) []byte {
	switch {
	case d.GetText() != "" || d.GetRefusal() != "":
		// A refusal is text in this format, in a block of its own as in a
		// whole reply; the stop reason says refusal.
		kind := blockText
		if d.GetText() == "" {
			kind = blockRefusal
		}
		if s.kind != kind {
			b = s.startBlock(b, kind, 0, "text")
			b = append(b, `,"text":""}`...)
			b = s.end(b, attempt)
		}
		b = s.blockDelta(b, "text_delta")
		b = appendKeyString(b, "text", d.GetText()+d.GetRefusal())
		b = append(b, '}')
		return s.end(b, attempt)
	case d.GetToolCall() != nil:
		return s.toolDelta(b, d.GetToolCall(), attempt)
	case d.GetReasoning() != nil:
		return s.reasoningDelta(b, d.GetReasoning(), attempt)
	}
	return b
}

// toolDelta writes a tool call delta that comes, and the deltas held
// behind the open call when it makes the call's arguments whole.
func (s *messagesStream) toolDelta(b []byte, tc *llmrelayv1.ToolCallDelta, attempt uint32) []byte {
	b, whole := s.writeToolDelta(b, tc, attempt)
	if whole {
		// The open call's arguments are whole: the calls held behind it
		// go on.
		b = s.release(b)
	}
	return b
}

// writeToolDelta writes a tool call delta, or holds it behind the open
// tool block, and reports whether it made the open call's arguments whole
// with deltas waiting for its block to close.
func (s *messagesStream) writeToolDelta(b []byte, tc *llmrelayv1.ToolCallDelta, attempt uint32) ([]byte, bool) {
	// Some OpenAI-compatible servers interleave the fragments of parallel
	// calls: both start, then their arguments come in turns. Anthropic's
	// stream has one block open at a time and no delta for a block after
	// its content_block_stop, so while the open call's arguments are not
	// whole JSON, what would start another block waits for its block to
	// close. The open call's own fragments go straight on, read once by
	// s.args as they pass.
	if s.kind == blockTool && (tc.GetIndex() != s.key || tc.GetSignature() != "") && (s.held.waits() || !s.args.whole()) {
		if tc.GetIndex() != s.key {
			s.held.hold(copyToolCallDelta(tc), attempt)
			return b, false
		}
		// The open call's signature, come later: its thinking block
		// follows the call's, once that closes.
		s.held.hold(&llmrelayv1.ToolCallDelta{Index: tc.GetIndex(), Signature: tc.GetSignature()}, attempt)
		tc = &llmrelayv1.ToolCallDelta{Index: tc.GetIndex(), ArgumentsDelta: tc.GetArgumentsDelta()}
	}
	block, seen := s.tools[tc.GetIndex()]
	if !seen {
		block.id = tc.GetId()
		// The call's signature, when it comes with the call (Gemini
		// sends a call whole), in a thinking block before it, as in a
		// reply that is not streamed.
		b = s.callSignature(b, block.id, tc.GetSignature(), attempt)
		b = s.startBlock(b, blockTool, tc.GetIndex(), "tool_use")
		b = append(b, ',')
		b = appendKeyString(b, "id", tc.GetId())
		b = append(b, ',')
		b = appendKeyString(b, "name", tc.GetName())
		b = append(b, `,"input":{}}`...)
		b = s.end(b, attempt)
		block.index = s.open
		s.tools[tc.GetIndex()] = block
	} else {
		// A signature that comes later: a thinking block after the call.
		b = s.callSignature(b, block.id, tc.GetSignature(), attempt)
	}
	if tc.GetArgumentsDelta() == "" {
		return b, false
	}
	// The arguments go to the call's own index: its block is the open one,
	// unless text or another block came between its fragments, which no
	// provider is known to send.
	b = s.deltaAt(b, block.index, "input_json_delta")
	b = appendKeyString(b, "partial_json", tc.GetArgumentsDelta())
	b = append(b, '}')
	b = s.end(b, attempt)
	if s.kind != blockTool || s.key != tc.GetIndex() {
		return b, false
	}
	s.args.write(tc.GetArgumentsDelta())
	return b, s.held.waits() && endsValue(tc.GetArgumentsDelta()) && s.args.whole()
}

// copyToolCallDelta returns a copy of tc to hold, which owns nothing of
// the event it came in.
func copyToolCallDelta(tc *llmrelayv1.ToolCallDelta) *llmrelayv1.ToolCallDelta {
	return &llmrelayv1.ToolCallDelta{Index: tc.GetIndex(), Id: tc.GetId(), Name: tc.GetName(),
		ArgumentsDelta: tc.GetArgumentsDelta(), Signature: tc.GetSignature()}
}

// endsValue reports whether a fragment of arguments can end them: an
// object or an array ends with its bracket. Only there is a call known to
// be done: arguments that are whole so far without one (a number, "12")
// may go on in the next fragment ("3"), which must not find the call's
// block closed.
func endsValue(fragment string) bool {
	fragment = strings.TrimRight(fragment, " \t\r\n")
	return strings.HasSuffix(fragment, "}") || strings.HasSuffix(fragment, "]")
}

// callSignature writes the thinking block that carries the signature of
// the call with the id (wireCallSignature): no text, the signature in a
// signature_delta as Anthropic streams a thinking block's; nothing when
// there is no signature.
func (s *messagesStream) callSignature(b []byte, id, sig string, attempt uint32) []byte {
	if sig == "" {
		return b
	}
	b = s.startBlock(b, blockCallSignature, 0, "thinking")
	b = append(b, `,"thinking":"","signature":""}`...)
	b = s.end(b, attempt)
	b = s.blockDelta(b, "signature_delta")
	b = appendKeyString(b, "signature", wireCallSignature(&llmrelayv1.ToolCall{Id: id, Signature: sig}))
	b = append(b, '}')
	b = s.end(b, attempt)
	return s.closeBlock(b)
}

func (s *messagesStream) reasoningDelta(b []byte, rd *llmrelayv1.ReasoningDelta, attempt uint32) []byte {
	if rd.GetRedacted() != "" {
		b = s.startBlock(b, blockRedacted, rd.GetIndex(), "redacted_thinking")
		b = append(b, ',')
		b = appendKeyString(b, "data", wireSignature(rd.GetFormat(), rd.GetRedacted()))
		b = append(b, '}')
		return s.end(b, attempt)
	}
	if s.kind != blockThinking || s.key != rd.GetIndex() {
		b = s.startBlock(b, blockThinking, rd.GetIndex(), "thinking")
		b = append(b, `,"thinking":"","signature":""}`...)
		b = s.end(b, attempt)
		s.format, s.signed = rd.GetFormat(), false
	}
	if rd.GetText() != "" {
		b = s.blockDelta(b, "thinking_delta")
		b = appendKeyString(b, "thinking", rd.GetText())
		b = append(b, '}')
		b = s.end(b, attempt)
	}
	if rd.GetSignature() != "" {
		s.signed = true
		b = s.blockDelta(b, "signature_delta")
		b = appendKeyString(b, "signature", wireSignature(s.format, rd.GetSignature()))
		b = append(b, '}')
		b = s.end(b, attempt)
	}
	return b
}

// restart tells a client that opted in that attempt, whose output it was
// shown, failed: the open block ends with an llmrelay member saying so,
// and the blocks of the next attempt follow it.
func (s *messagesStream) restart(b []byte, w *llmrelayv1.WillRetry, attempt uint32) []byte {
	index := s.open
	if s.kind == blockNone {
		index = s.next - 1
	}
	s.kind = blockNone // closed here, with the restart
	b = appendEvent(b, "content_block_stop")
	b = append(b, `data: {"type":"content_block_stop","index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"llmrelay":{"attempt":`...)
	b = appendUint(b, uint64(attempt))
	b = appendRestart(b, w)
	clear(s.tools)
	s.held.reset()
	return append(b, "}}\n\n"...)
}

// turn ends the open block: a later turn's text is a block of its own.
func (s *messagesStream) turn(b []byte) []byte { return s.closeBlock(b) }

func (s *messagesStream) ping(b []byte) []byte {
	b = appendEvent(b, "ping")
	return append(b, "data: {\"type\":\"ping\"}\n\n"...)
}

// final ends the stream: the open block, message_delta with the stop
// reason, the stop sequence and the usage, message_stop.
func (s *messagesStream) final(b []byte, f *llmrelayv1.Final) ([]byte, error) {
	b = s.closeBlock(b)
	u, err := json.Marshal(anthropicUsageOf(f.GetUsage()))
	if err != nil {
		return b, err
	}
	b = appendEvent(b, "message_delta")
	b = append(b, `data: {"type":"message_delta","delta":{"stop_reason":`...)
	stopReason, stopSequence := anthropicStop(f)
	b = appendString(b, stopReason)
	b = append(b, `,"stop_sequence":`...)
	if stopSequence != nil {
		b = appendString(b, *stopSequence)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `},"usage":`...)
	b = append(b, u...)
	if s.r.extension {
		b = appendFinalExtension(b, f)
	}
	b = append(b, "}\n\n"...)
	b = appendEvent(b, "message_stop")
	return append(b, "data: {\"type\":\"message_stop\"}\n\n"...), nil
}

// fail ends the stream with an error event, which the SDKs raise.
func (s *messagesStream) fail(b []byte, f failure) []byte {
	b = appendEvent(b, "error")
	b = append(b, "data: "...)
	body, _ := anthropic{}.errorBody(f, s.r.requestID)
	b = append(b, body...)
	return append(b, "\n\n"...)
}

// StatusOverloaded is Anthropic's status for an overloaded service, which
// its SDKs retry like any 5xx.
const StatusOverloaded = 529

var anthropicErrorTypes = map[int]string{
	http.StatusBadRequest:            "invalid_request_error",
	http.StatusUnauthorized:          "authentication_error",
	http.StatusPaymentRequired:       "billing_error",
	http.StatusForbidden:             "permission_error",
	http.StatusNotFound:              "not_found_error",
	http.StatusMethodNotAllowed:      "invalid_request_error",
	http.StatusConflict:              "invalid_request_error",
	http.StatusRequestEntityTooLarge: "request_too_large",
	http.StatusUnsupportedMediaType:  "invalid_request_error",
	http.StatusTooManyRequests:       "rate_limit_error",
	http.StatusGatewayTimeout:        "timeout_error",
	StatusOverloaded:                 "overloaded_error",
	StatusClientClosed:               "cancelled",
}

// errorBody renders a failure as Anthropic's error body, with Anthropic's
// statuses for an overloaded provider or a busy llmrelay (529) and an
// exhausted quota (402, billing_error); an llmrelay member keeps
// llmrelay's reason and metadata.
func (anthropic) errorBody(f failure, requestID string) ([]byte, int) {
	status := f.status
	switch {
	case f.class == provider.ClassQuotaExhausted:
		status = http.StatusPaymentRequired
	case f.status == http.StatusServiceUnavailable && (f.class == provider.ClassOverloaded || f.reason == engine.ReasonProviderBusy):
		status = StatusOverloaded
	}
	typ, ok := anthropicErrorTypes[status]
	if !ok {
		typ = "api_error"
	}
	type llmrelayErr struct {
		Reason   string            `json:"reason"`
		Metadata map[string]string `json:"metadata,omitempty"`
	}
	body, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string      `json:"request_id"`
		Llmrelay  llmrelayErr `json:"llmrelay"`
	}{Type: "error", Error: struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}{typ, f.message}, RequestID: requestID, Llmrelay: llmrelayErr{Reason: f.reason, Metadata: f.metadata}})
	return body, status
}

// anthropicModel is Anthropic's model object.
type anthropicModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

// anthropicModelOf is m as Anthropic's model object: named by its id,
// created at the Unix epoch (llmrelay does not know when).
func anthropicModelOf(m *llmrelayv1.Model) anthropicModel {
	return anthropicModel{Type: "model", ID: m.GetId(), DisplayName: m.GetId(), CreatedAt: time.Unix(0, 0).UTC().Format(time.RFC3339)}
}

// models renders the model list as Anthropic's, with llmrelay's member
// when a provider accepts any model name (extensionOf).
func (anthropic) models(list *llmrelayv1.ListModelsResponse) ([]byte, error) {
	out := struct {
		Data     []anthropicModel `json:"data"`
		HasMore  bool             `json:"has_more"`
		FirstID  *string          `json:"first_id"`
		LastID   *string          `json:"last_id"`
		Llmrelay *listExtension   `json:"llmrelay,omitempty"`
	}{Data: []anthropicModel{}, Llmrelay: extensionOf(list)}
	for _, m := range list.GetModels() {
		out.Data = append(out.Data, anthropicModelOf(m))
	}
	if n := len(out.Data); n > 0 {
		out.FirstID, out.LastID = &out.Data[0].ID, &out.Data[n-1].ID
	}
	return json.Marshal(out)
}

// model renders one model as Anthropic's model object.
func (anthropic) model(m *llmrelayv1.Model) ([]byte, error) {
	return json.Marshal(anthropicModelOf(m))
}
