// llmrelay: one streaming gRPC call in front of many LLM providers.
//
// A client opens `LLMService/Generate` and reads a stream of `GenerateEvent`s:
//
//   - `delta`          text, reasoning and tool-call fragments, as the model
//                      produces them;
//   - `partial_object` (structured output only) the reply parsed so far;
//   - `will_retry`     an attempt failed and another one is coming: why, after
//                      exactly how long, where it goes (a route may fall back
//                      to another provider and model), and whether what that
//                      attempt already streamed must be thrown away
//                      (`discard_partial`);
//   - `tool_progress`, `tool_result`  (with `server_tools` only) a server
//                      tool the model called is running, or returned: llmrelay
//                      runs it on an MCP server and goes on with the model's
//                      next turn;
//   - `final`          exactly one, always last: the successful attempt's message;
//   - `heartbeat`      (opt-in) nothing else was sent for a while; skip it.
//
// The one idiom every client needs:
//
//   shown := ""
//   for event in stream:
//     delta:      shown += event.delta.text            (print it)
//     will_retry: if event.will_retry.discard_partial: shown = ""   (erase it)
//     final:      the answer is event.final.message, not `shown`
//
// Every event carries its `turn` (1 unless the call runs server tools).
// With server tools, keep what was shown per turn: a `will_retry` discards
// only its own turn's output, never an earlier turn's nor a tool's result.
//
// Reasoning models also stream their reasoning (`delta.reasoning`), apart
// from the text: show it as "thinking" if you like, never as the answer; it
// follows the same discard rule as the text. The `final` message carries it
// (`message.reasoning`) with the opaque signatures some providers need: send
// that message back unchanged in the next turn's `messages`. It also keeps
// the order of the reply's blocks (`message.parts`: thinking between tool
// calls, text between the searches a provider ran itself) and the blocks
// of tools the provider ran itself (`message.provider_tools`), which go
// back as they came.
//
// Hedging (opt-in, `hedging`): when a provider is slow to start, llmrelay
// may run a second attempt beside the first; whichever shows something
// first is the one you see, and the other is cancelled before it showed
// anything. You never discard a hedge's output: the idiom above is
// unchanged. `attempt` numbers may then skip (the loser's), and
// `final.hedges` says how many extra attempts ran.
//
// A call that fails ends with a non-OK gRPC status and no `final`. The status
// always carries a `google.rpc.ErrorInfo` (but for a request over gRPC's own
// size cap: RESOURCE_EXHAUSTED below; domain "llmrelay", an UPPER_SNAKE
// reason such as RETRIES_EXHAUSTED or PROVIDER_REJECTED, and metadata such as
// `attempts`, `provider`, `provider_status`, `provider_error_type`, and
// `retry_reason`, why the last attempt failed, e.g. STALLED or OVERLOADED),
// and a `google.rpc.RetryInfo` when waiting before calling again would help.
// Every status carries the call's `request_id` in that metadata, and every
// call, failed or not, in its `llmrelay-request-id` trailer: report it
// with the status, and the server's log records of the call are found by
// it.
// Invalid requests carry a `google.rpc.BadRequest`: one field violation per
// mistake, with the field's path (`messages[0].role`), a description written
// for people and, for a rule of this file, the rule's id as its `reason`
// (`role.defined`); invalid structured output carries one too.
//
// Status codes, with the ErrorInfo reasons each comes with (stable: switch
// on the reason, never on the message):
//
//   INVALID_ARGUMENT     the request is invalid: INVALID_REQUEST (a rule broken, with a
//                        BadRequest; also a request that does not decode: not protobuf, a
//                        string that is not UTF-8, nested deeper than protobuf's 10,000
//                        levels; and a Generate or Resume stream that carries no request
//                        message, or more than one), INVALID_PROVIDER_OPTIONS, INVALID_SCHEMA (the
//                        `response_format` schema), UNKNOWN_PROVIDER or UNKNOWN_MODEL
//                        (`model` or a `fallback_models` entry names nothing configured),
//                        UNKNOWN_SERVER_TOOL; or the provider rejected it (400/404/413/422):
//                        PROVIDER_REJECTED, PROVIDER_CONTEXT_LENGTH_EXCEEDED (longer than the
//                        model's context window)
//   UNAUTHENTICATED      CREDENTIALS_MISSING, CREDENTIALS_MALFORMED (not one
//                        "authorization: Bearer <key>"), API_KEY_UNKNOWN, API_KEY_REVOKED,
//                        API_KEY_EXPIRED (the last three also end a call already running
//                        when its key is removed, revoked or expires), or
//                        AUTHENTICATION_THROTTLED (the caller's address failed too often;
//                        see RetryInfo)
//   PERMISSION_DENIED    SCOPE_MISSING (the key lacks the method's scope), MODEL_NOT_ALLOWED,
//                        SERVER_TOOL_NOT_PERMITTED, PROVIDER_OPTION_NOT_ALLOWED (the
//                        operator's policy for a provider the call may reach refuses a
//                        `provider_options` key; metadata `option` and `provider`, a
//                        BadRequest on `provider_options.<key>`; or an anthropic
//                        provider's `client_betas` a beta of `extra_headers`: metadata
//                        `beta` too, the BadRequest on
//                        `provider_options.extra_headers.<header>`); or a hook built into the
//                        server refused the call (its own reason, else REFUSED_BY_HOOK;
//                        metadata `hook`)
//   RESOURCE_EXHAUSTED   llmrelay's limits: RATE_LIMITED (the key's rate; see RetryInfo),
//                        TOO_MANY_STREAMS (the key's max_concurrent_streams),
//                        BUDGET_EXHAUSTED (a budget of the key or its team; RetryInfo until
//                        the window resets, none when the call's reservation alone is over
//                        the budget's cap and no window has room for it: metadata over_cap
//                        "true"), REQUEST_TOO_LARGE (over
//                        limits.max_request_bytes, 4 MiB by default; one over
//                        limits.max_recv_msg_bytes, 8 MiB by default, gRPC refuses itself
//                        while reading it, the one status without an ErrorInfo),
//                        OUTPUT_TOO_LARGE (the reply passed its output limit); or the
//                        provider's: its rate limit after every attempt (a reason below,
//                        `retry_reason` RATE_LIMITED), its quota or spend limit used up
//                        (PROVIDER_QUOTA_EXHAUSTED)
//   UNAVAILABLE          the provider overloaded, failing, unreachable or stalled after
//                        every attempt (a reason below); PROVIDER_BUSY (the provider's
//                        `max_concurrent` calls and its queue are full; see RetryInfo);
//                        SERVER_TOOL_UNAVAILABLE; STATE_STORE_UNAVAILABLE (the shared state
//                        store cannot be reached; see RetryInfo); SERVER_SHUTTING_DOWN (the
//                        call still ran when the server's shutdown grace ended: call again)
//   UNKNOWN              PROVIDER_PROTOCOL_ERROR (the provider sent a stream llmrelay cannot
//                        decode, not retried), PROVIDER_ERROR (an error llmrelay does not
//                        recognise)
//   FAILED_PRECONDITION  PROVIDER_AUTH_FAILED (the provider rejected llmrelay's credentials,
//                        401/403); SERVER_TOOL_REMOVED (a reload removed a server tool
//                        while the call ran); Embed: EMBEDDINGS_NOT_SUPPORTED (a target of
//                        the model cannot embed)
//   DEADLINE_EXCEEDED    DEADLINE_EXCEEDED: the call's deadline passed: the client's, brought
//                        in to the server's deadlines.max (10m by default), or the server's
//                        deadlines.default (2m) when the client set none. A call on the
//                        client's own deadline ends a twentieth of it early (250ms at
//                        most), so that this status, with its ErrorInfo, arrives before
//                        the transport resets the stream at that deadline
//   CANCELLED            CANCELLED: the client cancelled; RESUME_GRACE_EXPIRED: a resumable
//                        call whose client went away and that nobody resumed within the
//                        server's resume.grace was cancelled (its status in the server's log
//                        line and metrics; a Resume after it is NOT_FOUND)
//   ABORTED              OUTPUT_VALIDATION_FAILED (structured output still invalid after
//                        every validation retry); RESUMABLE_CALL_LOST (see Resume)
//   ALREADY_EXISTS       REQUEST_ID_IN_USE: a resumable call with this request_id runs for
//                        another request or key
//   NOT_FOUND            Resume: RESUMABLE_CALL_NOT_FOUND
//   OUT_OF_RANGE         Resume: RESUME_SEQUENCE_AHEAD
//   DATA_LOSS            Resume: RESUME_EVENTS_LOST
//   INTERNAL             INTERNAL: a bug in llmrelay; please report it with the request_id
//
// A call whose provider attempts failed has the code of the last failure
// (above) and a reason that says why llmrelay stopped: RETRIES_EXHAUSTED
// (`retry.max_attempts` used up, on every target), RETRY_BUDGET_EXHAUSTED
// (the provider's retry budget refused another attempt: too many retries
// to it in flight), RETRY_HINT_TOO_LONG (the provider asked to wait longer
// than the server's `retry.max_retry_after`, 60s by default; the RetryInfo
// carries its wait), RETRY_HINT_EXCEEDS_DEADLINE and
// RETRY_BACKOFF_EXCEEDS_DEADLINE (the wait would pass the call's
// deadline), MIDSTREAM_FAILED (output was shown and `retry.midstream` is
// MIDSTREAM_FAIL), PROVIDER_RETRY_DISALLOWED (the provider said not to
// retry: x-should-retry: false); or, for a failure never retried, what it
// was: PROVIDER_REJECTED, PROVIDER_CONTEXT_LENGTH_EXCEEDED,
// PROVIDER_AUTH_FAILED, PROVIDER_QUOTA_EXHAUSTED, PROVIDER_PROTOCOL_ERROR
// or PROVIDER_ERROR. Its metadata's `retry_reason` names the last
// failure's kind. A `will_retry`'s `cause` names what its attempt's
// failure was instead: PROVIDER_RATE_LIMITED, PROVIDER_OVERLOADED,
// PROVIDER_SERVER_ERROR, PROVIDER_TRANSPORT_ERROR, PROVIDER_STALLED; one of
// the never-retried reasons above when the call falls back to another
// target (PROVIDER_REJECTED too for a tool call the provider refused as
// malformed, tried again once); OUTPUT_VALIDATION_FAILED for a
// structured-output re-ask.
//
// A resumable call (`GenerateRequest.resumable`) outlives its stream: when
// the connection drops, the client calls `Resume` with the call's
// request_id and the sequence of the last event it received, and the
// events continue right after it (docs/resume.md).

// Code generated by protoc-gen-go-grpc. DO NOT EDIT.
// versions:
// - protoc-gen-go-grpc v1.6.0
// - protoc             (unknown)
// source: llmrelay/v1/llmrelay.proto

package llmrelayv1

import (
	context "context"
	grpc "google.golang.org/grpc"
	codes "google.golang.org/grpc/codes"
	status "google.golang.org/grpc/status"
)

// This is a compile-time assertion to ensure that this generated file
// is compatible with the grpc package it is being compiled against.
// Requires gRPC-Go v1.64.0 or later.
const _ = grpc.SupportPackageIsVersion9

const (
	LLMService_Generate_FullMethodName   = "/llmrelay.v1.LLMService/Generate"
	LLMService_ListModels_FullMethodName = "/llmrelay.v1.LLMService/ListModels"
	LLMService_Resume_FullMethodName     = "/llmrelay.v1.LLMService/Resume"
	LLMService_ListTools_FullMethodName  = "/llmrelay.v1.LLMService/ListTools"
	LLMService_Embed_FullMethodName      = "/llmrelay.v1.LLMService/Embed"
)

// LLMServiceClient is the client API for LLMService service.
//
// For semantics around ctx use and closing/ending streaming RPCs, please refer to https://pkg.go.dev/google.golang.org/grpc/?tab=doc#ClientConn.NewStream.
//
// LLMService relays generation requests to the configured LLM providers.
type LLMServiceClient interface {
	// Generate runs one model reply and streams it as events.
	//
	// The stream carries, in order and numbered by `GenerateEvent.sequence`:
	// zero or more `delta`s (and `partial_object`s) per attempt, a `will_retry`
	// between a failed attempt and the next one, and then exactly one `final`.
	// With `server_tools`, each turn whose reply called server tools is
	// followed by their `tool_progress` and `tool_result` events, then the
	// next turn's. Nothing follows the `final`. A call that fails ends with a
	// non-OK status instead of a `final`.
	//
	// llmrelay sends no response headers before the first event (unless the
	// call has a heartbeat), so a client library may transparently retry a
	// call that failed before any event (for example UNAVAILABLE while the
	// server drains). Once events flow, retries are llmrelay's job and are
	// reported as `will_retry` events. Every failed call's trailers carry
	// `grpc-retry-pushback-ms` (gRFC A6): -1, do not retry, when llmrelay
	// decided against another attempt itself, or the wait before calling
	// again when the server was only busy or shutting down; gRPC libraries
	// with a retry policy follow it.
	//
	// The response headers sent with the first delta say where the reply
	// comes from: `llmrelay-attempts` (the number of the attempt it starts
	// with), `llmrelay-provider` and `llmrelay-model` (the configured
	// provider and its model name). A call whose headers went out earlier
	// (a heartbeat) does not carry them; `final` always says the same.
	//
	// Resume sends the same events, so both return GenerateEvent.
	//
	// buf:lint:ignore RPC_RESPONSE_STANDARD_NAME
	// buf:lint:ignore RPC_REQUEST_RESPONSE_UNIQUE
	Generate(ctx context.Context, in *GenerateRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[GenerateEvent], error)
	// ListModels lists the models the caller may use: each configured
	// provider's models, and the routes, with their targets and health; and
	// the providers that accept any model name, whose models it cannot list.
	ListModels(ctx context.Context, in *ListModelsRequest, opts ...grpc.CallOption) (*ListModelsResponse, error)
	// Resume picks up a resumable call (`GenerateRequest.resumable`) whose
	// stream went away: the client's connection dropped, a proxy or sidecar
	// restarted, or the client cancelled. It streams the call's events whose
	// `sequence` is greater than `after_sequence`, exactly as Generate
	// numbered and sent them (heartbeats included), then the call's live
	// events as they come, until its `final`; a call that fails ends Resume
	// with the call's own status. Pass the `sequence` of the last event
	// received, and the stream continues right after it: nothing is missed,
	// nothing repeated. The call itself ran on without a reader: its
	// upstream request is the same one, never sent again.
	//
	// A call can be resumed while it runs and for the server's
	// `resume.grace` (60s unless configured) after it ended or after its
	// last reader went away, whichever is later; a finished call is then
	// replayed to its end. Several Resume streams may read a call at once.
	// With the state store shared in Redis (`state.store: redis`), any
	// replica serves Resume, the call running on the replica that took it;
	// with the memory store only that replica can (see docs/resume.md).
	//
	// Only the API key that started the call may resume it. Resume needs the
	// key's `generate` scope and takes a token of its rate limit, not one of
	// its `max_concurrent_streams` slots (the call it reads holds one); a
	// key's Resume streams open at once are bounded on their own, by
	// `resume.max_readers_per_key` (32 unless configured) or the key's
	// `max_concurrent_streams` if higher.
	//
	// What a resumable call promises when a server stops:
	//
	//   - A drain (SIGTERM): the replica running the call keeps running it,
	//     and keeps its events where readers find them, for the server's
	//     `shutdown_grace`, while it takes no new calls. A call that finishes
	//     within it is answered live, or by Resume (on any replica with the
	//     redis store). One still running when the grace period ends is
	//     lost: it ends ABORTED, reason RESUMABLE_CALL_LOST, for its live
	//     client and for every Resume after (its log keeps that end).
	//   - A crash (kill -9, an OOM kill, a lost node): the call is lost at
	//     once. With the redis store, a Resume on another replica sends the
	//     events the call had logged, then ABORTED, RESUMABLE_CALL_LOST,
	//     within about a second of the crash (the replicas watch each
	//     other's presence in Redis), not after a lease TTL. With the memory
	//     store the call was only ever on that replica: NOT_FOUND.
	//
	// RESUMABLE_CALL_LOST says that nothing more of the call will come. The
	// client may send the same GenerateRequest again, with the same
	// request_id (the lost call is replaced, never attached to); the new
	// call streams its reply from the start, from sequence 1, so the client
	// must discard what the lost call showed, exactly as for a will_retry
	// with discard_partial. A new call asks the provider again: clients send
	// it only when their caller allowed it (the Go client: Hooks.OnReissue).
	//
	// Errors (ErrorInfo reason in parentheses):
	//
	//	NOT_FOUND          (RESUMABLE_CALL_NOT_FOUND) no resumable call has this
	//	                   request_id: it never existed, was not resumable, its
	//	                   grace period passed, or the replica that ran it kept
	//	                   it in its own memory and is gone
	//	ABORTED            (RESUMABLE_CALL_LOST) the call is gone before its end
	//	                   (see above); send the same request again to run it
	//	                   anew, discarding what was shown
	//	PERMISSION_DENIED  (RESUME_KEY_MISMATCH) another API key started the call
	//	OUT_OF_RANGE       (RESUME_SEQUENCE_AHEAD) after_sequence is past the
	//	                   call's last event
	//	RESOURCE_EXHAUSTED (RESUME_BUFFER_FULL) the call's events outgrew the
	//	                   server's resume bounds, so it stopped being
	//	                   resumable; sent after the events that were kept
	//	RESOURCE_EXHAUSTED (TOO_MANY_STREAMS, metadata limit resume_readers) the
	//	                   key has as many Resume streams open as it may
	//	UNAVAILABLE        (STATE_STORE_UNAVAILABLE) the shared store cannot be
	//	                   read right now; see RetryInfo, then resume again
	//	UNAVAILABLE        (RESUME_INTERRUPTED) the server serving this Resume
	//	                   is shutting down; the call runs on: resume again
	//	DATA_LOSS          (RESUME_EVENTS_LOST) events the stream needs are no
	//	                   longer kept (a Redis store that restarted empty or
	//	                   trimmed the call's log), sent after the events
	//	                   before the gap: the stream never skips one
	//
	// buf:lint:ignore RPC_RESPONSE_STANDARD_NAME
	// buf:lint:ignore RPC_REQUEST_RESPONSE_UNIQUE
	Resume(ctx context.Context, in *ResumeRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[GenerateEvent], error)
	// ListTools lists the server tools the caller may offer a model
	// (`GenerateRequest.server_tools`): the tools of the MCP servers in the
	// server's config (`tools.mcp_servers`) that the config's `allow` lets
	// llmrelay offer and the caller's API key's `tools` patterns let it use,
	// each with its description, input schema and whether its server answers
	// right now; and the MCP servers the caller may use a tool of, available
	// or not. A server that is down is listed with `available: false`, with
	// the tools it had when it last answered (none if it never did), until it
	// answers again. A server none of whose tools the key may use is not
	// listed at all, as ListModels hides the models a key may not use.
	//
	// Needs the key's `generate` scope: the tools it lists are what the key
	// may use in Generate. Without API keys configured, every tool and every
	// MCP server is listed.
	ListTools(ctx context.Context, in *ListToolsRequest, opts ...grpc.CallOption) (*ListToolsResponse, error)
	// Embed turns each of a request's inputs into an embedding: a vector of
	// floats that places the text in the model's semantic space (for search,
	// clustering, retrieval). Unary: the embeddings come whole, in the order
	// of the inputs, in one response.
	//
	// The call is admitted as a Generate is (docs/embeddings.md): the key
	// needs the `embed` scope or the `generate` scope, takes a token of its
	// rate limit (no `max_concurrent_streams` slot: it streams nothing), may
	// use only the models its patterns allow; the deadline, size and
	// validation rules apply; the model resolves as Generate's does (a route
	// or "<provider>/<model>"); the budgets of the key and its team reserve
	// the inputs' estimate and are charged the input tokens at the model's
	// price; the provider's `max_concurrent` slot is held while it runs.
	// Attempts follow the server's retry policy: a transient failure (503,
	// 429, a dropped connection) is retried on the same target, and a route
	// falls back to its next target when a target fails in a way another
	// may not (the same rule as Generate's `fallback_models`). A request the
	// provider rejects is not retried.
	//
	// Providers that embed: the `openai` kind (POST /embeddings, and every
	// server compatible with it), `gemini` (batchEmbedContents) and `mock`
	// (deterministic unit vectors). The `anthropic` kind has no embeddings
	// API.
	//
	// Errors (ErrorInfo reason in parentheses), beside those every call
	// shares (UNAUTHENTICATED, PERMISSION_DENIED SCOPE_MISSING or
	// MODEL_NOT_ALLOWED, RESOURCE_EXHAUSTED RATE_LIMITED or REQUEST_TOO_LARGE
	// or BUDGET_EXHAUSTED, UNAVAILABLE PROVIDER_BUSY, DEADLINE_EXCEEDED):
	//
	//	INVALID_ARGUMENT    (INVALID_REQUEST) a rule of EmbedRequest broken, with a
	//	                    BadRequest naming the field (`inputs[3]`)
	//	INVALID_ARGUMENT    (UNKNOWN_PROVIDER, UNKNOWN_MODEL) the model does not
	//	                    resolve
	//	FAILED_PRECONDITION (EMBEDDINGS_NOT_SUPPORTED) a target of the model is
	//	                    a provider that cannot embed (metadata `provider`,
	//	                    `provider_kind`, `model`), refused before any
	//	                    upstream request
	//	INVALID_ARGUMENT    (PROVIDER_REJECTED) the provider refused the request
	//	                    (an unknown model, dimensions it does not take, an
	//	                    input over the model's context)
	//	UNAVAILABLE         (RETRIES_EXHAUSTED) every attempt failed transiently
	//	RESOURCE_EXHAUSTED  (RETRIES_EXHAUSTED, `retry_reason` RATE_LIMITED) the
	//	                    provider's rate limit, still after every attempt
	//	RESOURCE_EXHAUSTED  (PROVIDER_QUOTA_EXHAUSTED) the provider's quota or
	//	                    spend limit is used up, not retried
	//	UNKNOWN             (PROVIDER_PROTOCOL_ERROR) the provider's answer does not
	//	                    decode, holds a different number of embeddings
	//	                    than inputs, or vectors of another length than
	//	                    `dimensions` asked for (a server that does not
	//	                    shorten vectors: leave `dimensions` out)
	Embed(ctx context.Context, in *EmbedRequest, opts ...grpc.CallOption) (*EmbedResponse, error)
}

type lLMServiceClient struct {
	cc grpc.ClientConnInterface
}

func NewLLMServiceClient(cc grpc.ClientConnInterface) LLMServiceClient {
	return &lLMServiceClient{cc}
}

func (c *lLMServiceClient) Generate(ctx context.Context, in *GenerateRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[GenerateEvent], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &LLMService_ServiceDesc.Streams[0], LLMService_Generate_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[GenerateRequest, GenerateEvent]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type LLMService_GenerateClient = grpc.ServerStreamingClient[GenerateEvent]

func (c *lLMServiceClient) ListModels(ctx context.Context, in *ListModelsRequest, opts ...grpc.CallOption) (*ListModelsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ListModelsResponse)
	err := c.cc.Invoke(ctx, LLMService_ListModels_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *lLMServiceClient) Resume(ctx context.Context, in *ResumeRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[GenerateEvent], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &LLMService_ServiceDesc.Streams[1], LLMService_Resume_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[ResumeRequest, GenerateEvent]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type LLMService_ResumeClient = grpc.ServerStreamingClient[GenerateEvent]

func (c *lLMServiceClient) ListTools(ctx context.Context, in *ListToolsRequest, opts ...grpc.CallOption) (*ListToolsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ListToolsResponse)
	err := c.cc.Invoke(ctx, LLMService_ListTools_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *lLMServiceClient) Embed(ctx context.Context, in *EmbedRequest, opts ...grpc.CallOption) (*EmbedResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(EmbedResponse)
	err := c.cc.Invoke(ctx, LLMService_Embed_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LLMServiceServer is the server API for LLMService service.
// All implementations must embed UnimplementedLLMServiceServer
// for forward compatibility.
//
// LLMService relays generation requests to the configured LLM providers.
type LLMServiceServer interface {
	// Generate runs one model reply and streams it as events.
	//
	// The stream carries, in order and numbered by `GenerateEvent.sequence`:
	// zero or more `delta`s (and `partial_object`s) per attempt, a `will_retry`
	// between a failed attempt and the next one, and then exactly one `final`.
	// With `server_tools`, each turn whose reply called server tools is
	// followed by their `tool_progress` and `tool_result` events, then the
	// next turn's. Nothing follows the `final`. A call that fails ends with a
	// non-OK status instead of a `final`.
	//
	// llmrelay sends no response headers before the first event (unless the
	// call has a heartbeat), so a client library may transparently retry a
	// call that failed before any event (for example UNAVAILABLE while the
	// server drains). Once events flow, retries are llmrelay's job and are
	// reported as `will_retry` events. Every failed call's trailers carry
	// `grpc-retry-pushback-ms` (gRFC A6): -1, do not retry, when llmrelay
	// decided against another attempt itself, or the wait before calling
	// again when the server was only busy or shutting down; gRPC libraries
	// with a retry policy follow it.
	//
	// The response headers sent with the first delta say where the reply
	// comes from: `llmrelay-attempts` (the number of the attempt it starts
	// with), `llmrelay-provider` and `llmrelay-model` (the configured
	// provider and its model name). A call whose headers went out earlier
	// (a heartbeat) does not carry them; `final` always says the same.
	//
	// Resume sends the same events, so both return GenerateEvent.
	//
	// buf:lint:ignore RPC_RESPONSE_STANDARD_NAME
	// buf:lint:ignore RPC_REQUEST_RESPONSE_UNIQUE
	Generate(*GenerateRequest, grpc.ServerStreamingServer[GenerateEvent]) error
	// ListModels lists the models the caller may use: each configured
	// provider's models, and the routes, with their targets and health; and
	// the providers that accept any model name, whose models it cannot list.
	ListModels(context.Context, *ListModelsRequest) (*ListModelsResponse, error)
	// Resume picks up a resumable call (`GenerateRequest.resumable`) whose
	// stream went away: the client's connection dropped, a proxy or sidecar
	// restarted, or the client cancelled. It streams the call's events whose
	// `sequence` is greater than `after_sequence`, exactly as Generate
	// numbered and sent them (heartbeats included), then the call's live
	// events as they come, until its `final`; a call that fails ends Resume
	// with the call's own status. Pass the `sequence` of the last event
	// received, and the stream continues right after it: nothing is missed,
	// nothing repeated. The call itself ran on without a reader: its
	// upstream request is the same one, never sent again.
	//
	// A call can be resumed while it runs and for the server's
	// `resume.grace` (60s unless configured) after it ended or after its
	// last reader went away, whichever is later; a finished call is then
	// replayed to its end. Several Resume streams may read a call at once.
	// With the state store shared in Redis (`state.store: redis`), any
	// replica serves Resume, the call running on the replica that took it;
	// with the memory store only that replica can (see docs/resume.md).
	//
	// Only the API key that started the call may resume it. Resume needs the
	// key's `generate` scope and takes a token of its rate limit, not one of
	// its `max_concurrent_streams` slots (the call it reads holds one); a
	// key's Resume streams open at once are bounded on their own, by
	// `resume.max_readers_per_key` (32 unless configured) or the key's
	// `max_concurrent_streams` if higher.
	//
	// What a resumable call promises when a server stops:
	//
	//   - A drain (SIGTERM): the replica running the call keeps running it,
	//     and keeps its events where readers find them, for the server's
	//     `shutdown_grace`, while it takes no new calls. A call that finishes
	//     within it is answered live, or by Resume (on any replica with the
	//     redis store). One still running when the grace period ends is
	//     lost: it ends ABORTED, reason RESUMABLE_CALL_LOST, for its live
	//     client and for every Resume after (its log keeps that end).
	//   - A crash (kill -9, an OOM kill, a lost node): the call is lost at
	//     once. With the redis store, a Resume on another replica sends the
	//     events the call had logged, then ABORTED, RESUMABLE_CALL_LOST,
	//     within about a second of the crash (the replicas watch each
	//     other's presence in Redis), not after a lease TTL. With the memory
	//     store the call was only ever on that replica: NOT_FOUND.
	//
	// RESUMABLE_CALL_LOST says that nothing more of the call will come. The
	// client may send the same GenerateRequest again, with the same
	// request_id (the lost call is replaced, never attached to); the new
	// call streams its reply from the start, from sequence 1, so the client
	// must discard what the lost call showed, exactly as for a will_retry
	// with discard_partial. A new call asks the provider again: clients send
	// it only when their caller allowed it (the Go client: Hooks.OnReissue).
	//
	// Errors (ErrorInfo reason in parentheses):
	//
	//	NOT_FOUND          (RESUMABLE_CALL_NOT_FOUND) no resumable call has this
	//	                   request_id: it never existed, was not resumable, its
	//	                   grace period passed, or the replica that ran it kept
	//	                   it in its own memory and is gone
	//	ABORTED            (RESUMABLE_CALL_LOST) the call is gone before its end
	//	                   (see above); send the same request again to run it
	//	                   anew, discarding what was shown
	//	PERMISSION_DENIED  (RESUME_KEY_MISMATCH) another API key started the call
	//	OUT_OF_RANGE       (RESUME_SEQUENCE_AHEAD) after_sequence is past the
	//	                   call's last event
	//	RESOURCE_EXHAUSTED (RESUME_BUFFER_FULL) the call's events outgrew the
	//	                   server's resume bounds, so it stopped being
	//	                   resumable; sent after the events that were kept
	//	RESOURCE_EXHAUSTED (TOO_MANY_STREAMS, metadata limit resume_readers) the
	//	                   key has as many Resume streams open as it may
	//	UNAVAILABLE        (STATE_STORE_UNAVAILABLE) the shared store cannot be
	//	                   read right now; see RetryInfo, then resume again
	//	UNAVAILABLE        (RESUME_INTERRUPTED) the server serving this Resume
	//	                   is shutting down; the call runs on: resume again
	//	DATA_LOSS          (RESUME_EVENTS_LOST) events the stream needs are no
	//	                   longer kept (a Redis store that restarted empty or
	//	                   trimmed the call's log), sent after the events
	//	                   before the gap: the stream never skips one
	//
	// buf:lint:ignore RPC_RESPONSE_STANDARD_NAME
	// buf:lint:ignore RPC_REQUEST_RESPONSE_UNIQUE
	Resume(*ResumeRequest, grpc.ServerStreamingServer[GenerateEvent]) error
	// ListTools lists the server tools the caller may offer a model
	// (`GenerateRequest.server_tools`): the tools of the MCP servers in the
	// server's config (`tools.mcp_servers`) that the config's `allow` lets
	// llmrelay offer and the caller's API key's `tools` patterns let it use,
	// each with its description, input schema and whether its server answers
	// right now; and the MCP servers the caller may use a tool of, available
	// or not. A server that is down is listed with `available: false`, with
	// the tools it had when it last answered (none if it never did), until it
	// answers again. A server none of whose tools the key may use is not
	// listed at all, as ListModels hides the models a key may not use.
	//
	// Needs the key's `generate` scope: the tools it lists are what the key
	// may use in Generate. Without API keys configured, every tool and every
	// MCP server is listed.
	ListTools(context.Context, *ListToolsRequest) (*ListToolsResponse, error)
	// Embed turns each of a request's inputs into an embedding: a vector of
	// floats that places the text in the model's semantic space (for search,
	// clustering, retrieval). Unary: the embeddings come whole, in the order
	// of the inputs, in one response.
	//
	// The call is admitted as a Generate is (docs/embeddings.md): the key
	// needs the `embed` scope or the `generate` scope, takes a token of its
	// rate limit (no `max_concurrent_streams` slot: it streams nothing), may
	// use only the models its patterns allow; the deadline, size and
	// validation rules apply; the model resolves as Generate's does (a route
	// or "<provider>/<model>"); the budgets of the key and its team reserve
	// the inputs' estimate and are charged the input tokens at the model's
	// price; the provider's `max_concurrent` slot is held while it runs.
	// Attempts follow the server's retry policy: a transient failure (503,
	// 429, a dropped connection) is retried on the same target, and a route
	// falls back to its next target when a target fails in a way another
	// may not (the same rule as Generate's `fallback_models`). A request the
	// provider rejects is not retried.
	//
	// Providers that embed: the `openai` kind (POST /embeddings, and every
	// server compatible with it), `gemini` (batchEmbedContents) and `mock`
	// (deterministic unit vectors). The `anthropic` kind has no embeddings
	// API.
	//
	// Errors (ErrorInfo reason in parentheses), beside those every call
	// shares (UNAUTHENTICATED, PERMISSION_DENIED SCOPE_MISSING or
	// MODEL_NOT_ALLOWED, RESOURCE_EXHAUSTED RATE_LIMITED or REQUEST_TOO_LARGE
	// or BUDGET_EXHAUSTED, UNAVAILABLE PROVIDER_BUSY, DEADLINE_EXCEEDED):
	//
	//	INVALID_ARGUMENT    (INVALID_REQUEST) a rule of EmbedRequest broken, with a
	//	                    BadRequest naming the field (`inputs[3]`)
	//	INVALID_ARGUMENT    (UNKNOWN_PROVIDER, UNKNOWN_MODEL) the model does not
	//	                    resolve
	//	FAILED_PRECONDITION (EMBEDDINGS_NOT_SUPPORTED) a target of the model is
	//	                    a provider that cannot embed (metadata `provider`,
	//	                    `provider_kind`, `model`), refused before any
	//	                    upstream request
	//	INVALID_ARGUMENT    (PROVIDER_REJECTED) the provider refused the request
	//	                    (an unknown model, dimensions it does not take, an
	//	                    input over the model's context)
	//	UNAVAILABLE         (RETRIES_EXHAUSTED) every attempt failed transiently
	//	RESOURCE_EXHAUSTED  (RETRIES_EXHAUSTED, `retry_reason` RATE_LIMITED) the
	//	                    provider's rate limit, still after every attempt
	//	RESOURCE_EXHAUSTED  (PROVIDER_QUOTA_EXHAUSTED) the provider's quota or
	//	                    spend limit is used up, not retried
	//	UNKNOWN             (PROVIDER_PROTOCOL_ERROR) the provider's answer does not
	//	                    decode, holds a different number of embeddings
	//	                    than inputs, or vectors of another length than
	//	                    `dimensions` asked for (a server that does not
	//	                    shorten vectors: leave `dimensions` out)
	Embed(context.Context, *EmbedRequest) (*EmbedResponse, error)
	mustEmbedUnimplementedLLMServiceServer()
}

// UnimplementedLLMServiceServer must be embedded to have
// forward compatible implementations.
//
// NOTE: this should be embedded by value instead of pointer to avoid a nil
// pointer dereference when methods are called.
type UnimplementedLLMServiceServer struct{}

func (UnimplementedLLMServiceServer) Generate(*GenerateRequest, grpc.ServerStreamingServer[GenerateEvent]) error {
	return status.Error(codes.Unimplemented, "method Generate not implemented")
}
func (UnimplementedLLMServiceServer) ListModels(context.Context, *ListModelsRequest) (*ListModelsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method ListModels not implemented")
}
func (UnimplementedLLMServiceServer) Resume(*ResumeRequest, grpc.ServerStreamingServer[GenerateEvent]) error {
	return status.Error(codes.Unimplemented, "method Resume not implemented")
}
func (UnimplementedLLMServiceServer) ListTools(context.Context, *ListToolsRequest) (*ListToolsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method ListTools not implemented")
}
func (UnimplementedLLMServiceServer) Embed(context.Context, *EmbedRequest) (*EmbedResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Embed not implemented")
}
func (UnimplementedLLMServiceServer) mustEmbedUnimplementedLLMServiceServer() {}
func (UnimplementedLLMServiceServer) testEmbeddedByValue()                    {}

// UnsafeLLMServiceServer may be embedded to opt out of forward compatibility for this service.
// Use of this interface is not recommended, as added methods to LLMServiceServer will
// result in compilation errors.
type UnsafeLLMServiceServer interface {
	mustEmbedUnimplementedLLMServiceServer()
}

func RegisterLLMServiceServer(s grpc.ServiceRegistrar, srv LLMServiceServer) {
	// If the following call panics, it indicates UnimplementedLLMServiceServer was
	// embedded by pointer and is nil.  This will cause panics if an
	// unimplemented method is ever invoked, so we test this at initialization
	// time to prevent it from happening at runtime later due to I/O.
	if t, ok := srv.(interface{ testEmbeddedByValue() }); ok {
		t.testEmbeddedByValue()
	}
	s.RegisterService(&LLMService_ServiceDesc, srv)
}

func _LLMService_Generate_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(GenerateRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(LLMServiceServer).Generate(m, &grpc.GenericServerStream[GenerateRequest, GenerateEvent]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type LLMService_GenerateServer = grpc.ServerStreamingServer[GenerateEvent]

func _LLMService_ListModels_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ListModelsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(LLMServiceServer).ListModels(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: LLMService_ListModels_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(LLMServiceServer).ListModels(ctx, req.(*ListModelsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _LLMService_Resume_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(ResumeRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(LLMServiceServer).Resume(m, &grpc.GenericServerStream[ResumeRequest, GenerateEvent]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type LLMService_ResumeServer = grpc.ServerStreamingServer[GenerateEvent]

func _LLMService_ListTools_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ListToolsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(LLMServiceServer).ListTools(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: LLMService_ListTools_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(LLMServiceServer).ListTools(ctx, req.(*ListToolsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _LLMService_Embed_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(EmbedRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(LLMServiceServer).Embed(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: LLMService_Embed_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(LLMServiceServer).Embed(ctx, req.(*EmbedRequest))
	}
	return interceptor(ctx, in, info, handler)
}

// LLMService_ServiceDesc is the grpc.ServiceDesc for LLMService service.
// It's only intended for direct use with grpc.RegisterService,
// and not to be introspected or modified (even as a copy)
var LLMService_ServiceDesc = grpc.ServiceDesc{
	ServiceName: "llmrelay.v1.LLMService",
	HandlerType: (*LLMServiceServer)(nil),
	Methods: []grpc.MethodDesc{
		{
			MethodName: "ListModels",
			Handler:    _LLMService_ListModels_Handler,
		},
		{
			MethodName: "ListTools",
			Handler:    _LLMService_ListTools_Handler,
		},
		{
			MethodName: "Embed",
			Handler:    _LLMService_Embed_Handler,
		},
	},
	Streams: []grpc.StreamDesc{
		{
			StreamName:    "Generate",
			Handler:       _LLMService_Generate_Handler,
			ServerStreams: true,
		},
		{
			StreamName:    "Resume",
			Handler:       _LLMService_Resume_Handler,
			ServerStreams: true,
		},
	},
	Metadata: "llmrelay/v1/llmrelay.proto",
}
