package engine

import (
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// wellFormed reports whether r certainly keeps every buf.validate rule of
// GenerateRequest and the messages under it, checked by plain Go in a few
// hundred nanoseconds instead of protovalidate's CEL programs (tens of
// microseconds on a cold cache, the largest part of llmrelay's own CPU
// before the upstream request). It only ever answers "certainly valid":
// false means "not known", and Validator.Check then runs protovalidate,
// which decides and names the violations, so what a client sees for a bad
// request does not depend on this function. Where a rule is awkward to
// mirror exactly (a string over its limit in bytes but perhaps not in
// characters, a NaN, a malformed Duration, an image URL of a form
// httpsURL does not know) the answer is false.
//
// The rules mirrored here are the proto's; TestWellFormedNeverPassesABrokenRule
// sets every field reachable from GenerateRequest to values at and beyond
// each limit, alone and in random combinations, and fails if this function
// passes a request protovalidate refuses, so a rule added to the proto and
// not here shows up as a failing test, not as a request let through.
func wellFormed(r *llmrelayv1.GenerateRequest) bool {
	if !modelName(r.Model) || len(r.Messages) == 0 || len(r.Messages) > maxMessages ||
		len(r.Tools) > 128 || r.RequestId != "" && !uuidText(r.RequestId) ||
		len(r.FallbackModels) > 8 || len(r.Metadata) > 64 || len(r.ServerTools) > 64 ||
		r.MaxToolTurns != nil && (*r.MaxToolTurns < 1 || *r.MaxToolTurns > 1000) ||
		!durationIn(r.StreamIdleTimeout, false, 3600) || !durationIn(r.FirstEventTimeout, false, 3600) ||
		!durationIn(r.HeartbeatInterval, false, 300) {
		return false
	}
	for _, m := range r.Messages {
		if !messageWellFormed(m) {
			return false
		}
	}
	for _, t := range r.Tools {
		if !toolName(t.Name) || len(t.Description) > 16384 {
			return false
		}
	}
	for _, f := range r.FallbackModels {
		if !modelName(f) {
			return false
		}
	}
	for k, v := range r.Metadata {
		if k == "" || len(k) > 128 || len(v) > 1024 {
			return false
		}
	}
	for _, s := range r.ServerTools {
		if s == "" || !maxChars(s, 256) {
			return false
		}
	}
	if g := r.Generation; g != nil {
		if g.MaxOutputTokens != nil && (*g.MaxOutputTokens < 1 || *g.MaxOutputTokens > 1000000) ||
			g.Temperature != nil && !(*g.Temperature >= 0 && *g.Temperature <= 2) ||
			g.TopP != nil && !(*g.TopP >= 0 && *g.TopP <= 1) || len(g.Stop) > 16 {
			return false
		}
		for _, s := range g.Stop {
			if s == "" || len(s) > 256 {
				return false
			}
		}
	}
	if c := r.ToolChoice; c != nil && (c.Mode < 0 || c.Mode > llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL || !maxChars(c.Name, 64)) {
		return false
	}
	if f := r.ResponseFormat; f != nil && (f.JsonSchema == nil || !formatName(f.Name) ||
		f.MaxValidationRetries != nil && *f.MaxValidationRetries > 10 ||
		f.OnInvalid < 0 || f.OnInvalid > llmrelayv1.OnInvalid_ON_INVALID_RETURN_TEXT ||
		!durationIn(f.PartialObjectInterval, true, 60)) {
		return false
	}
	if p := r.Retry; p != nil && (p.MaxAttempts > 10 || !durationIn(p.InitialBackoff, false, 60) ||
		!durationIn(p.MaxBackoff, false, 300) || p.Midstream < 0 || p.Midstream > llmrelayv1.Midstream_MIDSTREAM_FAIL) {
		return false
	}
	if h := r.Hedging; h != nil && (!durationIn(h.HedgeAfter, false, 300) || h.MaxHedges != nil && *h.MaxHedges > 2 ||
		h.Target < 0 || h.Target > llmrelayv1.HedgeTarget_HEDGE_TARGET_NEXT) {
		return false
	}
	if o := r.OutputLimit; o != nil && (o.MaxBytes > maxOutputText || o.OnLimit < 0 || o.OnLimit > llmrelayv1.OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE) {
		return false
	}
	return true
}

// maxMessages is the proto's bound of a request's messages
// (GenerateRequest.messages), which a server-tool loop's conversation
// keeps to as well (runTurns).
const maxMessages = 2048

// maxOutputText is the proto's bound of every field a reply fills with
// its output (Message.content and refusal, Part.text, a reasoning block's
// text, signature and redacted data, a tool call's arguments and
// signature, a provider tool block's input, result and extra): 1 GiB, the
// most output_limit.max_bytes may ask for, so that a reply goes back as
// the next request's assistant message.
const maxOutputText = 1 << 30

// messageWellFormed mirrors Message's rules and those of the messages under it.
func messageWellFormed(m *llmrelayv1.Message) bool {
	if m.Role < llmrelayv1.Role_ROLE_SYSTEM || m.Role > llmrelayv1.Role_ROLE_TOOL ||
		len(m.Content) > maxOutputText || len(m.ToolCalls) > provider.MaxToolCalls || !maxChars(m.ToolCallId, 256) ||
		len(m.Reasoning) > provider.MaxReasoningBlocks || len(m.Refusal) > maxOutputText || len(m.Parts) > 4096 ||
		len(m.ProviderTools) > provider.MaxProviderTools || !maxChars(m.ServerTool, 256) {
		return false
	}
	// Images (and so parts of text and images) come in user messages and
	// tool results.
	images := m.Role == llmrelayv1.Role_ROLE_USER || m.Role == llmrelayv1.Role_ROLE_TOOL
	if m.Role != llmrelayv1.Role_ROLE_ASSISTANT &&
		(len(m.Reasoning) > 0 || m.Refusal != "" || len(m.ProviderTools) > 0 || !images && len(m.Parts) > 0) {
		return false
	}
	for _, c := range m.ToolCalls {
		if !maxChars(c.Id, 256) || !maxChars(c.Name, 128) || len(c.Arguments) > maxOutputText || len(c.Signature) > maxOutputText {
			return false
		}
	}
	for _, r := range m.Reasoning {
		if len(r.Text) > maxOutputText || len(r.Signature) > maxOutputText || len(r.Redacted) > maxOutputText || !reasoningFormat(r.Format) ||
			!maxChars(r.Id, 256) || !maxChars(r.Kind, 64) || !maxChars(r.ProviderFormat, 64) {
			return false
		}
	}
	for _, p := range m.Parts {
		switch p := p.Part.(type) {
		case *llmrelayv1.Part_Text:
			if len(p.Text) > maxOutputText {
				return false
			}
		case *llmrelayv1.Part_Reasoning, *llmrelayv1.Part_ToolCall, *llmrelayv1.Part_ProviderTool:
			if m.Role != llmrelayv1.Role_ROLE_ASSISTANT { // a user's or a tool's parts are text and images
				return false
			}
		case *llmrelayv1.Part_Image:
			if !images || !imageWellFormed(p.Image) {
				return false
			}
		default:
			return false
		}
	}
	for _, b := range m.ProviderTools {
		if b.Kind == "" || !maxChars(b.Kind, 128) || !maxChars(b.Id, 256) || !maxChars(b.Name, 128) ||
			len(b.Input) > maxOutputText || len(b.Result) > maxOutputText || len(b.Extra) > maxOutputText || !maxChars(b.Format, 64) {
			return false
		}
	}
	return true
}

// imageWellFormed mirrors Image's rules: an https URL that httpsURL is
// sure of, or 1 byte to 20 MiB of data with its media type; no media type
// or one of the four; a defined detail.
func imageWellFormed(img *llmrelayv1.Image) bool {
	switch s := img.GetSource().(type) {
	case *llmrelayv1.Image_Url:
		if !httpsURL(s.Url) {
			return false
		}
	case *llmrelayv1.Image_Data:
		if len(s.Data) == 0 || len(s.Data) > provider.MaxImageBytes || img.MediaType == "" {
			return false
		}
	default:
		return false
	}
	if img.MediaType != "" && !provider.IsImageMediaType(img.MediaType) {
		return false
	}
	return img.Detail >= 0 && img.Detail <= llmrelayv1.ImageDetail_IMAGE_DETAIL_ORIGINAL
}

// httpsURL mirrors image.url's rules (at most 8,192 characters, a valid
// URI, https://) for the URLs it can be sure of: "https://", a host of
// letters, digits, '.', '-', '_' and '~' with an optional port, then a
// path, query and fragment of the characters RFC 3986 allows there, its
// percent escapes well formed and one '#' at most. Other URIs (user info,
// IP literals, escapes in the host) are not known to pass.
func httpsURL(s string) bool {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok || len(s) > 8192 {
		return false
	}
	i := 0
	for i < len(rest) && (alnum(rest[i]) || strings.IndexByte("-._~", rest[i]) >= 0) {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(rest) && rest[i] == ':' {
		for i++; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
		}
	}
	if i < len(rest) && rest[i] != '/' && rest[i] != '?' && rest[i] != '#' {
		return false
	}
	fragment := false
	for ; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == '%':
			if i+2 >= len(rest) || !hexDigit(rest[i+1]) || !hexDigit(rest[i+2]) {
				return false
			}
			i += 2
		case c == '#':
			if fragment {
				return false
			}
			fragment = true
		case !alnum(c) && strings.IndexByte("-._~!$&'()*+,;=:@/?", c) < 0:
			return false
		}
	}
	return true
}

func hexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// maxChars is a max_len rule: at most n characters (the byte length
// answers first, as a string has no more characters than bytes, nor
// fewer than a quarter of them), so that it counts at most 4n bytes.
func maxChars(s string, n int) bool {
	return len(s) <= n || len(s) <= utf8.UTFMax*n && utf8.RuneCountInString(s) <= n
}

// durationIn is a duration rule of gt (or gte, with zero) {} and lte
// {seconds: max} on an optional field: unset passes. A Duration that is
// not well formed (nanos out of range or of the other sign) is not known
// to pass.
func durationIn(d *durationpb.Duration, zero bool, max int64) bool {
	if d == nil {
		return true
	}
	s, n := d.Seconds, d.Nanos
	if s < 0 || n < 0 || n > 999999999 || s > max || s == max && n > 0 {
		return false
	}
	return zero || s > 0 || n > 0
}

// modelName mirrors model.format and model.path_segments (and, as the
// pattern needs a first character, required): a lower-case name of up to
// 63 characters, then optionally a slash and a provider's model name whose
// slash-separated segments are neither empty, "." nor "..".
func modelName(s string) bool {
	i := 0
	for i < len(s) && s[i] != '/' {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '-')) {
			return false
		}
		i++
	}
	if i == 0 || i > 63 || len(s) > 256 {
		return false
	}
	if i == len(s) {
		return true
	}
	rest, segment := s[i+1:], 0 // segment: where the current one starts
	if rest == "" || !alnum(rest[0]) {
		return false
	}
	for j := 0; j <= len(rest); j++ {
		if j == len(rest) || rest[j] == '/' {
			if seg := rest[segment:j]; seg == "" || seg == "." || seg == ".." {
				return false
			}
			segment = j + 1
			continue
		}
		if c := rest[j]; !alnum(c) && c != '.' && c != '_' && c != ':' && c != '@' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// toolName mirrors tool.name: 1 to 64 letters, digits, _ or -.
func toolName(s string) bool {
	return s != "" && formatName(s)
}

// formatName mirrors response_format.name: up to 64 letters, digits, _ or -.
func formatName(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !alnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// reasoningFormat mirrors reasoning.format: empty, or a lower-case letter
// and then up to 63 lower-case letters, digits, ".", "_" or "-".
func reasoningFormat(s string) bool {
	if len(s) > 64 || s != "" && !(s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// uuidText mirrors string.uuid: 8-4-4-4-12 hexadecimal digits, either case.
func uuidText(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !hexDigit(c) {
			return false
		}
	}
	return true
}
