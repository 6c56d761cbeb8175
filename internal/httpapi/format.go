package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// The interfaces llmrelay serves, as its metrics and logs label calls.
const (
	InterfaceOpenAI          = "openai"
	InterfaceOpenAIResponses = "openai-responses"
	InterfaceAnthropic       = "anthropic"
)

// extensionKey is the request member, and the reply member, that carries
// what only llmrelay has.
const extensionKey = "llmrelay"

// format is one vendor's wire format: its requests in, its replies, stream
// events and errors out. Each is one file of this package; none decides
// anything the engine decides.
type format interface {
	// name is the interface's label (InterfaceOpenAI, ...).
	name() string
	// decode translates a request body (and its headers) into the
	// engine's request, or says which wire field is wrong.
	decode(body []byte, h http.Header) (*translated, *failure)
	// reply renders a successful call as one response body.
	reply(r *replyInfo, f *llmrelayv1.Final) ([]byte, error)
	// stream returns the encoder of a streamed reply.
	stream(r *replyInfo) streamEncoder
	// errorBody renders a failure, and returns the HTTP status to send it
	// with (the format may have its own status for a kind of failure).
	errorBody(f failure, requestID string) ([]byte, int)
	// models renders the model list.
	models(list *llmrelayv1.ListModelsResponse) ([]byte, error)
	// model renders one model of the list.
	model(m *llmrelayv1.Model) ([]byte, error)
}

// streamEncoder appends a streamed reply's server-sent events to a buffer;
// the exchange writes and flushes each event it appended. Its methods are
// called from one goroutine, in the call's order: start once before
// anything else, then deltas, restarts and pings, then final or fail.
type streamEncoder interface {
	// start opens the reply (Anthropic's message_start). early is the
	// usage the provider of the attempt whose output starts the reply
	// reported before that output (engine.EarlyUsageSink), nil for none.
	start(b []byte, early *llmrelayv1.Usage) []byte
	// delta appends one fragment of attempt's reply.
	delta(b []byte, d *llmrelayv1.Delta, attempt uint32) []byte
	// restart tells a client that opted in (HeaderMidstream) that attempt,
	// whose output it was shown, failed, and that what it showed is to be
	// discarded.
	restart(b []byte, w *llmrelayv1.WillRetry, attempt uint32) []byte
	// ping keeps a quiet stream alive.
	ping(b []byte) []byte
	// turn marks the start of a later model turn of a call that runs
	// server tools (Anthropic's format ends the open block).
	turn(b []byte) []byte
	// final ends a successful reply.
	final(b []byte, f *llmrelayv1.Final) ([]byte, error)
	// fail ends the reply with an error the SDKs raise.
	fail(b []byte, f failure) []byte
}

// translated is a request translated for the engine, with what its reply
// needs to know of the wire request.
type translated struct {
	req    *llmrelayv1.GenerateRequest
	format format
	stream bool
	// includeUsage: OpenAI's stream_options.include_usage.
	includeUsage bool
	// own lists the provider_options keys the format's own fields set
	// (OpenAI's seed becomes provider_options.seed).
	own map[string]bool
	// messages names the wire member each of req.Messages came from, when
	// it is not messages[i] (Anthropic's system prompt and content blocks).
	messages []string
	// maxTokensField is the wire name of the output token limit.
	maxTokensField string
	// betas are the API betas the client asked for (Anthropic's
	// anthropic-beta header), for provider.WithClientBetas.
	betas []string
	// echo is what the reply repeats of the request's settings, JSON
	// members each after a comma (the Responses API's response object
	// echoes them; empty in the other formats).
	echo []byte
	// userMember: OpenAI's user member set the metadata label "user"
	// (after the metadata member, so its value is the label's).
	userMember bool
}

// replyInfo is what every event of a reply repeats.
type replyInfo struct {
	requestID string
	// created is the reply's Unix time, in seconds.
	created int64
	// model is the model as the client asked for it.
	model string
	// includeUsage: OpenAI's stream_options.include_usage.
	includeUsage bool
	// extension: the client opted in to restarts (HeaderMidstream), so
	// events carry the llmrelay member.
	extension bool
	// echo is the request's settings the reply repeats (translated.echo).
	echo []byte
}

// param names a field of the engine's request as the client wrote it.
func (t *translated) param(field string) string {
	switch t.format.(type) {
	case anthropic:
		return t.anthropicParam(field)
	case responses:
		return t.responsesParam(field)
	default:
		return t.openAIParam(field)
	}
}

// commonParam names the fields both formats write the same way.
func (t *translated) commonParam(field string) string {
	head, idx, rest := splitField(field)
	switch head {
	case "provider_options":
		key, _, _ := strings.Cut(strings.TrimPrefix(rest, "."), ".")
		if t.own[key] {
			return strings.TrimPrefix(rest, ".")
		}
		return extensionKey + ".provider_options" + rest
	case "fallback_models", "server_tools", "max_tool_turns":
		return extensionKey + "." + head + idx + rest
	case "metadata":
		if t.userMember && idx == `["user"]` {
			return "user"
		}
	}
	return field
}

// splitField splits a field path into its first member, that member's
// index ("[2]", if any) and the rest (".content").
func splitField(field string) (head, idx, rest string) {
	end := strings.IndexAny(field, ".[")
	if end < 0 {
		return field, "", ""
	}
	head, rest = field[:end], field[end:]
	if rest[0] == '[' {
		if close := strings.IndexByte(rest, ']'); close > 0 {
			idx, rest = rest[:close+1], rest[close+1:]
		}
	}
	return head, idx, rest
}

// generation returns the request's generation settings, made when needed.
func generation(req *llmrelayv1.GenerateRequest) *llmrelayv1.GenerationConfig {
	if req.Generation == nil {
		req.Generation = &llmrelayv1.GenerationConfig{}
	}
	return req.Generation
}

// toolChoice returns the request's tool choice, made when needed: a
// format may set its members from more than one request member.
func toolChoice(req *llmrelayv1.GenerateRequest) *llmrelayv1.ToolChoice {
	if req.ToolChoice == nil {
		req.ToolChoice = &llmrelayv1.ToolChoice{}
	}
	return req.ToolChoice
}

// labels returns the request's metadata, made when needed.
func labels(req *llmrelayv1.GenerateRequest) map[string]string {
	if req.Metadata == nil {
		req.Metadata = map[string]string{}
	}
	return req.Metadata
}

// sharedField translates the members both formats write alike: the
// model, stream, the output token limit (under the format's name,
// maxTokensField), temperature and top_p. handled is false for any other.
func (t *translated) sharedField(key string, raw json.RawMessage) (handled bool, err error) {
	switch key {
	case "model":
		return true, decodeAs(raw, &t.req.Model, "must be a string")
	case "stream":
		return true, decodeAs(raw, &t.stream, "must be true or false")
	case t.maxTokensField:
		v, err := wholeNumber(raw, fieldMaxOutputTokens)
		if err != nil {
			return true, err
		}
		generation(t.req).MaxOutputTokens = &v
	case "temperature", "top_p":
		var x float32
		if err := json.Unmarshal(raw, &x); err != nil {
			return true, errors.New("must be a number")
		}
		if key == "temperature" {
			generation(t.req).Temperature = &x
		} else {
			generation(t.req).TopP = &x
		}
	default:
		return false, nil
	}
	return true, nil
}

// otherField translates a member the format's switch does not: one of
// options (passed to the provider as provider_options under its own name,
// unless it has its default value, the raw JSON given), or of refused
// (llmrelay's reply cannot carry its answer; accepted with its default
// value, when it has one); any other is unknown, as the vendor's API says.
func (t *translated) otherField(key string, raw json.RawMessage, options, refused map[string]string, unknown string) error {
	if def, ok := options[key]; ok {
		if isDefault(raw, def) {
			return nil
		}
		t.own[key] = true
		return setOption(t.req, key, raw)
	}
	if def, ok := refused[key]; ok {
		if isDefault(raw, def) {
			return nil
		}
		return errors.New("not supported by llmrelay")
	}
	return errors.New(unknown)
}

// isDefault reports whether raw is the JSON value def (none when def is
// empty), however it is written: 0.0 is 0, and {"type": "disabled"}, with
// the spaces Python's json module writes, is {"type":"disabled"}.
func isDefault(raw json.RawMessage, def string) bool {
	if def == "" {
		return false
	}
	if string(raw) == def {
		return true
	}
	var got, want any
	if json.Unmarshal(raw, &got) != nil || json.Unmarshal([]byte(def), &want) != nil {
		return false
	}
	return reflect.DeepEqual(got, want)
}

// decodeFields translates a request's members, each with field, in order,
// and then its llmrelay member; null members are absent. It returns the
// failure that names the first wrong member.
func (t *translated) decodeFields(fields map[string]json.RawMessage, field func(key string, raw json.RawMessage) error) *failure {
	for _, key := range sortedKeys(fields) {
		raw := fields[key]
		if isNull(raw) || key == extensionKey {
			continue
		}
		if err := field(key, raw); err != nil {
			f := memberError(key, err)
			return &f
		}
	}
	if raw := fields[extensionKey]; !isNull(raw) {
		if err := t.extension(raw); err != nil {
			f := memberError(extensionKey, err)
			return &f
		}
	}
	return nil
}

// memberError is the failure of a request member: the member's name, with
// the path inside it that a *paramError gives.
func memberError(key string, err error) failure {
	var pe *paramError
	if errors.As(err, &pe) {
		return requestError(key+pe.path, pe.msg)
	}
	return requestError(key, err.Error())
}

// paramError is a problem inside a request member: path continues the
// member's name (".function.name", "[2].content").
type paramError struct{ path, msg string }

func (e *paramError) Error() string { return e.path + ": " + e.msg }

// inParam puts err, a problem of a part of a member, at path inside it.
func inParam(path string, err error) error {
	var pe *paramError
	if errors.As(err, &pe) {
		return &paramError{path: path + pe.path, msg: pe.msg}
	}
	return &paramError{path: path, msg: err.Error()}
}

// extension reads the request's llmrelay member.
func (t *translated) extension(raw json.RawMessage) error {
	var x extension
	if err := decodeStrict(raw, &x); err != nil {
		return err
	}
	return x.apply(t.req)
}

// appendRestart appends the restart member of the llmrelay extension:
// why the attempt failed, the attempt that follows, after how long, where
// it goes, and that what was shown is to be discarded.
func appendRestart(b []byte, w *llmrelayv1.WillRetry) []byte {
	b = append(b, `,"restart":{"reason":`...)
	b = appendString(b, strings.ToLower(strings.TrimPrefix(w.GetReason().String(), "RETRY_REASON_")))
	b = append(b, `,"next_attempt":`...)
	b = appendUint(b, uint64(w.GetNextAttempt()))
	b = append(b, `,"delay_ms":`...)
	b = appendUint(b, uint64(w.GetDelay().AsDuration().Milliseconds()))
	if w.GetNextProvider() != "" {
		b = append(b, ',')
		b = appendKeyString(b, "next_provider", w.GetNextProvider())
		b = append(b, ',')
		b = appendKeyString(b, "next_model", w.GetNextModel())
	}
	return append(b, `,"discard":true}`...)
}

// appendFinalExtension appends the llmrelay member of a stream's last
// event: the attempt that succeeded, how many the call took, and the
// provider and model that answered.
func appendFinalExtension(b []byte, f *llmrelayv1.Final) []byte {
	b = append(b, `,"llmrelay":{"attempts":`...)
	b = appendUint(b, uint64(f.GetAttempts()))
	b = append(b, ',')
	b = appendKeyString(b, "provider", f.GetProvider())
	b = append(b, ',')
	b = appendKeyString(b, "model", f.GetModel())
	return append(b, '}')
}
