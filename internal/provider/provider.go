// Package provider defines what llmrelay needs from an LLM provider adapter:
// one streaming call per attempt that yields provider-neutral events or a
// typed *Error, plus a registry of adapter kinds and the set of configured
// providers that requests are routed to.
//
// The package knows nothing of gRPC or of retries: an adapter reports what
// happened (an HTTP status, the provider's error type, a retry hint, a dropped
// connection) and which failure Class that is, by its own error table;
// internal/retry decides what follows.
package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Provider is one configured LLM provider.
//
// Implementations are safe for concurrent use: every attempt of every call
// goes through the same Provider.
type Provider interface {
	// Stream starts one attempt. It returns once the provider has accepted the
	// request (for HTTP providers: once response headers with a 2xx status
	// arrived), or with an error: a *Error for anything the provider or the
	// network did, or ctx's error.
	//
	// Cancelling ctx aborts the attempt at once and releases its connection.
	Stream(ctx context.Context, req *Request) (Stream, error)
}

// Stream is one attempt's stream of events. It is used by one goroutine.
type Stream interface {
	// Recv returns the next event. It returns io.EOF once the provider's
	// stream ended with its terminator (for example `data: [DONE]` or
	// `message_stop`). A stream that ends without one is a *Error of
	// KindTransport, never io.EOF: a truncated reply is not a success.
	Recv() (Event, error)

	// Close releases the attempt's connection. It is safe to call more than
	// once and after Recv returned an error.
	Close() error
}

// BufferedStream is a Stream that can tell what it already holds: the
// events decoded from bytes it has read from the provider and not returned
// yet. The engine coalesces them: deltas that arrived while the previous
// event was being sent go to the client as one (httpx's streams implement
// it; a Stream without it relays one delta per event).
type BufferedStream interface {
	Stream
	// RecvBuffered returns what Recv would return next (an event, io.EOF
	// or the stream's error) with ok true when it needs nothing more from
	// the provider; otherwise ok false, at once, and nothing is consumed.
	// It never waits.
	RecvBuffered() (ev Event, ok bool, err error)
}

// IntoStream is a Stream that can read its next event into the caller's
// Event: what Recv returns, without the copy of a returned Event (some 300
// bytes) in the frames of the goroutine that waits for it, which is the
// call's handler for as long as the reply streams (httpx's streams
// implement it; see docs/performance.md on the handler's stack).
type IntoStream interface {
	Stream
	// RecvInto sets *ev to the event Recv would return, and returns
	// Recv's error (leaving *ev as it was).
	RecvInto(ev *Event) error
}

// AwaitStream is a Stream that can wait for its next event before it is
// asked for it: Await returns once Recv (and RecvInto and RecvBuffered)
// would not wait, for an event or for the stream's error. A caller that
// awaits first holds no Event of its own while the provider is slow, which
// is most of a streaming reply's life (httpx's streams implement it).
type AwaitStream interface {
	Stream
	Await()
}

// ModelLister is implemented by providers that know their models without
// configuration (the mock provider). Configured `models:` take precedence.
type ModelLister interface {
	DefaultModels() []string
}

// RequestValidator rejects a request before its first attempt: what the
// provider's wire format cannot carry (a tool call whose arguments are not
// a JSON object, for providers that embed them) or its provider_options
// do not allow (the mock's fault list). Every adapter implements it (the
// conformance suite checks); the service calls it once per call, so a
// request it refuses never reaches the provider and makes no attempt. The
// error is a *FieldError or wraps one.
type RequestValidator interface {
	ValidateRequest(req *Request) error
}

// RequestPreparer is a RequestValidator whose check builds the wire
// request. PrepareRequest checks req as ValidateRequest does and returns
// the wire request it built; the engine hands it back to the same provider
// in Request.Prepared for the first attempt of the request to that model,
// which then sends it instead of building it a second time (encoding a
// long conversation twice per call, each time on offstack's workers, is
// measurable at concurrency 1).
type RequestPreparer interface {
	RequestValidator
	PrepareRequest(req *Request) (any, error)
}

// TokenCounter is a provider's optional capability: CountTokens returns
// how many input tokens req would take at the provider, as the provider
// counts them (Anthropic's POST /v1/messages/count_tokens), without
// generating anything. req is built as an attempt's (req.Model is the
// provider's model name) and was validated (RequestValidator). It is one
// HTTP request, not retried; its error is a *Error for anything the
// provider or the network did, or ctx's error. The anthropic adapter
// implements it; a provider without it cannot count.
type TokenCounter interface {
	CountTokens(ctx context.Context, req *Request) (int64, error)
}

// Embedder is a provider's optional capability: Embed returns the
// embedding of each of req's inputs, in their order, as the provider
// computes them (OpenAI's POST /embeddings, Gemini's batchEmbedContents),
// with the usage the provider reported. It is one HTTP request, or one
// per batch the provider's API bounds (Gemini's 100 requests), sent in
// turn, the first failure ending it (the engine's attempt plan retries it
// whole); its error is a *Error for anything
// the provider or the network did (classified by the adapter's error
// table), a *FieldError for a request the adapter refuses before sending
// it, or ctx's error. An answer with another number of vectors than
// inputs, vectors of different lengths, or of another length than
// req.Dimensions asks for, is a KindProtocol error (CheckEmbeddings). The
// openai, gemini and mock adapters implement it; a provider without it
// cannot embed, and the engine refuses a call to it before any request.
type Embedder interface {
	Embed(ctx context.Context, req *EmbedRequest) (*Embeddings, error)
}

// EmbedRequest is one attempt's embedding request, in provider-neutral
// form.
type EmbedRequest struct {
	// Model is the provider's model name.
	Model string
	// Inputs are the texts to embed, at least one.
	Inputs []string
	// Dimensions is the length of each vector asked for; 0 takes the
	// model's own.
	Dimensions int
	// Options are the request's provider_options (checked by
	// Config.CheckOptions before the first attempt); nil when unset.
	Options map[string]any
	// Attempt is the attempt's number in its call, from 1.
	Attempt int
}

// Embeddings is what an Embedder returns.
type Embeddings struct {
	// Vectors holds one vector per input, in the inputs' order.
	Vectors [][]float32
	// Usage is the provider's count (InputTokens only), when Reported.
	Usage    Usage
	Reported bool
}

// The bounds on what an Embedder decodes of its provider's answer, in
// place of a bound on the answer's bytes: OpenAI's answer for 2048 inputs
// of 3072 values is some 140 MiB of pretty-printed JSON, which an adapter
// decodes as it arrives, holding only the vectors.
const (
	// MaxEmbeddingDimensions bounds the values of one vector: the most
	// `dimensions` a request may ask for (the proto's bound).
	MaxEmbeddingDimensions = 65536
	// MaxEmbeddingValues bounds the values of all of an answer's vectors:
	// 2048 inputs (the most a request holds) of 8192 values, 64 MiB as
	// float32.
	MaxEmbeddingValues = 1 << 24
)

// EmbeddingBound names a bound on what an Embedder decodes.
type EmbeddingBound string

// The bounds.
const (
	// BoundVectors: one vector per input asked for.
	BoundVectors EmbeddingBound = "vectors"
	// BoundDimensions: MaxEmbeddingDimensions values in one vector.
	BoundDimensions EmbeddingBound = "values in one vector"
	// BoundValues: MaxEmbeddingValues values in all.
	BoundValues EmbeddingBound = "values in all"
)

// EmbeddingBoundError says that a provider's embeddings answer holds more
// than Bound lets an Embedder decode; the adapter stops reading it there.
// It is the Err of the KindProtocol *Error an Embedder returns
// (EmbeddingBoundExceeded), which errors.As finds.
type EmbeddingBoundError struct {
	Bound EmbeddingBound
	// Limit is the bound's value: the inputs asked for (BoundVectors),
	// MaxEmbeddingDimensions or MaxEmbeddingValues.
	Limit int
}

// Error implements error.
func (e *EmbeddingBoundError) Error() string {
	return "more than " + strconv.Itoa(e.Limit) + " " + string(e.Bound)
}

// EmbeddingBoundExceeded returns the KindProtocol error of an answer that
// holds more than limit of bound.
func EmbeddingBoundExceeded(bound EmbeddingBound, limit int) *Error {
	be := &EmbeddingBoundError{Bound: bound, Limit: limit}
	return &Error{Kind: KindProtocol, Class: ClassProtocol, Message: "answered embeddings with " + be.Error(), Err: be}
}

// CheckEmbeddings returns a KindProtocol error when e does not hold one
// vector per each of n inputs, all of one non-zero length, and of
// dimensions values when dimensions (the request's) is not 0: what every
// Embedder promises, checked by each adapter on its provider's answer. A
// server that ignores the dimensions asked for (not every
// OpenAI-compatible one shortens vectors) would otherwise pass vectors of
// its model's own length off as the ones asked for.
func CheckEmbeddings(e *Embeddings, n, dimensions int) error {
	if len(e.Vectors) != n {
		return &Error{Kind: KindProtocol, Class: ClassProtocol,
			Message: "answered " + strconv.Itoa(len(e.Vectors)) + " embeddings for " + strconv.Itoa(n) + " inputs"}
	}
	for i, v := range e.Vectors {
		if len(v) == 0 || len(v) != len(e.Vectors[0]) {
			return &Error{Kind: KindProtocol, Class: ClassProtocol,
				Message: "answered an embedding of " + strconv.Itoa(len(v)) + " values at index " + strconv.Itoa(i) +
					", beside one of " + strconv.Itoa(len(e.Vectors[0]))}
		}
	}
	if dimensions > 0 && len(e.Vectors) > 0 && len(e.Vectors[0]) != dimensions {
		return &Error{Kind: KindProtocol, Class: ClassProtocol,
			Message: "answered embeddings of " + strconv.Itoa(len(e.Vectors[0])) + " values when " + strconv.Itoa(dimensions) +
				" were asked for (the server may not shorten vectors: leave dimensions out)"}
	}
	return nil
}

// Request is one attempt's request, in provider-neutral form.
type Request struct {
	// Model is the provider's model name: the part of "<provider>/<model>"
	// after the first "/".
	Model string
	// Messages is the conversation, oldest first.
	Messages []Message
	// Generation holds the sampling settings; nil fields mean the provider's default.
	Generation Generation
	// Tools the model may call. Empty when ResponseFormat is set.
	Tools []Tool
	// ToolChoice says whether the model must call a tool.
	ToolChoice ToolChoice
	// ResponseFormat asks for JSON conforming to a schema; nil for plain text.
	ResponseFormat *ResponseFormat
	// Options are the request's provider_options, decoded from JSON
	// (map[string]any, []any, string, float64, bool, nil).
	Options map[string]any
	// Attempt is the number of this attempt within the call, from 1.
	Attempt int
	// Activity, when not nil, is told of every sign of life from the
	// provider during the attempt: an HTTP adapter touches it for every read
	// of the response body that returned bytes (keep-alive comments, pings
	// and reasoning included, which need not become events). The attempt's
	// stall timers read it (see Activity). Nil-safe.
	Activity *Activity
	// Prepared, when not nil, is what this provider's PrepareRequest
	// returned for this very request (its Model included): Stream may send
	// it as it is. The engine sets it only on the first attempt to the
	// target it was prepared for, and never once the request changed
	// since (a re-ask adds messages); otherwise nil, and Stream builds the
	// wire request itself.
	Prepared any
}

// Role says who wrote a message.
type Role uint8

// Roles.
const (
	RoleSystem Role = iota + 1
	RoleUser
	RoleAssistant
	RoleTool
)

// String returns the role's lower-case name, as most providers spell it.
func (r Role) String() string {
	switch r {
	case RoleSystem:
		return "system"
	case RoleUser:
		return "user"
	case RoleAssistant:
		return "assistant"
	case RoleTool:
		return "tool"
	}
	return "unknown"
}

// Message is one turn of the conversation.
type Message struct {
	Role       Role
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
	// ToolError: a tool result (RoleTool) is the tool's failure, Content
	// saying how (Message.tool_error). An adapter marks it where its wire
	// format can (Anthropic's is_error); the model is sent the content
	// either way.
	ToolError bool
	// Reasoning is an assistant turn's reasoning, block by block, as the
	// provider sent it. An adapter sends back the blocks of its own formats
	// (Reasoning.Format) and leaves out the others.
	Reasoning []Reasoning
	// Refusal is an assistant turn's refusal text. Adapters do not send it.
	Refusal string
	// ProviderTools are the blocks of tools the provider ran itself in an
	// assistant turn (server tools), calls and results, in the order they
	// came. An adapter sends back the blocks of its own formats
	// (ProviderTool.Format) and leaves out the others.
	ProviderTools []ProviderTool
	// Parts is the order of an assistant turn's blocks, as the provider
	// sent them; nil for a turn without one (see Blocks). For a user
	// message or a tool result, the order of its text and its Images; nil
	// for a message without images. The service checked it against the
	// other fields:
	// each text part is a piece of Content (all of them, concatenated, are
	// Content), and each index names a block that exists, once.
	Parts []Part
	// Images are a user message's or a tool result's images; Parts places
	// them among its text (PartImage). An adapter sends each one, in its
	// place or as close to it as its wire format allows (docs/providers.md,
	// "Images in tool results"), or refuses the request (a *FieldError
	// naming it) when its wire format cannot carry it: it never drops one.
	Images []Image
}

// MaxImageBytes bounds an inline image's bytes (the proto's Image.data).
const MaxImageBytes = 20 << 20

// IsImageMediaType reports whether mt is a media type an image may have
// (the proto's Image.media_type): image/png, image/jpeg, image/gif or
// image/webp, the types every adapter's provider takes.
func IsImageMediaType(mt string) bool {
	switch mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// ImageTypeOf returns the image media type data's first bytes announce
// (each format's signature: PNG's, JPEG's start of image, GIF87a or
// GIF89a, a RIFF container of WEBP), or "" when they announce none of the
// four. It reads at most 12 bytes.
func ImageTypeOf(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// Image is an image of a user message or a tool result: an https URL the
// provider fetches, or the image's bytes (Data) and media type.
type Image struct {
	// URL is an https URL; empty for an inline image.
	URL string
	// Data is an inline image's bytes, as the file has them (not base64).
	Data []byte
	// MediaType is image/png, image/jpeg, image/gif or image/webp;
	// always set with Data, optional with a URL.
	MediaType string
	// Detail is OpenAI's detail hint: "low", "high", "auto", "original",
	// or "" for the provider's default.
	Detail string
}

// DataURL returns an inline image as a data: URL
// ("data:image/png;base64,...").
func (i *Image) DataURL() string {
	return "data:" + i.MediaType + ";base64," + base64.StdEncoding.EncodeToString(i.Data)
}

// Blocks returns an assistant turn's blocks, or a user message's or a tool
// result's text and images, in order: Parts when the message has them, else the usual order: its reasoning blocks, its text (one
// block, when not empty), its provider tool blocks, its tool calls. Every
// adapter builds an assistant turn by walking them, so that a reply goes
// back in the order it came where the adapter's wire format keeps one.
func (m *Message) Blocks() []Part {
	if m.Parts != nil {
		return m.Parts
	}
	parts := make([]Part, 0, len(m.Reasoning)+1+len(m.ProviderTools)+len(m.ToolCalls))
	for i := range m.Reasoning {
		parts = append(parts, Part{Kind: PartReasoning, Index: i})
	}
	if m.Content != "" {
		parts = append(parts, Part{Kind: PartText, Text: m.Content})
	}
	for i := range m.ProviderTools {
		parts = append(parts, Part{Kind: PartProviderTool, Index: i})
	}
	for i := range m.ToolCalls {
		parts = append(parts, Part{Kind: PartToolCall, Index: i})
	}
	return parts
}

// PartKind says what a Part is.
type PartKind uint8

// Kinds of part.
const (
	// PartText is a text block: Part.Text.
	PartText PartKind = iota + 1
	// PartReasoning places Message.Reasoning[Part.Index].
	PartReasoning
	// PartToolCall places Message.ToolCalls[Part.Index].
	PartToolCall
	// PartProviderTool places Message.ProviderTools[Part.Index].
	PartProviderTool
	// PartImage places Message.Images[Part.Index] (user messages and tool
	// results).
	PartImage
)

// Part is one block of a message, in order: a text block with its text,
// or the place of one of the message's other blocks (an assistant turn's
// reasoning, tool calls and provider tool blocks; a user message's
// images).
type Part struct {
	Kind PartKind
	// Text is a text block's text (PartText).
	Text string
	// Index is the block's index in the field its kind names.
	Index int
}

// ProviderTool is one content block of a tool the provider ran itself
// (Anthropic's server tools and MCP connector): the model's call or the
// tool's result, carried opaquely so that the adapter that read it writes
// it back byte for byte in content. llmrelay neither runs nor reads these
// tools.
type ProviderTool struct {
	// Kind is the provider's type of the block, e.g. "server_tool_use",
	// "web_search_tool_result".
	Kind string
	// ID is a call's id, or for a result the id of the call it answers.
	ID string
	// Name is a call's tool name; empty for a result.
	Name string
	// Input is a call's input, the JSON text the provider sent.
	Input string
	// Result is a result's content, the JSON text the provider sent.
	Result string
	// Extra holds the block's other fields as a JSON object, in the order
	// they came; "" when none.
	Extra string
	// Format names the wire format the block came in (FormatAnthropic).
	Format string
}

// Size is the block's size in bytes, as the output limit counts it.
func (t *ProviderTool) Size() int {
	return len(t.Kind) + len(t.ID) + len(t.Name) + len(t.Input) + len(t.Result) + len(t.Extra)
}

// ToolCall is a complete tool call made by the model.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the JSON text of the arguments.
	Arguments string
	// Signature is the provider's opaque signature of the call (Gemini's
	// thoughtSignature), sent back with the call as it came.
	Signature string
}

// Reasoning is one block of a model's reasoning.
type Reasoning struct {
	// Text is the readable reasoning; empty for a redacted block.
	Text string
	// Signature is the provider's opaque signature over the block.
	Signature string
	// Redacted is the opaque data of a redacted (encrypted) block.
	Redacted string
	// Format names the wire format the block came in (one of the
	// Format* constants): the adapter that reads a format is the one that
	// sends it back.
	Format string
	// ID is the provider's id of the block, when it gives one
	// (OpenRouter's reasoning_details id).
	ID string
	// Kind is the block's kind, when its format has several (OpenRouter's
	// reasoning_details type: reasoning.text, reasoning.summary,
	// reasoning.encrypted).
	Kind string
	// ProviderFormat is the format the model's own provider gave the
	// block, when a router relays it (OpenRouter's reasoning_details
	// format, e.g. "anthropic-claude-v1").
	ProviderFormat string
}

// Reasoning formats: where a reasoning block came from, so that the
// adapter of that format, and only it, sends the block back.
const (
	// FormatAnthropic: a thinking or redacted_thinking content block.
	FormatAnthropic = "anthropic"
	// FormatGemini: thought parts and a thoughtSignature of a text part.
	FormatGemini = "gemini"
	// FormatReasoningContent: the delta.reasoning_content of OpenAI-compatible
	// servers (DeepSeek, xAI, Qwen, vLLM).
	FormatReasoningContent = "openai.reasoning_content"
	// FormatReasoning: the delta.reasoning of OpenAI-compatible servers
	// (Groq, OpenRouter, newer vLLM).
	FormatReasoning = "openai.reasoning"
	// FormatOpenRouterDetails: the delta.reasoning_details of OpenRouter
	// (readable, summarised or encrypted reasoning, with the signatures
	// and ids its upstream needs back).
	FormatOpenRouterDetails = "openrouter.reasoning_details"
	// FormatMistralThinking: the thinking content parts of Mistral's
	// reasoning models (Magistral).
	FormatMistralThinking = "mistral.thinking"
	// FormatMock: the mock provider's reasoning.
	FormatMock = "mock"
)

// Generation holds sampling settings. Nil means the provider's default.
type Generation struct {
	MaxOutputTokens *int
	Temperature     *float64
	TopP            *float64
	Stop            []string
}

// Tool declares a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, as JSON; nil when unset.
	Parameters json.RawMessage
}

// ToolChoiceMode says whether the model must call a tool.
type ToolChoiceMode uint8

// Tool choice modes.
const (
	ToolChoiceAuto ToolChoiceMode = iota
	ToolChoiceNone
	ToolChoiceRequired
	ToolChoiceTool // the tool named in ToolChoice.Name
)

// ToolChoice says whether the model must call a tool.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string
	// DisableParallel asks for at most one tool call per reply. Set only
	// when the request offers tools and Mode is not ToolChoiceNone; each
	// adapter sends it in its provider's form, or, for a provider without
	// one, keeps the reply's first call (see the proto's ToolChoice).
	DisableParallel bool
}

// ResponseFormat asks for JSON that conforms to a JSON Schema.
type ResponseFormat struct {
	// Name is a short name for the schema; never empty.
	Name string
	// Schema is the JSON Schema, as JSON.
	Schema json.RawMessage
}

// EventKind says what an Event carries.
type EventKind uint8

// Event kinds.
const (
	// EventText carries Event.Text, the next piece of the reply.
	EventText EventKind = iota + 1
	// EventToolCall carries Event.ToolCall, the next piece of a tool call.
	EventToolCall
	// EventUsage carries Event.Usage, token counts for the attempt so far.
	// Later usage events replace earlier ones.
	EventUsage
	// EventFinish carries Event.FinishReason. The stream may still carry a
	// usage event before its terminator. With FinishStop, Event.Text is
	// the stop sequence that ended the reply when the provider says which
	// (Anthropic's stop_sequence), as the provider sent it; empty when it
	// does not, or when the model finished on its own. The engine keeps it
	// only when it is one of the request's Generation.Stop.
	EventFinish
	// EventReasoning carries Event.Reasoning, the next piece of a reasoning
	// block: never part of the text.
	EventReasoning
	// EventRefusal carries Event.Text, the next piece of the model's
	// refusal.
	EventRefusal
	// EventProviderTool carries Event.ProviderTool, a whole block of a
	// tool the provider ran itself: the reply's provider tool blocks are
	// numbered by the order of their events.
	EventProviderTool
)

// Add appends an event of kind to out and returns it, for the caller (an
// adapter's decoder) to fill in place. An Event is some 300 bytes: an
// event literal appended whole takes a copy of its own in the decoder's
// stack frame (the OpenAI decoder's Decode and delta were 1.3 and 1.4 KiB
// with them), and a decoder's frames are on the handler's stack as it
// relays each chunk, where they can make a call that waits 6 KiB deep
// need a 16 KiB stack instead of 8 (docs/performance.md).
//
//go:noinline
func Add(out *[]Event, kind EventKind) *Event {
	*out = append(*out, Event{Kind: kind})
	return &(*out)[len(*out)-1]
}

// Event is one thing a provider stream produced.
type Event struct {
	Kind         EventKind
	Text         string
	ToolCall     ToolCallDelta
	Reasoning    ReasoningDelta
	Usage        Usage
	FinishReason FinishReason
	ProviderTool *ProviderTool
}

// ToolCallDelta is a fragment of a tool call. Fragments with the same Index
// belong to one call; ID and Name arrive with the first. Signature, the
// call's opaque signature, arrives in one fragment, usually the first.
type ToolCallDelta struct {
	Index          int
	ID             string
	Name           string
	ArgumentsDelta string
	Signature      string
}

// MaxToolCalls is the most tool calls a reply may hold, whatever its
// provider: what a message may hold (Message.tool_calls), so that a reply
// goes back as the next request's assistant message. A call's id and name are
// all the output limit meters of it, and each costs its assembly and its
// place in the final message: a provider that sent a million one-letter
// calls within the default 2 MiB limit held some 100 MB and made a final
// message far past a client's 4 MiB receive limit. The engine fails the
// attempt whose reply starts a call past it (TooManyToolCalls), and an
// adapter that holds calls back (openai's, until their names arrive)
// bounds what it holds by it too.
const MaxToolCalls = 1024

// ErrTooManyToolCalls is the Err of the KindProtocol *Error of a reply
// with more than MaxToolCalls tool calls, which errors.Is finds.
var ErrTooManyToolCalls = errors.New("more than " + strconv.Itoa(MaxToolCalls) + " tool calls in one reply")

// TooManyToolCalls returns the KindProtocol error of a reply with more
// than MaxToolCalls tool calls: not retried, since the provider would
// send the same.
func TooManyToolCalls() *Error {
	return &Error{Kind: KindProtocol, Class: ClassProtocol, Message: "sent " + ErrTooManyToolCalls.Error(), Err: ErrTooManyToolCalls}
}

// MaxReasoningBlocks is the most reasoning blocks a reply may hold,
// whatever its provider: what a message may hold (Message.reasoning), so
// that a reply goes back as the next request's assistant message. A block
// costs the output limit only its text, signature and format name (an
// empty Anthropic thinking block, some 10 bytes), so some 230,000 fit the
// default 2 MiB limit, each assembled and kept in the final message. The
// engine fails the attempt whose reply starts a block past it
// (TooManyReasoningBlocks).
const MaxReasoningBlocks = 256

// ErrTooManyReasoningBlocks is the Err of the KindProtocol *Error of a
// reply with more than MaxReasoningBlocks reasoning blocks, which
// errors.Is finds.
var ErrTooManyReasoningBlocks = errors.New("more than " + strconv.Itoa(MaxReasoningBlocks) + " reasoning blocks in one reply")

// TooManyReasoningBlocks returns the KindProtocol error of a reply with
// more than MaxReasoningBlocks reasoning blocks: not retried, since the
// provider would send the same.
func TooManyReasoningBlocks() *Error {
	return &Error{Kind: KindProtocol, Class: ClassProtocol, Message: "sent " + ErrTooManyReasoningBlocks.Error(), Err: ErrTooManyReasoningBlocks}
}

// MaxProviderTools is the most blocks of tools the provider ran itself
// (EventProviderTool) a reply may hold, whatever its provider: what a
// message may hold (Message.provider_tools), so that a reply goes back as
// the next request's assistant message. A block costs the output limit
// only its input and result, which may be empty. The engine fails the
// attempt whose reply has a block past it (TooManyProviderTools).
const MaxProviderTools = 256

// ErrTooManyProviderTools is the Err of the KindProtocol *Error of a
// reply with more than MaxProviderTools provider tool blocks, which
// errors.Is finds.
var ErrTooManyProviderTools = errors.New("more than " + strconv.Itoa(MaxProviderTools) + " provider tool blocks in one reply")

// TooManyProviderTools returns the KindProtocol error of a reply with
// more than MaxProviderTools provider tool blocks: not retried, since the
// provider would send the same.
func TooManyProviderTools() *Error {
	return &Error{Kind: KindProtocol, Class: ClassProtocol, Message: "sent " + ErrTooManyProviderTools.Error(), Err: ErrTooManyProviderTools}
}

// ErrTooLong is the Err of the KindProtocol *Error of a reply with a
// value longer than a request's message takes of it (TooLong), which
// errors.Is finds.
var ErrTooLong = errors.New("a value longer than a message takes")

// TooLong returns the KindProtocol error of a reply whose what (a tool
// call's name, a reasoning block's id, ...) is longer than max
// characters, what a request's message takes of it: not retried, since
// the provider would send the same. The engine fails the attempt with it,
// as a reply goes back as the next request's assistant message.
func TooLong(what string, max int) *Error {
	return &Error{Kind: KindProtocol, Class: ClassProtocol,
		Message: "sent a " + what + " of more than " + strconv.Itoa(max) + " characters", Err: ErrTooLong}
}

// ReasoningDelta is a fragment of a reasoning block. Fragments with the
// same Index belong to one block, numbered from 0 in the order blocks
// start; Format arrives with the first, Signature and Redacted once each;
// ID, Kind and ProviderFormat (see Reasoning) in any fragment, each the
// block's whole value.
type ReasoningDelta struct {
	Index          int
	Text           string
	Signature      string
	Redacted       string
	Format         string
	ID             string
	Kind           string
	ProviderFormat string
}

// Usage counts tokens, the same way for every adapter: InputTokens
// includes cached ones (read and written), OutputTokens includes reasoning
// ones. The other counts say how much of those they are, where the
// provider reports it.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	// ReasoningTokens is the part of OutputTokens spent on reasoning.
	ReasoningTokens int64
	// CachedInputTokens is the part of InputTokens read from the
	// provider's prompt cache.
	CachedInputTokens int64
	// CacheCreationInputTokens is the part of InputTokens written to the
	// provider's prompt cache.
	CacheCreationInputTokens int64
}

// MaxUsageCount bounds each count of one attempt's usage: more tokens
// than a uint32 counts, or fewer than none, is a provider's error, not a
// call's size (max_output_tokens is a uint32 too). Bounded counts keep the
// costs and budget counters computed from them far from overflowing.
const MaxUsageCount = math.MaxUint32

// Bounded returns u with each count limited to 0..MaxUsageCount, and
// whether any was outside. A negative count from a provider went to the
// client as a uint64 of 18 quintillion tokens and credited its budgets.
func (u Usage) Bounded() (Usage, bool) {
	out := false
	bound := func(n *int64) {
		if *n < 0 || *n > MaxUsageCount {
			*n, out = min(max(*n, 0), MaxUsageCount), true
		}
	}
	bound(&u.InputTokens)
	bound(&u.OutputTokens)
	bound(&u.ReasoningTokens)
	bound(&u.CachedInputTokens)
	bound(&u.CacheCreationInputTokens)
	return u, out
}

// Add adds u2's counts to u's.
func (u *Usage) Add(u2 Usage) {
	u.InputTokens += u2.InputTokens
	u.OutputTokens += u2.OutputTokens
	u.ReasoningTokens += u2.ReasoningTokens
	u.CachedInputTokens += u2.CachedInputTokens
	u.CacheCreationInputTokens += u2.CacheCreationInputTokens
}

// FinishReason says why the model stopped.
type FinishReason uint8

// Finish reasons.
const (
	FinishUnspecified FinishReason = iota
	FinishStop
	FinishLength
	FinishToolCalls
	FinishContentFilter
	FinishOther
	// FinishRefusal: the model declined to answer.
	FinishRefusal
	// FinishPaused: the provider paused a long turn (Anthropic's
	// pause_turn); sending the reply back continues it.
	FinishPaused
)

// String returns the reason's snake_case name.
func (r FinishReason) String() string {
	switch r {
	case FinishStop:
		return "stop"
	case FinishLength:
		return "length"
	case FinishToolCalls:
		return "tool_calls"
	case FinishContentFilter:
		return "content_filter"
	case FinishOther:
		return "other"
	case FinishRefusal:
		return "refusal"
	case FinishPaused:
		return "paused"
	}
	return "unspecified"
}

// ErrorKind says where a provider failure happened.
type ErrorKind uint8

// Error kinds.
const (
	// KindHTTP: the provider answered the request with an error status before
	// streaming anything.
	KindHTTP ErrorKind = iota + 1
	// KindInStream: the provider reported an error inside a stream it had
	// started (under HTTP 200). Type says what kind.
	KindInStream
	// KindTransport: the connection failed or dropped, the stream was cut
	// in the middle of an event, or it ended without its terminator.
	KindTransport
	// KindProtocol: the stream arrived intact but broke the provider's wire
	// format: a complete event (or line) that does not decode or does not
	// fit the provider's schema. The provider would send the same again, so
	// it is ClassProtocol, not retried.
	KindProtocol
)

// Error is a failure reported by a provider or by the network on the way to
// it. Its Class is the adapter's verdict; internal/retry reads Class,
// ShouldRetry and the retry hint, never Message.
type Error struct {
	Kind ErrorKind
	// Class is the kind of failure, from the adapter's error table (by the
	// HTTP status and the provider's error type, see HTTPClass, or for an
	// in-stream error by its type alone). ClassUnknown when the adapter does
	// not recognise the error; see FailureClass.
	Class Class
	// Status is the HTTP status (KindHTTP), or for KindInStream the status
	// the provider's error stands for when it says (0 when it does not). It
	// is reported to clients and logs; the class does not derive from it.
	Status int
	// Type is the provider's error type or status name, e.g.
	// "overloaded_error", "insufficient_quota", "RESOURCE_EXHAUSTED".
	Type string
	// Code is the provider's error code, when it sends one apart from Type.
	Code string
	// Message is the provider's human-readable message, as the adapter
	// parsed it from the provider's error format; never a raw body.
	Message string
	// RetryAfter is the provider's retry hint (retry-after-ms, retry-after,
	// google.rpc.RetryInfo), valid when HasRetryAfter.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// ShouldRetry is the provider's x-should-retry header, nil when absent.
	ShouldRetry *bool
	// Net is what kind of network failure a KindTransport error was
	// (connection refused, DNS, TLS, timeout, ...), NetUnknown when
	// the HTTP layer could not tell or for other kinds. Clients see it
	// (ErrorInfo metadata `transport_failure`), so it never holds an
	// address.
	Net NetFailure
	// Err is the underlying error, if any (a network error, a JSON error).
	Err error
	// Raw is what the provider sent that the error is about (for
	// KindProtocol, the event that did not decode; for an error status, its
	// body and the Location of a redirect), bounded, for debug logs only: it
	// may be a proxy's page or anything else, so it is never part of Error()
	// or of any status a client sees.
	Raw string
}

// Error implements error.
func (e *Error) Error() string {
	s := "provider error"
	switch e.Kind {
	case KindHTTP:
		s = "provider returned an error status"
	case KindInStream:
		s = "provider reported an error in the stream"
	case KindTransport:
		s = "provider transport failure"
	case KindProtocol:
		s = "provider stream broke its wire format"
	}
	if e.Status != 0 {
		s += " " + strconv.Itoa(e.Status)
	}
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// FailureClass returns the error's class: Class when the adapter set one,
// else what the error's kind says by itself: ClassTransport for
// KindTransport, ClassProtocol for KindProtocol, the generic meaning of the
// status (ClassOfStatus) for KindHTTP. An in-stream error the adapter did not classify stays
// ClassUnknown: only the provider's own table knows its types.
func (e *Error) FailureClass() Class {
	switch {
	case e.Class != ClassUnknown:
		return e.Class
	case e.Kind == KindTransport:
		return ClassTransport
	case e.Kind == KindProtocol:
		return ClassProtocol
	case e.Kind == KindHTTP:
		return ClassOfStatus(e.Status)
	}
	return ClassUnknown
}

// FieldError says that a request field is invalid for a provider, for
// example a malformed mock fault list. It becomes INVALID_ARGUMENT with a
// google.rpc.BadRequest field violation (internal/apierr): reason
// INVALID_PROVIDER_OPTIONS for a field under provider_options,
// INVALID_REQUEST for any other.
type FieldError struct {
	// Field is the request field's path, e.g. "provider_options.faults[1].status".
	Field string
	// Description says what is wrong and what is expected.
	Description string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Description }

// TooManyStops is the *FieldError of an adapter whose provider takes at
// most max stop sequences (who names it) when the request has n: on
// "generation.stop", naming the bound, before any attempt instead of the
// provider's 400 after a round trip.
func TooManyStops(n, max int, who string) *FieldError {
	return &FieldError{Field: "generation.stop", Description: fmt.Sprintf("has %d stop sequences; %s takes at most %d", n, who, max)}
}
