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

// Code generated by protoc-gen-go. DO NOT EDIT.
// versions:
// 	protoc-gen-go v1.36.12
// 	protoc        (unknown)
// source: llmrelay/v1/llmrelay.proto

package llmrelayv1

import (
	_ "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	status "google.golang.org/genproto/googleapis/rpc/status"
	protoreflect "google.golang.org/protobuf/reflect/protoreflect"
	protoimpl "google.golang.org/protobuf/runtime/protoimpl"
	durationpb "google.golang.org/protobuf/types/known/durationpb"
	structpb "google.golang.org/protobuf/types/known/structpb"
	timestamppb "google.golang.org/protobuf/types/known/timestamppb"
	reflect "reflect"
	sync "sync"
	unsafe "unsafe"
)

const (
	// Verify that this generated code is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(20 - protoimpl.MinVersion)
	// Verify that runtime/protoimpl is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(protoimpl.MaxVersion - 20)
)

// OnOutputLimit says what happens when a reply reaches its output limit.
type OnOutputLimit int32

const (
	// Same as ON_OUTPUT_LIMIT_FAIL.
	OnOutputLimit_ON_OUTPUT_LIMIT_UNSPECIFIED OnOutputLimit = 0
	// End the call with RESOURCE_EXHAUSTED, ErrorInfo reason
	// OUTPUT_TOO_LARGE (metadata `max_output_bytes`, `provider`,
	// `attempts`), without a `final`. What the attempt streamed before the
	// limit was sent as deltas.
	OnOutputLimit_ON_OUTPUT_LIMIT_FAIL OnOutputLimit = 1
	// End the call with a `final` whose message holds the reply up to the
	// limit (the last delta cut on a character boundary, so a tool call's
	// arguments, a refusal or reasoning text may be cut too; an opaque value
	// that does not fit whole, such as a signature, a redacted reasoning
	// block or a tool call's id or name, is left out) and whose
	// `finish_reason` is FINISH_REASON_LENGTH. Not allowed with
	// `response_format`, whose object could never conform once cut:
	// INVALID_ARGUMENT.
	OnOutputLimit_ON_OUTPUT_LIMIT_TRUNCATE OnOutputLimit = 2
)

// Enum value maps for OnOutputLimit.
var (
	OnOutputLimit_name = map[int32]string{
		0: "ON_OUTPUT_LIMIT_UNSPECIFIED",
		1: "ON_OUTPUT_LIMIT_FAIL",
		2: "ON_OUTPUT_LIMIT_TRUNCATE",
	}
	OnOutputLimit_value = map[string]int32{
		"ON_OUTPUT_LIMIT_UNSPECIFIED": 0,
		"ON_OUTPUT_LIMIT_FAIL":        1,
		"ON_OUTPUT_LIMIT_TRUNCATE":    2,
	}
)

func (x OnOutputLimit) Enum() *OnOutputLimit {
	p := new(OnOutputLimit)
	*p = x
	return p
}

func (x OnOutputLimit) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (OnOutputLimit) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[0].Descriptor()
}

func (OnOutputLimit) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[0]
}

func (x OnOutputLimit) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use OnOutputLimit.Descriptor instead.
func (OnOutputLimit) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{0}
}

// ImageDetail is how closely the model looks at an image (OpenAI's
// `detail`). The openai adapter sends it as OpenAI's `detail` ("low",
// "high", "auto", "original"); OpenAI-compatible servers that do not know
// a value answer as they do (a 400 is INVALID_ARGUMENT, not retried).
// Anthropic and Gemini have no such setting: their adapters leave it
// out, whatever its value, and the provider scales the image by its own
// rules. An estimate of a request's input tokens (for budgets, and the
// usage of an attempt whose provider reported none) counts every image
// as 1,600 tokens whatever its detail; the provider's own count replaces
// the estimate where it reports one.
type ImageDetail int32

const (
	// The provider's default: nothing is sent.
	ImageDetail_IMAGE_DETAIL_UNSPECIFIED ImageDetail = 0
	// Low resolution: fewer input tokens, fast.
	ImageDetail_IMAGE_DETAIL_LOW ImageDetail = 1
	// High resolution: finer detail, more input tokens.
	ImageDetail_IMAGE_DETAIL_HIGH ImageDetail = 2
	// The provider chooses (OpenAI's "auto").
	ImageDetail_IMAGE_DETAIL_AUTO ImageDetail = 3
	// The image at its original resolution, not scaled down as "high"
	// scales it: the finest detail (small or handwritten text, dense
	// scans) and the most input tokens (OpenAI's "original", which not
	// every OpenAI model supports: see OpenAI's vision guide).
	// Anthropic and Gemini leave it out, as every detail: the image goes
	// as it is and the provider scales it as it always does.
	ImageDetail_IMAGE_DETAIL_ORIGINAL ImageDetail = 4
)

// Enum value maps for ImageDetail.
var (
	ImageDetail_name = map[int32]string{
		0: "IMAGE_DETAIL_UNSPECIFIED",
		1: "IMAGE_DETAIL_LOW",
		2: "IMAGE_DETAIL_HIGH",
		3: "IMAGE_DETAIL_AUTO",
		4: "IMAGE_DETAIL_ORIGINAL",
	}
	ImageDetail_value = map[string]int32{
		"IMAGE_DETAIL_UNSPECIFIED": 0,
		"IMAGE_DETAIL_LOW":         1,
		"IMAGE_DETAIL_HIGH":        2,
		"IMAGE_DETAIL_AUTO":        3,
		"IMAGE_DETAIL_ORIGINAL":    4,
	}
)

func (x ImageDetail) Enum() *ImageDetail {
	p := new(ImageDetail)
	*p = x
	return p
}

func (x ImageDetail) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (ImageDetail) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[1].Descriptor()
}

func (ImageDetail) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[1]
}

func (x ImageDetail) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use ImageDetail.Descriptor instead.
func (ImageDetail) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{1}
}

// Role says who wrote a message.
type Role int32

const (
	// Not allowed: every message must have a role.
	Role_ROLE_UNSPECIFIED Role = 0
	// Instructions for the model. Providers that keep system text outside the
	// conversation (Anthropic, Gemini) receive all system messages joined.
	Role_ROLE_SYSTEM Role = 1
	// The end user.
	Role_ROLE_USER Role = 2
	// The model.
	Role_ROLE_ASSISTANT Role = 3
	// The result of a tool call; set `tool_call_id`.
	Role_ROLE_TOOL Role = 4
)

// Enum value maps for Role.
var (
	Role_name = map[int32]string{
		0: "ROLE_UNSPECIFIED",
		1: "ROLE_SYSTEM",
		2: "ROLE_USER",
		3: "ROLE_ASSISTANT",
		4: "ROLE_TOOL",
	}
	Role_value = map[string]int32{
		"ROLE_UNSPECIFIED": 0,
		"ROLE_SYSTEM":      1,
		"ROLE_USER":        2,
		"ROLE_ASSISTANT":   3,
		"ROLE_TOOL":        4,
	}
)

func (x Role) Enum() *Role {
	p := new(Role)
	*p = x
	return p
}

func (x Role) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (Role) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[2].Descriptor()
}

func (Role) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[2]
}

func (x Role) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use Role.Descriptor instead.
func (Role) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{2}
}

// ToolChoiceMode says whether the model must call a tool.
type ToolChoiceMode int32

const (
	// Same as TOOL_CHOICE_MODE_AUTO.
	ToolChoiceMode_TOOL_CHOICE_MODE_UNSPECIFIED ToolChoiceMode = 0
	// The model decides.
	ToolChoiceMode_TOOL_CHOICE_MODE_AUTO ToolChoiceMode = 1
	// The model must not call a tool.
	ToolChoiceMode_TOOL_CHOICE_MODE_NONE ToolChoiceMode = 2
	// The model must call some tool: the request offers at least one
	// (`tools` or `server_tools`), or it is INVALID_ARGUMENT (INVALID_REQUEST).
	ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED ToolChoiceMode = 3
	// The model must call the tool named in `ToolChoice.name`.
	ToolChoiceMode_TOOL_CHOICE_MODE_TOOL ToolChoiceMode = 4
)

// Enum value maps for ToolChoiceMode.
var (
	ToolChoiceMode_name = map[int32]string{
		0: "TOOL_CHOICE_MODE_UNSPECIFIED",
		1: "TOOL_CHOICE_MODE_AUTO",
		2: "TOOL_CHOICE_MODE_NONE",
		3: "TOOL_CHOICE_MODE_REQUIRED",
		4: "TOOL_CHOICE_MODE_TOOL",
	}
	ToolChoiceMode_value = map[string]int32{
		"TOOL_CHOICE_MODE_UNSPECIFIED": 0,
		"TOOL_CHOICE_MODE_AUTO":        1,
		"TOOL_CHOICE_MODE_NONE":        2,
		"TOOL_CHOICE_MODE_REQUIRED":    3,
		"TOOL_CHOICE_MODE_TOOL":        4,
	}
)

func (x ToolChoiceMode) Enum() *ToolChoiceMode {
	p := new(ToolChoiceMode)
	*p = x
	return p
}

func (x ToolChoiceMode) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (ToolChoiceMode) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[3].Descriptor()
}

func (ToolChoiceMode) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[3]
}

func (x ToolChoiceMode) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use ToolChoiceMode.Descriptor instead.
func (ToolChoiceMode) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{3}
}

// OnInvalid says what happens when structured output stays invalid.
type OnInvalid int32

const (
	// Same as ON_INVALID_FAIL.
	OnInvalid_ON_INVALID_UNSPECIFIED OnInvalid = 0
	// End the call with ABORTED, ErrorInfo reason OUTPUT_VALIDATION_FAILED and
	// a google.rpc.BadRequest listing the violations.
	OnInvalid_ON_INVALID_FAIL OnInvalid = 1
	// End with a `final` whose message holds the last reply's text, with
	// `object` unset and `validation_errors` filled.
	OnInvalid_ON_INVALID_RETURN_TEXT OnInvalid = 2
)

// Enum value maps for OnInvalid.
var (
	OnInvalid_name = map[int32]string{
		0: "ON_INVALID_UNSPECIFIED",
		1: "ON_INVALID_FAIL",
		2: "ON_INVALID_RETURN_TEXT",
	}
	OnInvalid_value = map[string]int32{
		"ON_INVALID_UNSPECIFIED": 0,
		"ON_INVALID_FAIL":        1,
		"ON_INVALID_RETURN_TEXT": 2,
	}
)

func (x OnInvalid) Enum() *OnInvalid {
	p := new(OnInvalid)
	*p = x
	return p
}

func (x OnInvalid) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (OnInvalid) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[4].Descriptor()
}

func (OnInvalid) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[4]
}

func (x OnInvalid) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use OnInvalid.Descriptor instead.
func (OnInvalid) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{4}
}

// Midstream says what happens when an attempt fails after it streamed deltas.
type Midstream int32

const (
	// Same as MIDSTREAM_RESTART.
	Midstream_MIDSTREAM_UNSPECIFIED Midstream = 0
	// Send a `will_retry` with `discard_partial` set and stream the next attempt
	// from its start. The client must drop what the failed attempt showed.
	Midstream_MIDSTREAM_RESTART Midstream = 1
	// End the call with the error: output that was shown is never replaced.
	Midstream_MIDSTREAM_FAIL Midstream = 2
)

// Enum value maps for Midstream.
var (
	Midstream_name = map[int32]string{
		0: "MIDSTREAM_UNSPECIFIED",
		1: "MIDSTREAM_RESTART",
		2: "MIDSTREAM_FAIL",
	}
	Midstream_value = map[string]int32{
		"MIDSTREAM_UNSPECIFIED": 0,
		"MIDSTREAM_RESTART":     1,
		"MIDSTREAM_FAIL":        2,
	}
)

func (x Midstream) Enum() *Midstream {
	p := new(Midstream)
	*p = x
	return p
}

func (x Midstream) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (Midstream) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[5].Descriptor()
}

func (Midstream) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[5]
}

func (x Midstream) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use Midstream.Descriptor instead.
func (Midstream) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{5}
}

// HedgeTarget says where an attempt's hedges go.
type HedgeTarget int32

const (
	// Same as HEDGE_TARGET_SAME.
	HedgeTarget_HEDGE_TARGET_UNSPECIFIED HedgeTarget = 0
	// To the target (provider and model) of the attempt they race.
	HedgeTarget_HEDGE_TARGET_SAME HedgeTarget = 1
	// To the call's next targets (its route's next target, then its
	// `fallback_models`): the first hedge to the target after the attempt's,
	// the second to the one after that; to the attempt's own target when
	// there is none. A hedge that wins moves the call to its target, as a
	// fallback would (`final.provider` and `final.model` name it).
	HedgeTarget_HEDGE_TARGET_NEXT HedgeTarget = 2
)

// Enum value maps for HedgeTarget.
var (
	HedgeTarget_name = map[int32]string{
		0: "HEDGE_TARGET_UNSPECIFIED",
		1: "HEDGE_TARGET_SAME",
		2: "HEDGE_TARGET_NEXT",
	}
	HedgeTarget_value = map[string]int32{
		"HEDGE_TARGET_UNSPECIFIED": 0,
		"HEDGE_TARGET_SAME":        1,
		"HEDGE_TARGET_NEXT":        2,
	}
)

func (x HedgeTarget) Enum() *HedgeTarget {
	p := new(HedgeTarget)
	*p = x
	return p
}

func (x HedgeTarget) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (HedgeTarget) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[6].Descriptor()
}

func (HedgeTarget) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[6]
}

func (x HedgeTarget) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use HedgeTarget.Descriptor instead.
func (HedgeTarget) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{6}
}

// RetryReason says why an attempt failed.
type RetryReason int32

const (
	// Not used.
	RetryReason_RETRY_REASON_UNSPECIFIED RetryReason = 0
	// The provider rate-limited the request (HTTP 429).
	RetryReason_RETRY_REASON_RATE_LIMITED RetryReason = 1
	// The provider is overloaded (HTTP 503, 529, or an in-stream overloaded error).
	RetryReason_RETRY_REASON_OVERLOADED RetryReason = 2
	// The provider failed (HTTP 500, 502, 504, other 5xx, 408, 409, or an
	// in-stream server error).
	RetryReason_RETRY_REASON_SERVER_ERROR RetryReason = 3
	// The connection failed or dropped, the provider's stream was cut in the
	// middle of an event, or it ended without its terminator. (A complete
	// event that does not decode is not retried on the same target, which
	// would send the same: the call falls back to its next target, if any,
	// with RETRY_REASON_TARGET_REFUSED, else fails with UNKNOWN, reason
	// PROVIDER_PROTOCOL_ERROR.)
	RetryReason_RETRY_REASON_TRANSPORT RetryReason = 4
	// The provider sent nothing for `first_event_timeout` before its first
	// byte, or showed no sign of life for `stream_idle_timeout` once
	// streaming.
	RetryReason_RETRY_REASON_STALLED RetryReason = 5
	// The model's output was invalid. Structured output that did not parse
	// or did not conform to the schema: the model is asked again with the
	// validation errors. A tool call the provider refused as malformed
	// (Groq's `tool_use_failed`): the same request is tried again, once per
	// call (docs/providers.md says why).
	RetryReason_RETRY_REASON_INVALID_OUTPUT RetryReason = 6
	// The target cannot serve the call and retrying it would not change
	// that: its quota or spend limit is used up, it does not know the model
	// (HTTP 404), it refused llmrelay's credentials (401/403), its stream
	// does not decode (PROVIDER_PROTOCOL_ERROR), or the request is longer
	// than its model's context window (PROVIDER_CONTEXT_LENGTH_EXCEEDED, the
	// reason when no target can take it). Only sent when the call falls back
	// to another target (`fallback`).
	RetryReason_RETRY_REASON_TARGET_REFUSED RetryReason = 9
)

// Enum value maps for RetryReason.
var (
	RetryReason_name = map[int32]string{
		0: "RETRY_REASON_UNSPECIFIED",
		1: "RETRY_REASON_RATE_LIMITED",
		2: "RETRY_REASON_OVERLOADED",
		3: "RETRY_REASON_SERVER_ERROR",
		4: "RETRY_REASON_TRANSPORT",
		5: "RETRY_REASON_STALLED",
		6: "RETRY_REASON_INVALID_OUTPUT",
		9: "RETRY_REASON_TARGET_REFUSED",
	}
	RetryReason_value = map[string]int32{
		"RETRY_REASON_UNSPECIFIED":    0,
		"RETRY_REASON_RATE_LIMITED":   1,
		"RETRY_REASON_OVERLOADED":     2,
		"RETRY_REASON_SERVER_ERROR":   3,
		"RETRY_REASON_TRANSPORT":      4,
		"RETRY_REASON_STALLED":        5,
		"RETRY_REASON_INVALID_OUTPUT": 6,
		"RETRY_REASON_TARGET_REFUSED": 9,
	}
)

func (x RetryReason) Enum() *RetryReason {
	p := new(RetryReason)
	*p = x
	return p
}

func (x RetryReason) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (RetryReason) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[7].Descriptor()
}

func (RetryReason) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[7]
}

func (x RetryReason) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use RetryReason.Descriptor instead.
func (RetryReason) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{7}
}

// FinishReason says why the model stopped.
type FinishReason int32

const (
	// The provider did not say.
	FinishReason_FINISH_REASON_UNSPECIFIED FinishReason = 0
	// The model finished its reply, or hit a stop sequence
	// (`Final.stop_sequence` says which, when the provider reports it).
	FinishReason_FINISH_REASON_STOP FinishReason = 1
	// The reply hit `max_output_tokens`, or llmrelay cut it at
	// `output_limit.max_bytes` (ON_OUTPUT_LIMIT_TRUNCATE).
	FinishReason_FINISH_REASON_LENGTH FinishReason = 2
	// The model called one or more tools.
	FinishReason_FINISH_REASON_TOOL_CALLS FinishReason = 3
	// The provider's content filter stopped the reply.
	FinishReason_FINISH_REASON_CONTENT_FILTER FinishReason = 4
	// Any other reason the provider gave.
	FinishReason_FINISH_REASON_OTHER FinishReason = 5
	// The model declined to answer: `message.refusal` says why when the
	// provider sent a refusal (OpenAI), and Anthropic's `refusal` stop reason
	// is reported so.
	FinishReason_FINISH_REASON_REFUSAL FinishReason = 6
	// The provider paused a long turn before it was done (Anthropic's
	// `pause_turn`: its server tools, such as web search, ran for many
	// iterations). The turn is not over: to continue it, send the same
	// request again with `final.message` appended, unchanged (its `parts`
	// and `provider_tools` included), as the last message, and the model
	// carries on where it stopped. Do not add a user message after it.
	FinishReason_FINISH_REASON_PAUSED FinishReason = 7
	// The model called server tools again after `max_tool_turns` turns had
	// run them, or when their results and a next reply would have made the
	// conversation (the request's `messages` and the `transcript`) more
	// than the 2048 messages a request holds: the call ended without
	// running them. `message` holds the unrun tool calls and `transcript`
	// the conversation so far; send them back (with a higher
	// `max_tool_turns`, or after running the calls yourself) to go on.
	FinishReason_FINISH_REASON_MAX_TOOL_TURNS FinishReason = 8
)

// Enum value maps for FinishReason.
var (
	FinishReason_name = map[int32]string{
		0: "FINISH_REASON_UNSPECIFIED",
		1: "FINISH_REASON_STOP",
		2: "FINISH_REASON_LENGTH",
		3: "FINISH_REASON_TOOL_CALLS",
		4: "FINISH_REASON_CONTENT_FILTER",
		5: "FINISH_REASON_OTHER",
		6: "FINISH_REASON_REFUSAL",
		7: "FINISH_REASON_PAUSED",
		8: "FINISH_REASON_MAX_TOOL_TURNS",
	}
	FinishReason_value = map[string]int32{
		"FINISH_REASON_UNSPECIFIED":    0,
		"FINISH_REASON_STOP":           1,
		"FINISH_REASON_LENGTH":         2,
		"FINISH_REASON_TOOL_CALLS":     3,
		"FINISH_REASON_CONTENT_FILTER": 4,
		"FINISH_REASON_OTHER":          5,
		"FINISH_REASON_REFUSAL":        6,
		"FINISH_REASON_PAUSED":         7,
		"FINISH_REASON_MAX_TOOL_TURNS": 8,
	}
)

func (x FinishReason) Enum() *FinishReason {
	p := new(FinishReason)
	*p = x
	return p
}

func (x FinishReason) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (FinishReason) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[8].Descriptor()
}

func (FinishReason) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[8]
}

func (x FinishReason) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use FinishReason.Descriptor instead.
func (FinishReason) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{8}
}

// ModelKind says what a listed model is.
type ModelKind int32

const (
	// Not used.
	ModelKind_MODEL_KIND_UNSPECIFIED ModelKind = 0
	// A provider's model, called as "<provider>/<model>".
	ModelKind_MODEL_KIND_PROVIDER_MODEL ModelKind = 1
	// A route, called by its name.
	ModelKind_MODEL_KIND_ROUTE ModelKind = 2
)

// Enum value maps for ModelKind.
var (
	ModelKind_name = map[int32]string{
		0: "MODEL_KIND_UNSPECIFIED",
		1: "MODEL_KIND_PROVIDER_MODEL",
		2: "MODEL_KIND_ROUTE",
	}
	ModelKind_value = map[string]int32{
		"MODEL_KIND_UNSPECIFIED":    0,
		"MODEL_KIND_PROVIDER_MODEL": 1,
		"MODEL_KIND_ROUTE":          2,
	}
)

func (x ModelKind) Enum() *ModelKind {
	p := new(ModelKind)
	*p = x
	return p
}

func (x ModelKind) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (ModelKind) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[9].Descriptor()
}

func (ModelKind) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[9]
}

func (x ModelKind) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use ModelKind.Descriptor instead.
func (ModelKind) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{9}
}

// RouteBalance says how a route orders its targets for a call.
type RouteBalance int32

const (
	// Not used.
	RouteBalance_ROUTE_BALANCE_UNSPECIFIED RouteBalance = 0
	// In configuration order: the first healthy target serves, the next ones
	// are its fallbacks.
	RouteBalance_ROUTE_BALANCE_ORDERED RouteBalance = 1
	// Each call picks its first target at random by weight among the healthy
	// ones; the others follow as fallbacks, also by weight.
	RouteBalance_ROUTE_BALANCE_WEIGHTED RouteBalance = 2
)

// Enum value maps for RouteBalance.
var (
	RouteBalance_name = map[int32]string{
		0: "ROUTE_BALANCE_UNSPECIFIED",
		1: "ROUTE_BALANCE_ORDERED",
		2: "ROUTE_BALANCE_WEIGHTED",
	}
	RouteBalance_value = map[string]int32{
		"ROUTE_BALANCE_UNSPECIFIED": 0,
		"ROUTE_BALANCE_ORDERED":     1,
		"ROUTE_BALANCE_WEIGHTED":    2,
	}
)

func (x RouteBalance) Enum() *RouteBalance {
	p := new(RouteBalance)
	*p = x
	return p
}

func (x RouteBalance) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (RouteBalance) Descriptor() protoreflect.EnumDescriptor {
	return file_llmrelay_v1_llmrelay_proto_enumTypes[10].Descriptor()
}

func (RouteBalance) Type() protoreflect.EnumType {
	return &file_llmrelay_v1_llmrelay_proto_enumTypes[10]
}

func (x RouteBalance) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use RouteBalance.Descriptor instead.
func (RouteBalance) EnumDescriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{10}
}

// ResumeRequest picks up a resumable call where the client left it.
type ResumeRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The call's `request_id`: the one the client set on its
	// GenerateRequest, or the one the server made up and sent in the
	// `llmrelay-request-id` response header. Required, a UUID, in any case
	// (the call is found by its lower-case form).
	RequestId string `protobuf:"bytes,1,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// The `sequence` of the last event the client received: Resume sends the
	// events after it. 0 replays the call from its first event.
	AfterSequence uint64 `protobuf:"varint,2,opt,name=after_sequence,json=afterSequence,proto3" json:"after_sequence,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ResumeRequest) Reset() {
	*x = ResumeRequest{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[0]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ResumeRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ResumeRequest) ProtoMessage() {}

func (x *ResumeRequest) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[0]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ResumeRequest.ProtoReflect.Descriptor instead.
func (*ResumeRequest) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{0}
}

func (x *ResumeRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *ResumeRequest) GetAfterSequence() uint64 {
	if x != nil {
		return x.AfterSequence
	}
	return 0
}

// GenerateRequest asks for one model reply.
type GenerateRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The model: a route's name, or "<provider>/<model>".
	//
	// A route is a name the server's config defines (see docs/routes.md),
	// such as "smart": it stands for one or more targets, each a provider
	// and model, tried in order when one fails (fallback) or picked by
	// weight and health (balancing), and it may set defaults for the
	// request's unset fields (retry policy, generation settings, a system
	// prompt, a response format) and bound the call's time. A route name has
	// no "/". `ListModels` lists the routes a key may use, with their targets.
	//
	// With "<provider>/<model>", the provider is the configured provider name
	// before the first "/", the rest is passed to that provider as its model
	// name (it may itself contain "/" or ":", as in
	// "openrouter/meta-llama/llama-3-70b" or "ollama/llama3.1:8b").
	// The built-in provider is "mock" with models "echo", "lorem" and "think".
	//
	// Required, at most 256 characters. A route or provider name is 1 to 63
	// lower-case letters, digits, "_" or "-", starting with a letter or
	// digit; the model name starts with a letter or digit and may contain
	// letters, digits and . _ : / @ + -. A model that does not fit gets one
	// violation that says so in words, not the pattern. Split at "/", the
	// model name has no empty, "." or ".." segment ("g/a//b", "g/a/../b" are
	// refused): adapters that put the model into a URL path (Gemini) must not
	// be steered to another path.
	Model string `protobuf:"bytes,1,opt,name=model,proto3" json:"model,omitempty"`
	// The conversation so far, oldest first. At least one message, at most
	// 2048: room for a reply of the most tool calls `final.message` may
	// hold (1024) and a result for each, after the conversation before it.
	Messages []*Message `protobuf:"bytes,2,rep,name=messages,proto3" json:"messages,omitempty"`
	// Sampling and length settings. Unset fields use the provider's defaults.
	Generation *GenerationConfig `protobuf:"bytes,3,opt,name=generation,proto3" json:"generation,omitempty"`
	// Tools (functions) the model may call. Not offered when `response_format`
	// is set: a structured-output call always ends with the object.
	Tools []*Tool `protobuf:"bytes,4,rep,name=tools,proto3" json:"tools,omitempty"`
	// Whether and which tool the model must call. Unset means TOOL_CHOICE_MODE_AUTO.
	ToolChoice *ToolChoice `protobuf:"bytes,5,opt,name=tool_choice,json=toolChoice,proto3" json:"tool_choice,omitempty"`
	// Ask for structured output: a JSON object that conforms to a JSON Schema.
	// When set, `final.object` holds the validated object.
	ResponseFormat *ResponseFormat `protobuf:"bytes,6,opt,name=response_format,json=responseFormat,proto3" json:"response_format,omitempty"`
	// How llmrelay retries failed attempts. Unset fields take the route's
	// defaults (`defaults.retry`), then the server's (`retry`); a value above
	// the server's limit is lowered to it (each field says which).
	Retry *RetryPolicy `protobuf:"bytes,7,opt,name=retry,proto3" json:"retry,omitempty"`
	// Once an attempt's stream has started (the provider sent its first
	// byte, see `first_event_timeout`), an attempt whose provider shows no
	// sign of life for this long is abandoned as STALLED and retried like any
	// transient failure (RETRY_REASON_STALLED).
	//
	// What counts as a sign of life is any byte from the provider, not only
	// what becomes an event for you: keep-alive comments (`: keep-alive`),
	// Anthropic's `ping`, reasoning ("thinking") that is streamed, usage-only
	// chunks, server-tool blocks. So a provider that is visibly working is
	// never declared stalled, even when it sends you nothing for a while. The
	// time llmrelay spends handing an event to a slow client does not count.
	//
	// Unset takes the server default (`deadlines.stream_idle`, 30s unless
	// configured); longer values are lowered to the server maximum
	// (`deadlines.max_stream_idle`, 5m unless configured); values below the
	// server's floor (100ms unless the operator changed
	// deadlines.min_stream_timeout) are refused with INVALID_ARGUMENT naming
	// this field. At most 1h (INVALID_ARGUMENT past it).
	StreamIdleTimeout *durationpb.Duration `protobuf:"bytes,8,opt,name=stream_idle_timeout,json=streamIdleTimeout,proto3" json:"stream_idle_timeout,omitempty"`
	// A client-chosen UUID that identifies this call in llmrelay's logs and
	// errors. When empty, llmrelay makes one up.
	//
	// A UUID's case carries no meaning (RFC 9562): llmrelay knows the call
	// by the id in lower case, the form its logs, errors (ErrorInfo
	// `request_id`), the `llmrelay-request-id` header and trailer, and
	// Resume use. An id in upper or mixed case names the same call as its
	// lower-case form: a Generate repeating it in another case attaches to
	// the resumable call, and Resume finds it in either case.
	RequestId string `protobuf:"bytes,9,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// Options for the provider, checked before the first attempt.
	//
	// For the openai, anthropic and gemini providers, each top-level key is
	// merged into the body of the request llmrelay sends the provider (an
	// object value is merged key by key with an object llmrelay sets, as
	// Gemini's `generationConfig`), so the provider's own parameters are
	// usable as the provider documents them, for example:
	//
	//	openai:    {"reasoning_effort": "high", "seed": 7}
	//	anthropic: {"thinking": {"type": "enabled", "budget_tokens": 2048}, "top_k": 5}
	//	gemini:    {"generationConfig": {"topK": 40, "thinkingConfig": {"includeThoughts": true}},
	//	            "safetySettings": [...]}
	//
	// `extra_headers` (an object of header names to string values) adds HTTP
	// headers to the provider request instead (e.g. "anthropic-beta");
	// credentials, the headers that choose the account billed
	// (OpenAI-Organization, OpenAI-Project, X-Goog-User-Project: the
	// operator's, set in the provider's configuration), Host and the body's
	// framing headers cannot be set, and neither can a header the server's
	// operator configured for the provider (its `headers`, such as a
	// gateway's credential): a request never replaces one, and naming one (in
	// any case) is refused like the keys below, e.g.
	// `provider_options.extra_headers.OpenAI-Project`.
	//
	// A key llmrelay sets itself from this request (model, messages/contents,
	// system, stream, tools, tool_choice, the response format, and any field
	// the request's `generation` or other fields set) is refused with
	// INVALID_ARGUMENT, reason INVALID_PROVIDER_OPTIONS, naming the key (e.g.
	// `provider_options.model`): use the request's own field. A NaN or
	// infinite number, which JSON cannot carry, is refused too. Nothing is
	// ignored silently.
	//
	// The server's operator may allow only some keys, or forbid some, per
	// provider: the options reach the provider with the operator's
	// credentials, and some (Anthropic's `mcp_servers`, `container`, a
	// costlier `service_tier`) are the operator's to decide. A key the
	// policy of any provider the call may reach (every target of a route)
	// refuses fails the call before any attempt with PERMISSION_DENIED,
	// reason PROVIDER_OPTION_NOT_ALLOWED, metadata `option` (the key) and
	// `provider` (the provider whose policy refuses it), and a BadRequest on
	// `provider_options.<key>`. The same holds for the betas of an
	// `extra_headers` "anthropic-beta" (in any case) with an anthropic
	// provider whose configuration lists the betas clients may turn on
	// (`options.client_betas`): a beta it does not list is refused, metadata
	// `option` "extra_headers" and `beta` (its name), the BadRequest on
	// `provider_options.extra_headers.<header>`.
	//
	// The mock provider reads:
	//
	//	words:          (mock/lorem) how many words to reply with, default 32
	//	chunk_delay_ms: pause before each delta
	//	faults:         a list with one object per attempt; attempts past the end
	//	                of the list behave normally:
	//	  {}                                    a normal attempt
	//	  {"status": 503}                       fail before streaming with that HTTP status
	//	  {"status": 429, "retry_after_ms": 700} ... and that retry hint
	//	  {"drop_after": 2}                     2 deltas, then the connection drops
	//	  {"error_after": 2}                    2 deltas, then an in-stream "overloaded" error
	//	  {"stall_after": 2}                    2 deltas, then silence
	//	  {"first_delay_ms": 2000}              hold the first event back 2s (a slow
	//	                                        first token: see `hedging`)
	//	  {"malformed_after": 2}                2 deltas, then an event that does not
	//	                                        decode (PROVIDER_PROTOCOL_ERROR, not retried)
	//	  {"output": "text"}                    reply with this text instead
	//	  {"tool_calls": [{"id": "call_1", "name": "f", "arguments": "{}"}]}
	//	                                        after the text, stream these tool calls
	//	  {"usage": {"input_tokens": 12, "output_tokens": 9}}
	//	                                        report these token counts
	//	  {"reasoning": "text"}                 stream this reasoning before the
	//	                                        text (mock/think always reasons)
	//	  {"refusal": "text"}                   stream this refusal, then finish with
	//	                                        FINISH_REASON_REFUSAL
	ProviderOptions *structpb.Struct `protobuf:"bytes,10,opt,name=provider_options,json=providerOptions,proto3" json:"provider_options,omitempty"`
	// Where the call goes when `model` fails in a way another model may not
	// (rate limited, quota spent, overloaded, failing, unreachable, stalled,
	// model unknown at the provider, llmrelay's credentials refused; never
	// for a request the provider rejects as invalid): each entry a route's
	// name or "<provider>/<model>", tried in order after the targets of
	// `model`. A route entry adds its targets, in the order the route would
	// try them; its defaults do not apply. A target already listed is not
	// tried twice. Each entry must be a model the caller's key may use.
	//
	// A move to another target is announced by a `will_retry` whose
	// `next_provider` and `next_model` name it (with `fallback` set);
	// `final` names the provider and model that answered. On each target the
	// retry policy applies afresh; the call's deadline covers every target.
	// At most 8 entries, each following the rules of `model` (no empty, "."
	// or ".." segment in a model name).
	FallbackModels []string `protobuf:"bytes,15,rep,name=fallback_models,json=fallbackModels,proto3" json:"fallback_models,omitempty"`
	// Free-form labels (a team, a ticket, a feature flag), written to the
	// call's "finished call" log line as metadata.<key>=<value>, values cut at
	// 256 bytes there. Not sent to the provider. Keep secrets out of them. At
	// most 64 entries, keys up to 128 bytes, values up to 1024 bytes.
	Metadata map[string]string `protobuf:"bytes,11,rep,name=metadata,proto3" json:"metadata,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// How long an attempt may wait for the provider's first byte (the
	// response headers, then the first byte of the stream) before it is
	// abandoned as STALLED and retried (RETRY_REASON_STALLED). Reasoning
	// models may think for minutes before they send anything, so this is
	// generous; once the first byte arrived, `stream_idle_timeout` takes over.
	//
	// Unset takes the provider's default (server config
	// `providers[].first_event_timeout`, else `deadlines.first_event`,
	// 120s); longer values are lowered to the server maximum
	// (`deadlines.max_first_event`, 10m unless configured); values below
	// the server's floor (100ms unless the operator changed
	// deadlines.min_stream_timeout) are refused with INVALID_ARGUMENT naming
	// this field. At most 1h (INVALID_ARGUMENT past it). The call's deadline
	// bounds it like everything else.
	FirstEventTimeout *durationpb.Duration `protobuf:"bytes,12,opt,name=first_event_timeout,json=firstEventTimeout,proto3" json:"first_event_timeout,omitempty"`
	// How much output the reply may have, and what happens past it. Unset
	// takes the server's default limit (2 MiB unless configured) and fails
	// the call past it. See OutputLimit.
	OutputLimit *OutputLimit `protobuf:"bytes,13,opt,name=output_limit,json=outputLimit,proto3" json:"output_limit,omitempty"`
	// Send a `heartbeat` event whenever the call has sent nothing else for
	// this long, and send the response headers at once, for clients behind
	// proxies or load balancers that cut streams silent for longer than
	// their idle (read) timeout: pick an interval well below the shortest
	// such timeout on the path. Silences happen before the first event,
	// during retry waits (up to a minute) and while a model thinks.
	//
	// The trade-off: response headers commit the call, so a client library
	// can no longer retry it transparently when it fails before its first
	// event (gRPC retries a call only until it has received headers or a
	// message); llmrelay's own retries, announced by `will_retry`, still
	// happen. Unset takes the server's default (`heartbeat.interval`, off
	// unless configured); a request cannot turn off a server default.
	// Values below the server's `heartbeat.min_interval` (1s unless
	// configured) fail with INVALID_ARGUMENT.
	HeartbeatInterval *durationpb.Duration `protobuf:"bytes,14,opt,name=heartbeat_interval,json=heartbeatInterval,proto3" json:"heartbeat_interval,omitempty"`
	// Make the call resumable: it survives its stream. When the client's
	// stream goes away (a dropped connection, a proxy or sidecar restart, a
	// cancel), the call keeps running on the server, up to its deadline, and
	// its events are kept, so the client can pick it up with `Resume` from
	// the last event it received, on a new connection; the upstream request
	// is never sent twice. The client packages (client/ for Go, the
	// TypeScript and Python helpers in examples/) do it by themselves on
	// UNAVAILABLE or a dropped connection. Unset takes the route's default
	// (`defaults.resumable`; off otherwise); false turns a route's default
	// off. See docs/resume.md.
	//
	// The call is kept waiting for a reader for the server's `resume.grace`
	// (60s unless configured) after its stream goes away: when nobody
	// resumes it by then, it is cancelled, its upstream request closed. Its
	// events stay resumable for `resume.grace` after it ends. A server that
	// drains runs it on for its `shutdown_grace`; a call the server loses
	// (still running at the end of a drain, or on a replica that crashed)
	// ends ABORTED, reason RESUMABLE_CALL_LOST, and may be sent again with
	// the same request_id (see `Resume`). Meanwhile it
	// holds its API key's stream slot (`max_concurrent_streams`) and its
	// provider's `max_concurrent` slot, and it is billed like any call:
	// it runs to its end when nobody reads it.
	//
	// The call's id is its `request_id`: set one (the client packages do),
	// or read the one the server made up from the `llmrelay-request-id`
	// response header; `llmrelay-resumable: true` in the response headers
	// says the call is resumable (also when a route made it so). Resuming
	// is idempotent: a Generate with the `request_id` of a resumable call
	// still kept, from the same API key and with the same request, starts
	// nothing new and streams that call from its first event (as `Resume`
	// with `after_sequence` 0), so a gRPC library's own retry of the call
	// never runs it twice. The same `request_id` with another request, or
	// from another key, fails with ALREADY_EXISTS, reason REQUEST_ID_IN_USE;
	// a kept call that failed, or was lost (RESUMABLE_CALL_LOST), is
	// replaced by the new one.
	//
	// The events kept are bounded: per call (`resume.max_call_bytes`, 8 MiB
	// unless configured) and for all the calls of a replica
	// (`resume.max_buffered_bytes`, 256 MiB, which also counts each call's
	// own cost, so that it bounds the memory kept calls take; a replica at
	// that bound runs a new call as an ordinary one, without the
	// `llmrelay-resumable` header). A call past either bound stops
	// being resumable: it runs on for the client still reading it, but is
	// cancelled as soon as no client reads it, and `Resume` then sends the
	// events kept and fails with RESOURCE_EXHAUSTED, reason
	// RESUME_BUFFER_FULL. Heartbeats are events like the others: numbered,
	// kept and replayed, so a resumed stream has no gap in its sequence.
	Resumable *bool `protobuf:"varint,16,opt,name=resumable,proto3,oneof" json:"resumable,omitempty"`
	// Hedge a slow start: when the attempt in progress has shown nothing for
	// `hedging.hedge_after`, llmrelay starts another attempt beside it, and
	// the first of them to show something is the one you see. Cuts the long
	// tail of time to first token, at the price of extra provider requests.
	// See HedgePolicy. Unset: the route's default (`defaults.hedging`), if
	// any; otherwise no hedging. Off by default.
	Hedging *HedgePolicy `protobuf:"bytes,17,opt,name=hedging,proto3" json:"hedging,omitempty"`
	// Server tools: tools that llmrelay itself runs for this call, on the
	// MCP servers of its config (`tools.mcp_servers`), offered to the model
	// beside the request's own `tools` (which stay the client's to run).
	// Each entry is a tool's name, "<server>/<tool>" (for example
	// "everything/echo"), or a pattern on those names: "*" matches any run
	// of characters within a "/"-separated segment, "**" any run, "?" one
	// character ("everything/*" offers every tool of the server everything
	// that the key may use). `ListTools` lists the tools a key may use.
	// Unset takes the route's default (`defaults.server_tools`), if any.
	//
	// Checked before the first attempt, against the API key's `tools`
	// patterns and the server's config:
	//   - a name (no pattern characters) the key may not use fails the call
	//     with PERMISSION_DENIED, reason SERVER_TOOL_NOT_PERMITTED (metadata
	//     `tool`), before any upstream request;
	//   - a name no configured MCP server offers fails with
	//     INVALID_ARGUMENT, reason UNKNOWN_SERVER_TOOL;
	//   - a name whose MCP server is not answering fails with UNAVAILABLE,
	//     reason SERVER_TOOL_UNAVAILABLE, with a RetryInfo;
	//   - a pattern offers the tools it matches that the key may use and
	//     whose servers answer; one that matches none fails as above.
	//
	// The check is made again before every later turn, against the
	// configuration and keys then current (a reload, or the admin API for a
	// stored key, may have changed the key's patterns; a reload, the
	// servers): an entry, name or pattern, that named or matched a tool in
	// the turn before that the key may no longer use ends the call with
	// PERMISSION_DENIED, reason SERVER_TOOL_NOT_PERMITTED; one whose tools of
	// the turn before a reload removed (their MCP server or the tools
	// themselves), leaving it none, ends it with FAILED_PRECONDITION, reason
	// SERVER_TOOL_REMOVED; otherwise a pattern offers what it matches then.
	//
	// The model sees each server tool under a name its provider accepts:
	// "<server>__<tool>", with any character other than letters, digits,
	// "_" and "-" replaced by "_" (and shortened, with a hash, past 64
	// characters); `ListTools` gives it as `ServerTool.model_name`. That is
	// the name the model's tool calls carry (`ToolCallDelta.name`,
	// `ToolCall.name`); `ToolResult.name` and `Message.server_tool` give the
	// server tool's own name. A request tool (`tools`) with the same name as
	// an offered server tool fails with INVALID_ARGUMENT.
	//
	// With server tools the call becomes a loop of turns: when a turn of the
	// model ends with calls to server tools, llmrelay runs them (in
	// parallel, up to each MCP server's `max_concurrency`), streams their
	// progress (`tool_progress`) and results (`tool_result`), appends the
	// assistant message and the results to the conversation and starts the
	// next turn; until the model answers without calling a server tool, or
	// `max_tool_turns` is reached. Every event carries its `turn`. Each
	// turn's attempts are planned afresh under the call's `retry` and
	// `hedging`: `retry.max_attempts` and `hedging.max_hedges` bound each
	// turn, and attempt numbers run on across turns. The
	// `final` carries the last turn's message, the whole `transcript` of the
	// call, the usage summed over every turn and the number of `turns`.
	// When the model also calls a request tool (one of `tools`), llmrelay
	// runs that turn's server tools, then ends the call with
	// FINISH_REASON_TOOL_CALLS, the client's tool calls left to the client.
	// Not allowed with `response_format` (INVALID_ARGUMENT). See
	// docs/tools.md.
	ServerTools []string `protobuf:"bytes,20,rep,name=server_tools,json=serverTools,proto3" json:"server_tools,omitempty"`
	// The most turns that may run server tools in this call: the model
	// turn after the last of them that asks for server tools again ends the
	// call with FINISH_REASON_MAX_TOOL_TURNS, without running them (its
	// `final` carries that turn's message, its tool calls unrun, and the
	// transcript so far). So a call makes at most max_tool_turns + 1 model
	// turns. Unset takes the server's default (`tools.max_tool_turns`, 8
	// unless configured); larger values are lowered to the server's limit
	// (`tools.max_tool_turns_limit`, 32 unless configured). Only used with
	// `server_tools`.
	MaxToolTurns  *uint32 `protobuf:"varint,21,opt,name=max_tool_turns,json=maxToolTurns,proto3,oneof" json:"max_tool_turns,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GenerateRequest) Reset() {
	*x = GenerateRequest{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[1]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GenerateRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GenerateRequest) ProtoMessage() {}

func (x *GenerateRequest) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[1]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GenerateRequest.ProtoReflect.Descriptor instead.
func (*GenerateRequest) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{1}
}

func (x *GenerateRequest) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *GenerateRequest) GetMessages() []*Message {
	if x != nil {
		return x.Messages
	}
	return nil
}

func (x *GenerateRequest) GetGeneration() *GenerationConfig {
	if x != nil {
		return x.Generation
	}
	return nil
}

func (x *GenerateRequest) GetTools() []*Tool {
	if x != nil {
		return x.Tools
	}
	return nil
}

func (x *GenerateRequest) GetToolChoice() *ToolChoice {
	if x != nil {
		return x.ToolChoice
	}
	return nil
}

func (x *GenerateRequest) GetResponseFormat() *ResponseFormat {
	if x != nil {
		return x.ResponseFormat
	}
	return nil
}

func (x *GenerateRequest) GetRetry() *RetryPolicy {
	if x != nil {
		return x.Retry
	}
	return nil
}

func (x *GenerateRequest) GetStreamIdleTimeout() *durationpb.Duration {
	if x != nil {
		return x.StreamIdleTimeout
	}
	return nil
}

func (x *GenerateRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *GenerateRequest) GetProviderOptions() *structpb.Struct {
	if x != nil {
		return x.ProviderOptions
	}
	return nil
}

func (x *GenerateRequest) GetFallbackModels() []string {
	if x != nil {
		return x.FallbackModels
	}
	return nil
}

func (x *GenerateRequest) GetMetadata() map[string]string {
	if x != nil {
		return x.Metadata
	}
	return nil
}

func (x *GenerateRequest) GetFirstEventTimeout() *durationpb.Duration {
	if x != nil {
		return x.FirstEventTimeout
	}
	return nil
}

func (x *GenerateRequest) GetOutputLimit() *OutputLimit {
	if x != nil {
		return x.OutputLimit
	}
	return nil
}

func (x *GenerateRequest) GetHeartbeatInterval() *durationpb.Duration {
	if x != nil {
		return x.HeartbeatInterval
	}
	return nil
}

func (x *GenerateRequest) GetResumable() bool {
	if x != nil && x.Resumable != nil {
		return *x.Resumable
	}
	return false
}

func (x *GenerateRequest) GetHedging() *HedgePolicy {
	if x != nil {
		return x.Hedging
	}
	return nil
}

func (x *GenerateRequest) GetServerTools() []string {
	if x != nil {
		return x.ServerTools
	}
	return nil
}

func (x *GenerateRequest) GetMaxToolTurns() uint32 {
	if x != nil && x.MaxToolTurns != nil {
		return *x.MaxToolTurns
	}
	return 0
}

// OutputLimit bounds the size of a reply. Output is counted per attempt, in
// UTF-8 bytes, as it streams: every byte of the reply the client receives
// from the provider, whatever the event: the text, a refusal, the tool
// calls (ids, names, arguments, signatures) and, where the provider
// streams it, the model's reasoning (text, format, signatures, redacted
// blocks). `final` repeats the reply, so the limit also keeps `final`
// within a client's message size limit (4 MiB by default in gRPC
// libraries) when the server's limit is below it, as by default; but a
// `final.message` with `parts` (its blocks in another order than the
// usual one) carries its text twice, in `content` and in the text parts,
// so its size may be twice the limit. It goes back as the next request's
// assistant message, which the server's request bound
// (`limits.max_request_bytes`) must then take.
//
// When an attempt's output reaches the limit, llmrelay stops it at the
// provider at once (the provider's stream is cancelled, so generation, and
// its cost, stops there) and ends the call as `on_limit` says. Neither
// outcome is retried: the reply would be as long the next time.
//
// With `server_tools` the limit bounds the whole call, so that its `final`
// stays within it: the `final` carries every turn's reply and every server
// tool's result (`transcript`) and the last turn's reply again (`message`).
// Each turn's reply may be half of what the turns before it left (any
// turn may be the last), and the turn's tool results may add what its
// reply left of that, counted as they return: the result that passes it
// is cut there (`tool_result.truncated`), and once the turn's tools have
// returned the call ends as `on_limit` says (OUTPUT_TOO_LARGE, its
// metadata naming the `turn`; or a `final` with FINISH_REASON_LENGTH and
// the transcript so far). A reply cut at its turn's share ends the call
// the same way, its tool calls not run.
type OutputLimit struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The most bytes of output a reply may have. 0 takes the server's
	// default (`limits.default_max_output_bytes`); larger values are lowered
	// to the server's limit (`limits.max_output_bytes`, 3 MiB unless
	// configured): a request may ask for less, never for more.
	MaxBytes uint64 `protobuf:"varint,1,opt,name=max_bytes,json=maxBytes,proto3" json:"max_bytes,omitempty"`
	// What happens when the reply reaches `max_bytes`.
	OnLimit       OnOutputLimit `protobuf:"varint,2,opt,name=on_limit,json=onLimit,proto3,enum=llmrelay.v1.OnOutputLimit" json:"on_limit,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *OutputLimit) Reset() {
	*x = OutputLimit{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[2]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *OutputLimit) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*OutputLimit) ProtoMessage() {}

func (x *OutputLimit) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[2]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use OutputLimit.ProtoReflect.Descriptor instead.
func (*OutputLimit) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{2}
}

func (x *OutputLimit) GetMaxBytes() uint64 {
	if x != nil {
		return x.MaxBytes
	}
	return 0
}

func (x *OutputLimit) GetOnLimit() OnOutputLimit {
	if x != nil {
		return x.OnLimit
	}
	return OnOutputLimit_ON_OUTPUT_LIMIT_UNSPECIFIED
}

// Message is one turn of the conversation.
type Message struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Who wrote it: one of the roles below, never ROLE_UNSPECIFIED.
	Role Role `protobuf:"varint,1,opt,name=role,proto3,enum=llmrelay.v1.Role" json:"role,omitempty"`
	// The text of the message. For ROLE_TOOL, the tool's result. For a
	// ROLE_USER or ROLE_TOOL message with images, its text parts
	// concatenated (see `parts`).
	//
	// At most 1 GiB, the most `output_limit.max_bytes` may ask for, so that
	// a reply's text goes back as it came however large its output limit;
	// the request's size is the bound that holds first
	// (`limits.max_request_bytes`, 4 MiB unless configured, which the
	// operator keeps above `limits.max_output_bytes`). Every other field a
	// reply fills with its output (`refusal`, `Part.text`, a reasoning
	// block's text, signature and redacted data, a tool call's arguments
	// and signature, a provider tool block's input, result and extra) has
	// the same bound; each was 1 MiB (extra 64 KiB), less than a reply may
	// hold.
	Content string `protobuf:"bytes,2,opt,name=content,proto3" json:"content,omitempty"`
	// For ROLE_ASSISTANT: the tool calls the model made in this turn. At
	// most 1024, the most a reply may hold (a reply with more fails its
	// attempt, PROVIDER_PROTOCOL_ERROR): every `final.message` goes back as
	// it came. No provider bounds a turn's parallel calls by a number
	// (OpenAI's `parallel_tool_calls` and Anthropic's
	// `disable_parallel_tool_use` only switch them off).
	ToolCalls []*ToolCall `protobuf:"bytes,3,rep,name=tool_calls,json=toolCalls,proto3" json:"tool_calls,omitempty"`
	// For ROLE_TOOL: the `ToolCall.id` this message answers. A tool result
	// answers a call of the last ROLE_ASSISTANT message before it, with only
	// ROLE_TOOL (or ROLE_SYSTEM) messages between them, the results in any
	// order, one result per call; and every call of an assistant message
	// needs its result before the next ROLE_USER or ROLE_ASSISTANT message
	// (a conversation may end with calls still to answer). Otherwise the
	// request is INVALID_ARGUMENT before any attempt (reason
	// INVALID_REQUEST, a BadRequest on this field of the result, or on
	// `tool_calls[j].id` of the call left unanswered), whatever the
	// provider: OpenAI and Anthropic refuse such a conversation, and Gemini
	// would match the result to a call by its name.
	ToolCallId string `protobuf:"bytes,4,opt,name=tool_call_id,json=toolCallId,proto3" json:"tool_call_id,omitempty"`
	// For ROLE_ASSISTANT: the model's reasoning in this turn, block by block,
	// in the order the provider sent it. Never part of `content`.
	//
	// Send an assistant message back exactly as `final.message` gave it: each
	// provider needs its own blocks back to continue the conversation
	// (Anthropic requires the signed thinking blocks of a turn that called
	// tools; Gemini 3 refuses a function-calling turn without its
	// signatures; DeepSeek requires `reasoning_content` after tool calls).
	// The adapter puts them where its API expects them (see docs/providers.md)
	// and leaves out blocks another provider's format produced, whose
	// signatures it could not verify. At most 256, the most a reply may hold
	// (a reply with more fails its attempt, PROVIDER_PROTOCOL_ERROR).
	Reasoning []*Reasoning `protobuf:"bytes,5,rep,name=reasoning,proto3" json:"reasoning,omitempty"`
	// For ROLE_ASSISTANT: the model's refusal, when it declined to answer and
	// said why (OpenAI's `refusal`); `content` is then usually empty, and the
	// final's finish_reason FINISH_REASON_REFUSAL. Not sent back to providers.
	// At most 1 GiB, as `content`.
	Refusal string `protobuf:"bytes,6,opt,name=refusal,proto3" json:"refusal,omitempty"`
	// For ROLE_ASSISTANT: the order of the turn's blocks, exactly as the
	// provider sent them. The fields above hold each kind of block apart
	// (the text in `content`, the reasoning blocks in `reasoning`, the tool
	// calls in `tool_calls`, the provider's own tool blocks in
	// `provider_tools`); `parts` says in which order they came, one part per
	// block: a text block with its text, or which reasoning block, tool call
	// or provider tool block comes next. Replies interleave them: a model
	// may think, call a tool, think again and call another (Anthropic's
	// interleaved thinking), or write text between the searches it runs
	// itself.
	//
	// A message without `parts` is in the usual order: its reasoning blocks,
	// its text (one block), its provider tool blocks, its tool calls.
	// `final.message` has `parts` whenever the reply came in another order,
	// so that an empty `parts` always means the usual order. Send it back as
	// it is: every adapter sends the blocks in this order where its wire
	// format keeps one (Anthropic's content blocks, Gemini's parts,
	// Mistral's content parts), and providers that check the order
	// (Anthropic, with thinking and tool use) accept the turn only so.
	//
	// When set, it must describe the message exactly: its text parts,
	// concatenated, are `content`, and it names every reasoning block, tool
	// call and provider tool block once; otherwise the request is
	// INVALID_ARGUMENT naming the part. Edit `content` and drop `parts`
	// together, or neither.
	//
	// For ROLE_USER: the message's text and images, in order. A user
	// message's parts are text parts and image parts (`Part.image`) only,
	// and, as above, its text parts concatenated are `content`: a message
	// "What is in [image], compared with [image]?" is the parts text
	// "What is in ", image, text " compared with ", image, text "?" and the
	// content "What is in  compared with ?". Images go in no other field
	// and no other role, so a user message with images always has `parts`;
	// one without images needs none. Every adapter sends the blocks in this
	// order (docs/providers.md, "Images").
	//
	// For ROLE_TOOL: the tool's result as text and images, in order (a
	// browser or computer tool's screenshot), under the rules of a user
	// message's parts: text parts and image parts only, the text parts
	// concatenated are `content`, and a result without images needs no
	// parts. Adapters whose API takes no image in a tool result carry it
	// as close as the API allows, or refuse the request before its first
	// attempt (docs/providers.md, "Images in tool results").
	//
	// At most 4096: room for the parts of any reply, whose blocks are at
	// most 1024 tool calls, 256 reasoning blocks and 256 provider tool
	// blocks, with a text block before, between and after them.
	Parts []*Part `protobuf:"bytes,7,rep,name=parts,proto3" json:"parts,omitempty"`
	// For ROLE_ASSISTANT: the blocks of the tools the provider ran itself in
	// this turn (Anthropic's server tools: web search, web fetch, code
	// execution, tool search; its MCP connector), calls and results, in the
	// order they came (`parts` places them among the other blocks).
	// llmrelay neither runs nor reads these tools: it carries their blocks
	// so that the turn can go back to the provider as it came, which the
	// provider needs to continue a paused turn (FINISH_REASON_PAUSED) and to
	// keep the results in the conversation. Send them back unchanged; an
	// adapter leaves out blocks of another provider's format. At most 256,
	// the most a reply may hold (a reply with more fails its attempt,
	// PROVIDER_PROTOCOL_ERROR).
	ProviderTools []*ProviderToolBlock `protobuf:"bytes,8,rep,name=provider_tools,json=providerTools,proto3" json:"provider_tools,omitempty"`
	// For ROLE_TOOL messages of a `final.transcript`: the server tool llmrelay
	// ran to produce this result, as requests name it ("everything/echo").
	// Empty for the results of tools the client ran. Informational: providers
	// are sent `content` (with `parts`, its text and images) and
	// `tool_call_id` only.
	ServerTool string `protobuf:"bytes,20,opt,name=server_tool,json=serverTool,proto3" json:"server_tool,omitempty"`
	// For ROLE_TOOL messages: the tool failed, and `content` says how (an MCP
	// tool's `isError` result, or llmrelay's account of a call that could not
	// be made or did not return in time). The model is sent the content as
	// the tool's result either way, marked as a failure where the provider's
	// format has a mark: Anthropic's `is_error`, Gemini's `response.error`
	// in place of `response.output`; OpenAI's format has none.
	ToolError     bool `protobuf:"varint,21,opt,name=tool_error,json=toolError,proto3" json:"tool_error,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Message) Reset() {
	*x = Message{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[3]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Message) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Message) ProtoMessage() {}

func (x *Message) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[3]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Message.ProtoReflect.Descriptor instead.
func (*Message) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{3}
}

func (x *Message) GetRole() Role {
	if x != nil {
		return x.Role
	}
	return Role_ROLE_UNSPECIFIED
}

func (x *Message) GetContent() string {
	if x != nil {
		return x.Content
	}
	return ""
}

func (x *Message) GetToolCalls() []*ToolCall {
	if x != nil {
		return x.ToolCalls
	}
	return nil
}

func (x *Message) GetToolCallId() string {
	if x != nil {
		return x.ToolCallId
	}
	return ""
}

func (x *Message) GetReasoning() []*Reasoning {
	if x != nil {
		return x.Reasoning
	}
	return nil
}

func (x *Message) GetRefusal() string {
	if x != nil {
		return x.Refusal
	}
	return ""
}

func (x *Message) GetParts() []*Part {
	if x != nil {
		return x.Parts
	}
	return nil
}

func (x *Message) GetProviderTools() []*ProviderToolBlock {
	if x != nil {
		return x.ProviderTools
	}
	return nil
}

func (x *Message) GetServerTool() string {
	if x != nil {
		return x.ServerTool
	}
	return ""
}

func (x *Message) GetToolError() bool {
	if x != nil {
		return x.ToolError
	}
	return false
}

// Part is one block of a message, in the order of `Message.parts`. In a
// ROLE_ASSISTANT message: a text block, or the place of one of the
// message's reasoning blocks, tool calls or provider tool blocks. In a
// ROLE_USER or ROLE_TOOL message: a text block or an image. Exactly one
// of its fields is set.
type Part struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The block.
	//
	// Types that are valid to be assigned to Part:
	//
	//	*Part_Text
	//	*Part_Reasoning
	//	*Part_ToolCall
	//	*Part_ProviderTool
	//	*Part_Image
	Part          isPart_Part `protobuf_oneof:"part"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Part) Reset() {
	*x = Part{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[4]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Part) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Part) ProtoMessage() {}

func (x *Part) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[4]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Part.ProtoReflect.Descriptor instead.
func (*Part) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{4}
}

func (x *Part) GetPart() isPart_Part {
	if x != nil {
		return x.Part
	}
	return nil
}

func (x *Part) GetText() string {
	if x != nil {
		if x, ok := x.Part.(*Part_Text); ok {
			return x.Text
		}
	}
	return ""
}

func (x *Part) GetReasoning() uint32 {
	if x != nil {
		if x, ok := x.Part.(*Part_Reasoning); ok {
			return x.Reasoning
		}
	}
	return 0
}

func (x *Part) GetToolCall() uint32 {
	if x != nil {
		if x, ok := x.Part.(*Part_ToolCall); ok {
			return x.ToolCall
		}
	}
	return 0
}

func (x *Part) GetProviderTool() uint32 {
	if x != nil {
		if x, ok := x.Part.(*Part_ProviderTool); ok {
			return x.ProviderTool
		}
	}
	return 0
}

func (x *Part) GetImage() *Image {
	if x != nil {
		if x, ok := x.Part.(*Part_Image); ok {
			return x.Image
		}
	}
	return nil
}

type isPart_Part interface {
	isPart_Part()
}

type Part_Text struct {
	// A text block: its text, a piece of `Message.content` (the text
	// parts of a message, concatenated, are its `content`). At most
	// 1 GiB, as `Message.content`.
	Text string `protobuf:"bytes,1,opt,name=text,proto3,oneof"`
}

type Part_Reasoning struct {
	// `Message.reasoning[reasoning]` comes here.
	Reasoning uint32 `protobuf:"varint,2,opt,name=reasoning,proto3,oneof"`
}

type Part_ToolCall struct {
	// `Message.tool_calls[tool_call]` comes here.
	ToolCall uint32 `protobuf:"varint,3,opt,name=tool_call,json=toolCall,proto3,oneof"`
}

type Part_ProviderTool struct {
	// `Message.provider_tools[provider_tool]` comes here.
	ProviderTool uint32 `protobuf:"varint,4,opt,name=provider_tool,json=providerTool,proto3,oneof"`
}

type Part_Image struct {
	// ROLE_USER and ROLE_TOOL only: an image, here among the message's
	// text (a user's image, or a tool result's screenshot). The model
	// must accept image input (a vision model); a provider that refuses
	// images for the model fails the call as it refuses any invalid
	// request.
	Image *Image `protobuf:"bytes,5,opt,name=image,proto3,oneof"`
}

func (*Part_Text) isPart_Part() {}

func (*Part_Reasoning) isPart_Part() {}

func (*Part_ToolCall) isPart_Part() {}

func (*Part_ProviderTool) isPart_Part() {}

func (*Part_Image) isPart_Part() {}

// Image is an image a user, or a tool's result, sends the model
// (`Part.image`): fetched by the provider from an https URL, or sent
// inline as its encoded bytes.
// Exactly one of `url` and `data` is set.
//
// Inline images count towards the request's size, which the server
// bounds (`limits.max_request_bytes`, 4 MiB unless configured, within
// gRPC's `limits.max_recv_msg_bytes`, 8 MiB unless configured): raise
// them to send larger images. Providers bound images further (Anthropic:
// 5 MB an image; OpenAI: 20 MB; Gemini: 20 MB for the whole request
// inline) and refuse larger ones as an invalid request. For budgets and
// estimated usage an image counts as a fixed 1,600 input tokens, whatever
// its size (docs/providers.md, "Images").
type Image struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Where the image comes from.
	//
	// Types that are valid to be assigned to Source:
	//
	//	*Image_Url
	//	*Image_Data
	Source isImage_Source `protobuf_oneof:"source"`
	// The image's media type: "image/png", "image/jpeg", "image/gif" or
	// "image/webp". Required with `data`; with `url`, optional (the
	// provider reads the type from the fetched image) and checked the same
	// when set.
	MediaType string `protobuf:"bytes,3,opt,name=media_type,json=mediaType,proto3" json:"media_type,omitempty"`
	// How closely the model should look: a hint for OpenAI's `detail`
	// (low-resolution, high-resolution or original-resolution processing),
	// which other providers do not have and leave out. Unset leaves the
	// provider's default (OpenAI's "auto").
	Detail        ImageDetail `protobuf:"varint,4,opt,name=detail,proto3,enum=llmrelay.v1.ImageDetail" json:"detail,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Image) Reset() {
	*x = Image{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[5]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Image) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Image) ProtoMessage() {}

func (x *Image) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[5]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Image.ProtoReflect.Descriptor instead.
func (*Image) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{5}
}

func (x *Image) GetSource() isImage_Source {
	if x != nil {
		return x.Source
	}
	return nil
}

func (x *Image) GetUrl() string {
	if x != nil {
		if x, ok := x.Source.(*Image_Url); ok {
			return x.Url
		}
	}
	return ""
}

func (x *Image) GetData() []byte {
	if x != nil {
		if x, ok := x.Source.(*Image_Data); ok {
			return x.Data
		}
	}
	return nil
}

func (x *Image) GetMediaType() string {
	if x != nil {
		return x.MediaType
	}
	return ""
}

func (x *Image) GetDetail() ImageDetail {
	if x != nil {
		return x.Detail
	}
	return ImageDetail_IMAGE_DETAIL_UNSPECIFIED
}

type isImage_Source interface {
	isImage_Source()
}

type Image_Url struct {
	// An https URL the provider fetches the image from, at most 8,192
	// characters, that names a host: "https://", "https:///x.png" and
	// "https://:443/x", which no provider can fetch, are refused (rule
	// `image.url_host`). Other schemes are refused, data: URLs included:
	// send those bytes in `data`. Providers that cannot fetch URLs
	// (Gemini) refuse a request with one before its first attempt:
	// INVALID_ARGUMENT naming this field and the provider.
	Url string `protobuf:"bytes,1,opt,name=url,proto3,oneof"`
}

type Image_Data struct {
	// The image itself: the file's bytes as they are (PNG, JPEG, GIF or
	// WebP; not base64: gRPC carries bytes, and the adapters encode them
	// as their provider needs). 1 byte to 20 MiB; set `media_type`.
	Data []byte `protobuf:"bytes,2,opt,name=data,proto3,oneof"`
}

func (*Image_Url) isImage_Source() {}

func (*Image_Data) isImage_Source() {}

// ProviderToolBlock is one content block of a tool that the provider ran
// itself during the turn (a "server tool"): the model's call of the tool,
// or the tool's result, as the provider sent it. llmrelay carries it
// opaquely: `kind`, `id` and `name` say what it is, `input` and `result`
// hold the provider's JSON as it came, and `extra` whatever else the block
// had, so that the adapter that read it writes it back byte for byte in
// content. Do not change it. A reply's block whose kind, id, name or
// format is longer than its bound here fails its attempt as a protocol
// error (PROVIDER_PROTOCOL_ERROR, not retried), as a message could not
// take it back.
type ProviderToolBlock struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The provider's type of the block. Anthropic: "server_tool_use" (a call
	// of a server tool), "web_search_tool_result", "web_fetch_tool_result",
	// "code_execution_tool_result", "bash_code_execution_tool_result",
	// "text_editor_code_execution_tool_result", "tool_search_tool_result"
	// (results), "mcp_tool_use" and "mcp_tool_result" (its MCP connector),
	// and the kinds it adds later.
	Kind string `protobuf:"bytes,1,opt,name=kind,proto3" json:"kind,omitempty"`
	// The tool call's id: a call's own id, or for a result the id of the
	// call it answers (Anthropic's `tool_use_id`).
	Id string `protobuf:"bytes,2,opt,name=id,proto3" json:"id,omitempty"`
	// For a call: the tool's name, e.g. "web_search". Empty for a result.
	Name string `protobuf:"bytes,3,opt,name=name,proto3" json:"name,omitempty"`
	// For a call: its input, the JSON text the provider sent (an object),
	// e.g. `{"query": "San Francisco weather today"}`. Empty for a result.
	// At most 1 GiB, as `Message.content` (and `result` and `extra`): the
	// output limit counts the whole block.
	Input string `protobuf:"bytes,4,opt,name=input,proto3" json:"input,omitempty"`
	// For a result: the result, the JSON text the provider sent (Anthropic:
	// the block's `content`, a list of results or an error object; a web
	// search's results carry `encrypted_content` the provider needs back).
	// Empty for a call.
	Result string `protobuf:"bytes,5,opt,name=result,proto3" json:"result,omitempty"`
	// The block's other fields, as a JSON object (Anthropic's `caller`, an
	// MCP block's `server_name` or `is_error`); empty when it had none.
	Extra string `protobuf:"bytes,6,opt,name=extra,proto3" json:"extra,omitempty"`
	// The wire format the block came in, set by llmrelay: "anthropic". An
	// adapter sends back the blocks of its own formats only. Keep it as it
	// is.
	Format        string `protobuf:"bytes,7,opt,name=format,proto3" json:"format,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ProviderToolBlock) Reset() {
	*x = ProviderToolBlock{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[6]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ProviderToolBlock) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ProviderToolBlock) ProtoMessage() {}

func (x *ProviderToolBlock) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[6]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ProviderToolBlock.ProtoReflect.Descriptor instead.
func (*ProviderToolBlock) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{6}
}

func (x *ProviderToolBlock) GetKind() string {
	if x != nil {
		return x.Kind
	}
	return ""
}

func (x *ProviderToolBlock) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *ProviderToolBlock) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ProviderToolBlock) GetInput() string {
	if x != nil {
		return x.Input
	}
	return ""
}

func (x *ProviderToolBlock) GetResult() string {
	if x != nil {
		return x.Result
	}
	return ""
}

func (x *ProviderToolBlock) GetExtra() string {
	if x != nil {
		return x.Extra
	}
	return ""
}

func (x *ProviderToolBlock) GetFormat() string {
	if x != nil {
		return x.Format
	}
	return ""
}

// Reasoning is one block of a model's reasoning (its "thinking"), as the
// provider sent it: readable text, or an opaque block, and the opaque
// signature the provider needs to accept the block back in a later turn.
// Signatures and redacted data are not meant to be read: keep them byte
// for byte. A reply's block whose format, id, kind or provider format is
// longer than its bound here fails its attempt as a protocol error
// (PROVIDER_PROTOCOL_ERROR, not retried): the provider needs them back as
// they came, and a message could not take them.
type Reasoning struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The reasoning text (Anthropic's `thinking`, Gemini's thought summary,
	// `reasoning_content` of OpenAI-compatible servers, Magistral's thinking
	// parts). Empty for a redacted block or a signature alone. At most
	// 1 GiB, as `Message.content` (and `signature` and `redacted`).
	Text string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	// Opaque: the provider's signature over the block (Anthropic's thinking
	// `signature`, Gemini's `thoughtSignature` of a text part).
	Signature string `protobuf:"bytes,2,opt,name=signature,proto3" json:"signature,omitempty"`
	// Opaque: reasoning the provider encrypted or redacted (the `data` of
	// Anthropic's `redacted_thinking`). Never shown.
	Redacted string `protobuf:"bytes,3,opt,name=redacted,proto3" json:"redacted,omitempty"`
	// The wire format the block came in, set by llmrelay: "anthropic",
	// "gemini", "openai.reasoning_content", "openai.reasoning",
	// "openrouter.reasoning_details", "mistral.thinking" or "mock". An
	// adapter sends back the blocks of its own formats only. Keep it as it
	// is. Empty, or a name like those: a lower-case letter, then lower-case
	// letters, digits, ".", "_" or "-", at most 64 in all (a format the
	// answering adapter leaves out is named in the final's
	// `reasoning.dropped` annotation, a comma-separated list, so a name
	// that could break it up or carry control characters into logs is
	// INVALID_ARGUMENT, before any attempt).
	Format string `protobuf:"bytes,4,opt,name=format,proto3" json:"format,omitempty"`
	// Opaque: the provider's id of the block, when it gives one
	// (OpenRouter's reasoning_details `id`, such as the `rs_…` id of an
	// OpenAI reasoning item, which must come back with its encrypted data).
	// Keep it as it is.
	Id string `protobuf:"bytes,5,opt,name=id,proto3" json:"id,omitempty"`
	// What kind of block it is, when its format has several (OpenRouter's
	// reasoning_details `type`: "reasoning.text" (readable `text`, maybe a
	// `signature`), "reasoning.summary" (`text` is a summary of the
	// reasoning), "reasoning.encrypted" (the block is in `redacted`)).
	// Empty for formats of one kind. Keep it as it is.
	Kind string `protobuf:"bytes,6,opt,name=kind,proto3" json:"kind,omitempty"`
	// The format the model's own provider gave the block, when a router
	// relays it (OpenRouter's reasoning_details `format`:
	// "anthropic-claude-v1", "openai-responses-v1", "xai-responses-v1",
	// "google-gemini-v1", ...); the router needs it back to hand the block
	// to that provider. Keep it as it is.
	ProviderFormat string `protobuf:"bytes,7,opt,name=provider_format,json=providerFormat,proto3" json:"provider_format,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *Reasoning) Reset() {
	*x = Reasoning{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[7]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Reasoning) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Reasoning) ProtoMessage() {}

func (x *Reasoning) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[7]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Reasoning.ProtoReflect.Descriptor instead.
func (*Reasoning) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{7}
}

func (x *Reasoning) GetText() string {
	if x != nil {
		return x.Text
	}
	return ""
}

func (x *Reasoning) GetSignature() string {
	if x != nil {
		return x.Signature
	}
	return ""
}

func (x *Reasoning) GetRedacted() string {
	if x != nil {
		return x.Redacted
	}
	return ""
}

func (x *Reasoning) GetFormat() string {
	if x != nil {
		return x.Format
	}
	return ""
}

func (x *Reasoning) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *Reasoning) GetKind() string {
	if x != nil {
		return x.Kind
	}
	return ""
}

func (x *Reasoning) GetProviderFormat() string {
	if x != nil {
		return x.ProviderFormat
	}
	return ""
}

// ToolCall is one complete call the model made to a tool.
type ToolCall struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The call's id: the provider's, or, for a provider that sent none (vLLM
	// and some other OpenAI-compatible servers, Gemini), one llmrelay made
	// (`call_` and a suffix). Echo it in the ROLE_TOOL message that carries
	// the result. At most 256 characters: a provider's longer id is cut to
	// fit, with `_` and 8 hex digits of a hash of the whole id (the same in
	// the call's `ToolCallDelta` and in `final.message`), so that the reply
	// goes back as it came.
	Id string `protobuf:"bytes,1,opt,name=id,proto3" json:"id,omitempty"`
	// The tool's name, as declared in `Tool.name`. A reply whose call has a
	// name longer than 128 characters (which no `Tool.name` is) fails its
	// attempt as a protocol error (PROVIDER_PROTOCOL_ERROR, not retried).
	Name string `protobuf:"bytes,2,opt,name=name,proto3" json:"name,omitempty"`
	// The arguments as the JSON text the model produced (normally an object).
	// At most 1 GiB, as `Message.content` (and `signature`).
	Arguments string `protobuf:"bytes,3,opt,name=arguments,proto3" json:"arguments,omitempty"`
	// Opaque: the provider's signature of the call (Gemini's
	// `thoughtSignature` on a function call), which the provider needs back
	// with the call in the next turn; Gemini 3 refuses the turn without it.
	// Set in `final.message`, and in the `ToolCallDelta` that brought it;
	// send it back byte for byte.
	Signature     string `protobuf:"bytes,4,opt,name=signature,proto3" json:"signature,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ToolCall) Reset() {
	*x = ToolCall{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[8]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolCall) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolCall) ProtoMessage() {}

func (x *ToolCall) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[8]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolCall.ProtoReflect.Descriptor instead.
func (*ToolCall) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{8}
}

func (x *ToolCall) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *ToolCall) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ToolCall) GetArguments() string {
	if x != nil {
		return x.Arguments
	}
	return ""
}

func (x *ToolCall) GetSignature() string {
	if x != nil {
		return x.Signature
	}
	return ""
}

// GenerationConfig holds sampling and length settings. An unset field
// takes the route's default (`defaults.generation`), if any, else the
// provider's.
type GenerationConfig struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The most tokens the model may produce, 1 to 1,000,000. Sent as the
	// provider's own bound (`max_tokens` or `max_completion_tokens`,
	// Gemini's `maxOutputTokens`). Unset: the provider's default; Anthropic,
	// whose API requires one, is sent 4096 (with extended thinking in
	// `provider_options` whose `budget_tokens` is 4096 or more, that budget
	// plus 4096, as the API wants more than the budget). A provider that
	// takes fewer for the model rejects the request (PROVIDER_REJECTED).
	MaxOutputTokens *uint32 `protobuf:"varint,1,opt,name=max_output_tokens,json=maxOutputTokens,proto3,oneof" json:"max_output_tokens,omitempty"`
	// Sampling temperature, 0 to 2, sent as it is. Anthropic takes 0 to 1:
	// above 1, a call that may reach an `anthropic` target is refused before
	// any attempt (INVALID_ARGUMENT, INVALID_REQUEST, a BadRequest on
	// generation.temperature naming the range).
	Temperature *float32 `protobuf:"fixed32,2,opt,name=temperature,proto3,oneof" json:"temperature,omitempty"`
	// Nucleus sampling: consider only the tokens within this probability
	// mass, 0 to 1.
	TopP *float32 `protobuf:"fixed32,3,opt,name=top_p,json=topP,proto3,oneof" json:"top_p,omitempty"`
	// Sequences at which the model stops producing output: at most 16, each
	// 1 to 256 bytes. Providers take fewer: OpenAI's and Azure OpenAI's
	// Chat Completions at most 4, Gemini at most 5. More than a target the
	// call may reach takes (any target of the route, or of
	// `fallback_models`) is refused before any attempt: INVALID_ARGUMENT,
	// a BadRequest on `generation.stop` naming the bound. Other
	// OpenAI-compatible servers get every sequence. `Final.stop_sequence`
	// says which one ended the reply, where the provider tells.
	Stop          []string `protobuf:"bytes,4,rep,name=stop,proto3" json:"stop,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GenerationConfig) Reset() {
	*x = GenerationConfig{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[9]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GenerationConfig) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GenerationConfig) ProtoMessage() {}

func (x *GenerationConfig) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[9]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GenerationConfig.ProtoReflect.Descriptor instead.
func (*GenerationConfig) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{9}
}

func (x *GenerationConfig) GetMaxOutputTokens() uint32 {
	if x != nil && x.MaxOutputTokens != nil {
		return *x.MaxOutputTokens
	}
	return 0
}

func (x *GenerationConfig) GetTemperature() float32 {
	if x != nil && x.Temperature != nil {
		return *x.Temperature
	}
	return 0
}

func (x *GenerationConfig) GetTopP() float32 {
	if x != nil && x.TopP != nil {
		return *x.TopP
	}
	return 0
}

func (x *GenerationConfig) GetStop() []string {
	if x != nil {
		return x.Stop
	}
	return nil
}

// Tool declares a function the model may call.
type Tool struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The function's name: 1 to 64 letters, digits, "_" or "-".
	Name string `protobuf:"bytes,1,opt,name=name,proto3" json:"name,omitempty"`
	// What the function does and when to call it; the model reads this.
	Description string `protobuf:"bytes,2,opt,name=description,proto3" json:"description,omitempty"`
	// The arguments, as a JSON Schema object (for example
	// {"type": "object", "properties": {"city": {"type": "string"}}}).
	Parameters    *structpb.Struct `protobuf:"bytes,3,opt,name=parameters,proto3" json:"parameters,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Tool) Reset() {
	*x = Tool{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[10]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Tool) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Tool) ProtoMessage() {}

func (x *Tool) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[10]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Tool.ProtoReflect.Descriptor instead.
func (*Tool) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{10}
}

func (x *Tool) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *Tool) GetDescription() string {
	if x != nil {
		return x.Description
	}
	return ""
}

func (x *Tool) GetParameters() *structpb.Struct {
	if x != nil {
		return x.Parameters
	}
	return nil
}

// ToolChoice says whether the model must call a tool.
type ToolChoice struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The mode.
	Mode ToolChoiceMode `protobuf:"varint,1,opt,name=mode,proto3,enum=llmrelay.v1.ToolChoiceMode" json:"mode,omitempty"`
	// With TOOL_CHOICE_MODE_TOOL: the tool the model must call, required and
	// one of `tools` (or, with `server_tools`, a server tool's `model_name`);
	// anything else is INVALID_ARGUMENT (INVALID_REQUEST) before any attempt.
	Name string `protobuf:"bytes,2,opt,name=name,proto3" json:"name,omitempty"`
	// At most one tool call per reply: the model calls one tool, or none,
	// and waits for its result before it calls the next. Unset (false) lets
	// the model call several tools in one reply, each provider's default.
	// Agent frameworks that run one tool at a time set it; it is what
	// OpenAI's `parallel_tool_calls: false` and Anthropic's
	// `tool_choice.disable_parallel_tool_use: true` say, and llmrelay's
	// OpenAI- and Anthropic-compatible HTTP APIs translate those to it.
	//
	// Each provider kind gets it in its own form:
	//   - openai (and OpenAI-compatible servers): `parallel_tool_calls: false`.
	//     Setting `parallel_tool_calls` in `provider_options` as well is
	//     INVALID_ARGUMENT; without this field, `provider_options` may still
	//     set it.
	//   - anthropic: `disable_parallel_tool_use: true` on the request's
	//     `tool_choice` (type auto, any or tool).
	//   - gemini: the Gemini API has no such switch, so llmrelay keeps the
	//     first function call of each reply and drops the ones after it,
	//     which are never streamed; the model makes them in a later turn,
	//     once it has the first one's result. (Refusing the request instead
	//     would fail every call of a framework that always sets it, and a
	//     fallback from another provider; ignoring it would hand the client
	//     calls it said it cannot run.)
	//   - mock: honoured, a reply calls only its first tool.
	//
	// It has no effect without tools to call (no `tools` or `server_tools`,
	// or `response_format` set), and none with TOOL_CHOICE_MODE_NONE: such a
	// reply calls no tool at all, and nothing is sent to the provider. With
	// `server_tools` it holds in every turn: llmrelay runs one call per turn.
	DisableParallelToolCalls bool `protobuf:"varint,3,opt,name=disable_parallel_tool_calls,json=disableParallelToolCalls,proto3" json:"disable_parallel_tool_calls,omitempty"`
	unknownFields            protoimpl.UnknownFields
	sizeCache                protoimpl.SizeCache
}

func (x *ToolChoice) Reset() {
	*x = ToolChoice{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[11]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolChoice) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolChoice) ProtoMessage() {}

func (x *ToolChoice) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[11]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolChoice.ProtoReflect.Descriptor instead.
func (*ToolChoice) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{11}
}

func (x *ToolChoice) GetMode() ToolChoiceMode {
	if x != nil {
		return x.Mode
	}
	return ToolChoiceMode_TOOL_CHOICE_MODE_UNSPECIFIED
}

func (x *ToolChoice) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ToolChoice) GetDisableParallelToolCalls() bool {
	if x != nil {
		return x.DisableParallelToolCalls
	}
	return false
}

// ResponseFormat asks for structured output.
//
// llmrelay sends the schema to the provider in the provider's own form where
// it has one, then validates the reply locally. When the reply does not parse
// or does not conform, llmrelay re-asks the model with the validation errors
// (a `will_retry` with reason RETRY_REASON_INVALID_OUTPUT), up to
// `max_validation_retries` times.
//
// Re-asks are counted apart from transport retries: they do not use up
// `retry.max_attempts`, which bounds the attempts that fail in transport
// over the whole call, and they happen whatever `retry.midstream` says (set
// `max_validation_retries` to 0 to never replace output that was shown).
type ResponseFormat struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The JSON Schema (draft 2020-12) the reply must conform to. An invalid
	// schema fails the call with INVALID_ARGUMENT (INVALID_SCHEMA) before any
	// provider call, and so does a schema no value can satisfy where llmrelay
	// can prove it ({"type": "string", "minLength": 5, "maxLength": 2},
	// {"enum": []}, a required property whose subschema allows nothing, ...;
	// the message names the subschema's JSON pointer and what contradicts
	// what). docs/structured-output.md lists what is checked.
	JsonSchema *structpb.Struct `protobuf:"bytes,1,opt,name=json_schema,json=jsonSchema,proto3" json:"json_schema,omitempty"`
	// A short name for the schema, sent to providers that want one: up to 64
	// letters, digits, "_" or "-". Default "response".
	Name string `protobuf:"bytes,2,opt,name=name,proto3" json:"name,omitempty"`
	// How many times to re-ask the model after an invalid reply; 0 means
	// never re-ask. Unset takes the route's default, else the server's
	// (`structured_output.default_validation_retries`, 2 unless configured);
	// larger values are lowered to the server's limit
	// (`structured_output.max_validation_retries`, 5 unless configured). At
	// most 10 (INVALID_ARGUMENT past it).
	MaxValidationRetries *uint32 `protobuf:"varint,3,opt,name=max_validation_retries,json=maxValidationRetries,proto3,oneof" json:"max_validation_retries,omitempty"`
	// What to do when the reply is still invalid after every re-ask.
	OnInvalid OnInvalid `protobuf:"varint,4,opt,name=on_invalid,json=onInvalid,proto3,enum=llmrelay.v1.OnInvalid" json:"on_invalid,omitempty"`
	// Also stream `partial_object` events: the reply parsed so far, as it
	// changes. Partial objects are not validated; only `final.object` is.
	//
	// Each `partial_object` is a whole snapshot, so sending one per delta
	// would make the bytes grow with the square of the reply. llmrelay sends a
	// snapshot only while the bound below holds, and otherwise skips it (the
	// next one shows everything the skipped one did):
	//
	//	The `partial_object` events of one attempt, each counted as its whole
	//	encoded GenerateEvent, total at most 4 × the bytes of reply text that
	//	attempt received so far.
	//
	// Within that budget a snapshot goes out when what can be read changed:
	// at once while the budget allows after a structural change (a value
	// started or completed: an object, array or string opened, a number or
	// literal read, anything closed), but when only a string being written
	// grew, only while the snapshots so far stay within 2 × the text, so that
	// a long string leaves room for the values after it. A snapshot encodes
	// to about the size of the text it shows, so in practice the first one
	// comes within the first few bytes of the reply, they are dense while the
	// reply is short, then each follows about a third more text (a doubling,
	// inside a long string), and the last one before `final` shows most of
	// the reply. A snapshot much larger than its text (an array of one-digit
	// numbers takes 11 bytes per 2-byte element) waits until the budget has
	// room, possibly for `final`. Each attempt has its own budget.
	StreamPartialObjects bool `protobuf:"varint,5,opt,name=stream_partial_objects,json=streamPartialObjects,proto3" json:"stream_partial_objects,omitempty"`
	// The shortest time between two `partial_object` events of an attempt, on
	// top of the byte bound above; the first one of each attempt is not held
	// back. A snapshot due sooner is skipped, not delayed: a later one shows
	// everything it would have, and `final` has the object. Unset or 0: no
	// interval.
	// The server may impose a longer one
	// (`structured_output.partial_object_min_interval`); the longer of the two
	// applies. Only with `stream_partial_objects`.
	PartialObjectInterval *durationpb.Duration `protobuf:"bytes,6,opt,name=partial_object_interval,json=partialObjectInterval,proto3" json:"partial_object_interval,omitempty"`
	unknownFields         protoimpl.UnknownFields
	sizeCache             protoimpl.SizeCache
}

func (x *ResponseFormat) Reset() {
	*x = ResponseFormat{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[12]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ResponseFormat) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ResponseFormat) ProtoMessage() {}

func (x *ResponseFormat) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[12]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ResponseFormat.ProtoReflect.Descriptor instead.
func (*ResponseFormat) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{12}
}

func (x *ResponseFormat) GetJsonSchema() *structpb.Struct {
	if x != nil {
		return x.JsonSchema
	}
	return nil
}

func (x *ResponseFormat) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ResponseFormat) GetMaxValidationRetries() uint32 {
	if x != nil && x.MaxValidationRetries != nil {
		return *x.MaxValidationRetries
	}
	return 0
}

func (x *ResponseFormat) GetOnInvalid() OnInvalid {
	if x != nil {
		return x.OnInvalid
	}
	return OnInvalid_ON_INVALID_UNSPECIFIED
}

func (x *ResponseFormat) GetStreamPartialObjects() bool {
	if x != nil {
		return x.StreamPartialObjects
	}
	return false
}

func (x *ResponseFormat) GetPartialObjectInterval() *durationpb.Duration {
	if x != nil {
		return x.PartialObjectInterval
	}
	return nil
}

// RetryPolicy says how llmrelay retries failed attempts. Transient failures
// are retried: rate limits, overload, 5xx, dropped or cut connections and
// stalls. Requests the provider rejects are not, nor streams that arrive
// whole but do not decode (PROVIDER_PROTOCOL_ERROR).
type RetryPolicy struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The most attempts, the first one included: 1 disables retries; 0 takes
	// the server default (3). More than 10 is refused (INVALID_ARGUMENT
	// naming this field); up to 10, a value above the server's limit
	// (`retry.max_attempts_limit`, 10 unless the operator lowered it) is
	// clamped to it. Structured-output re-asks come on top (see
	// ResponseFormat).
	MaxAttempts uint32 `protobuf:"varint,1,opt,name=max_attempts,json=maxAttempts,proto3" json:"max_attempts,omitempty"`
	// The backoff before the first retry; it doubles for each further retry,
	// up to `max_backoff`, and each wait is drawn from [d/2, d] ("equal
	// jitter"). A provider's retry hint (Retry-After and its kin) replaces the
	// backoff; a hint longer than the server's `retry.max_retry_after` (60s
	// unless configured) ends the call (RETRY_HINT_TOO_LONG). Unset takes the
	// server's `retry.initial_backoff` (500ms unless configured); a value
	// above `max_backoff` is lowered to it. At most 60s.
	InitialBackoff *durationpb.Duration `protobuf:"bytes,2,opt,name=initial_backoff,json=initialBackoff,proto3" json:"initial_backoff,omitempty"`
	// The longest backoff. Unset takes the server's `retry.max_backoff` (8s
	// unless configured), which is also its limit: a longer value is
	// lowered to it (a request may shorten the backoff, never lengthen it).
	// At most 300s.
	MaxBackoff *durationpb.Duration `protobuf:"bytes,3,opt,name=max_backoff,json=maxBackoff,proto3" json:"max_backoff,omitempty"`
	// What to do when an attempt fails after some of its deltas were sent.
	Midstream     Midstream `protobuf:"varint,4,opt,name=midstream,proto3,enum=llmrelay.v1.Midstream" json:"midstream,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RetryPolicy) Reset() {
	*x = RetryPolicy{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[13]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RetryPolicy) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RetryPolicy) ProtoMessage() {}

func (x *RetryPolicy) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[13]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RetryPolicy.ProtoReflect.Descriptor instead.
func (*RetryPolicy) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{13}
}

func (x *RetryPolicy) GetMaxAttempts() uint32 {
	if x != nil {
		return x.MaxAttempts
	}
	return 0
}

func (x *RetryPolicy) GetInitialBackoff() *durationpb.Duration {
	if x != nil {
		return x.InitialBackoff
	}
	return nil
}

func (x *RetryPolicy) GetMaxBackoff() *durationpb.Duration {
	if x != nil {
		return x.MaxBackoff
	}
	return nil
}

func (x *RetryPolicy) GetMidstream() Midstream {
	if x != nil {
		return x.Midstream
	}
	return Midstream_MIDSTREAM_UNSPECIFIED
}

// HedgePolicy asks llmrelay to hedge slow attempts (gRFC A6's hedging,
// adapted to streams).
//
// How it runs. Each attempt llmrelay starts (the first, and each retry,
// fallback or structured-output re-ask) may race hedges: when the attempt
// has produced no delta for the hedging delay, llmrelay starts a hedge,
// another attempt of the same request, beside it; and, with `max_hedges`
// 2, another one after a further delay, while the call has hedges left.
// The first attempt of the race to produce a delta wins: llmrelay cancels
// the others at once (their provider requests are closed, which stops
// their generation and their cost) and streams only the winner.
//
// "Produce a delta" means produce something you would see: a text,
// reasoning, refusal or tool-call fragment (`delta`). Signs of life you do
// not see (a provider's keep-alives and pings, usage reports) do not win a
// race, nor stop a hedge from starting; a reasoning model that streams its
// reasoning does both. An attempt that completes without any delta (an
// empty reply) wins when it ends, if no other attempt produced a delta.
//
// What you see. Only the winner's events: its deltas (with its `attempt`
// number), and, if it fails after streaming, the `will_retry` that says
// so. Nothing of a loser ever reaches you, so there is nothing to discard.
// A call both `resumable` and hedged keeps the same events: `Resume`
// replays the winner's, never a loser's.
// A hedge that fails before producing a delta while another attempt of its
// race still runs is not a `will_retry`: the call still has a live
// attempt. When every attempt of a race fails before any delta, the call
// goes on as if the race's first attempt had run alone: its failure is the
// one the retry policy, the route's fallback and the `will_retry` (its
// `attempt` and `cause`) are about.
//
// Attempt numbers. Attempts are numbered in the order they start, hedges
// included: a call whose attempt 1 was hedged by attempt 2, which won,
// streams deltas with `attempt` 2 and a `final` with `attempt` 2,
// `attempts` 2 and `hedges` 1; the next attempt after a failed race of
// attempts 1 and 2 is attempt 3 (`will_retry.next_attempt`).
//
// Cost. Every hedge is a provider request: its input tokens are paid, and
// its output tokens up to its cancellation (most providers bill what they
// generated before the request was closed). `final.usage` sums the tokens
// every attempt reported, cancelled hedges included; a hedge cancelled
// before its provider reported usage counts none there. A call starts at
// most `max_hedges` hedges in all (each turn, with `server_tools`). Hedges
// count against the provider's retry budget like retries: the budget may
// refuse a hedge (the call then runs on without it), and a hedge counts as
// a retry in flight until its race is decided, so that hedging a slow
// provider adds at most the budget's share of requests to it. Hedges do
// not count against `retry.max_attempts`.
type HedgePolicy struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Start a hedge when the attempt has produced no delta for this long,
	// and the next one this long after it. Choose about the provider's p95
	// time to first token: then about one call in twenty is hedged. Required
	// unless `adaptive` is set; with `adaptive`, the least wait. At least the
	// server's floor (`retry.hedging.min_hedge_after`, 50ms unless
	// configured): shorter is INVALID_ARGUMENT naming this field.
	HedgeAfter *durationpb.Duration `protobuf:"bytes,1,opt,name=hedge_after,json=hedgeAfter,proto3" json:"hedge_after,omitempty"`
	// Derive the delay from what this llmrelay replica observed: the p95
	// time to first delta of the target's recent attempts (its last 200,
	// once it has 20; an attempt cancelled because a hedge won counts with
	// the time it had waited), never below `hedge_after` nor the server's
	// floor. Until the target has 20 observations the delay is `hedge_after`,
	// or, without it, the call is not hedged.
	Adaptive bool `protobuf:"varint,2,opt,name=adaptive,proto3" json:"adaptive,omitempty"`
	// How many hedges the call may start, in all (with `server_tools`, in
	// each turn): 1 or 2. Unset means 1; 0 turns hedging off for this call
	// (also a route's default). Lowered to the server's limit
	// (`retry.hedging.max_hedges`, 2 unless configured; a server that allows
	// 0 hedges nothing).
	MaxHedges *uint32 `protobuf:"varint,3,opt,name=max_hedges,json=maxHedges,proto3,oneof" json:"max_hedges,omitempty"`
	// Where the hedges go. Unset means HEDGE_TARGET_SAME.
	Target        HedgeTarget `protobuf:"varint,4,opt,name=target,proto3,enum=llmrelay.v1.HedgeTarget" json:"target,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *HedgePolicy) Reset() {
	*x = HedgePolicy{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[14]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *HedgePolicy) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*HedgePolicy) ProtoMessage() {}

func (x *HedgePolicy) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[14]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use HedgePolicy.ProtoReflect.Descriptor instead.
func (*HedgePolicy) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{14}
}

func (x *HedgePolicy) GetHedgeAfter() *durationpb.Duration {
	if x != nil {
		return x.HedgeAfter
	}
	return nil
}

func (x *HedgePolicy) GetAdaptive() bool {
	if x != nil {
		return x.Adaptive
	}
	return false
}

func (x *HedgePolicy) GetMaxHedges() uint32 {
	if x != nil && x.MaxHedges != nil {
		return *x.MaxHedges
	}
	return 0
}

func (x *HedgePolicy) GetTarget() HedgeTarget {
	if x != nil {
		return x.Target
	}
	return HedgeTarget_HEDGE_TARGET_UNSPECIFIED
}

// GenerateEvent is one event of a Generate stream.
type GenerateEvent struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The event's position in the stream: 1, 2, 3, ... with no gaps.
	Sequence uint64 `protobuf:"varint,1,opt,name=sequence,proto3" json:"sequence,omitempty"`
	// The attempt this event belongs to, from 1. For `will_retry`, the attempt
	// that failed; for `final`, the attempt that succeeded. Attempts are
	// numbered in the order they start, hedges included (see HedgePolicy): a
	// hedge that lost never shows, so numbers may skip.
	Attempt uint32 `protobuf:"varint,2,opt,name=attempt,proto3" json:"attempt,omitempty"`
	// The event.
	//
	// Types that are valid to be assigned to Event:
	//
	//	*GenerateEvent_Delta
	//	*GenerateEvent_WillRetry
	//	*GenerateEvent_Final
	//	*GenerateEvent_PartialObject
	//	*GenerateEvent_Heartbeat
	//	*GenerateEvent_ToolProgress
	//	*GenerateEvent_ToolResult
	Event isGenerateEvent_Event `protobuf_oneof:"event"`
	// The turn this event belongs to, from 1. A call without server tools
	// has one turn. With `server_tools`, each model turn, the server tools
	// it called and their events (`tool_progress`, `tool_result`) share a
	// turn; the next model turn's events have the next number. A
	// `will_retry` concerns its turn only: `discard_partial` discards what
	// the failed attempt of that turn streamed, never an earlier turn's
	// output or tool results. The `final` carries the last turn. 0 for a
	// `heartbeat`, which belongs to no turn.
	Turn          uint32 `protobuf:"varint,8,opt,name=turn,proto3" json:"turn,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GenerateEvent) Reset() {
	*x = GenerateEvent{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[15]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GenerateEvent) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GenerateEvent) ProtoMessage() {}

func (x *GenerateEvent) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[15]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GenerateEvent.ProtoReflect.Descriptor instead.
func (*GenerateEvent) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{15}
}

func (x *GenerateEvent) GetSequence() uint64 {
	if x != nil {
		return x.Sequence
	}
	return 0
}

func (x *GenerateEvent) GetAttempt() uint32 {
	if x != nil {
		return x.Attempt
	}
	return 0
}

func (x *GenerateEvent) GetEvent() isGenerateEvent_Event {
	if x != nil {
		return x.Event
	}
	return nil
}

func (x *GenerateEvent) GetDelta() *Delta {
	if x != nil {
		if x, ok := x.Event.(*GenerateEvent_Delta); ok {
			return x.Delta
		}
	}
	return nil
}

func (x *GenerateEvent) GetWillRetry() *WillRetry {
	if x != nil {
		if x, ok := x.Event.(*GenerateEvent_WillRetry); ok {
			return x.WillRetry
		}
	}
	return nil
}

func (x *GenerateEvent) GetFinal() *Final {
	if x != nil {
		if x, ok := x.Event.(*GenerateEvent_Final); ok {
			return x.Final
		}
	}
	return nil
}

func (x *GenerateEvent) GetPartialObject() *structpb.Value {
	if x != nil {
		if x, ok := x.Event.(*GenerateEvent_PartialObject); ok {
			return x.PartialObject
		}
	}
	return nil
}

func (x *GenerateEvent) GetHeartbeat() *Heartbeat {
	if x != nil {
		if x, ok := x.Event.(*GenerateEvent_Heartbeat); ok {
			return x.Heartbeat
		}
	}
	return nil
}

func (x *GenerateEvent) GetToolProgress() *ToolProgress {
	if x != nil {
		if x, ok := x.Event.(*GenerateEvent_ToolProgress); ok {
			return x.ToolProgress
		}
	}
	return nil
}

func (x *GenerateEvent) GetToolResult() *ToolResult {
	if x != nil {
		if x, ok := x.Event.(*GenerateEvent_ToolResult); ok {
			return x.ToolResult
		}
	}
	return nil
}

func (x *GenerateEvent) GetTurn() uint32 {
	if x != nil {
		return x.Turn
	}
	return 0
}

type isGenerateEvent_Event interface {
	isGenerateEvent_Event()
}

type GenerateEvent_Delta struct {
	// A fragment of the reply.
	Delta *Delta `protobuf:"bytes,3,opt,name=delta,proto3,oneof"`
}

type GenerateEvent_WillRetry struct {
	// The attempt failed and another one is coming.
	WillRetry *WillRetry `protobuf:"bytes,4,opt,name=will_retry,json=willRetry,proto3,oneof"`
}

type GenerateEvent_Final struct {
	// The call succeeded. Always the last event.
	Final *Final `protobuf:"bytes,5,opt,name=final,proto3,oneof"`
}

type GenerateEvent_PartialObject struct {
	// Structured output with `stream_partial_objects`: the reply parsed so
	// far, with open strings, arrays and objects closed and any incomplete
	// key or literal dropped. Not validated. Always a whole snapshot, never
	// a difference; not every change gets one (see
	// `ResponseFormat.stream_partial_objects` for the byte bound and
	// `ResponseFormat.partial_object_interval`).
	PartialObject *structpb.Value `protobuf:"bytes,6,opt,name=partial_object,json=partialObject,proto3,oneof"`
}

type GenerateEvent_Heartbeat struct {
	// Nothing else was sent for the call's heartbeat interval (only with
	// `heartbeat_interval` or the server's `heartbeat.interval`). It
	// carries nothing; clients skip it. Its `attempt` is 0: it belongs to
	// no attempt.
	Heartbeat *Heartbeat `protobuf:"bytes,7,opt,name=heartbeat,proto3,oneof"`
}

type GenerateEvent_ToolProgress struct {
	// A server tool the model called is running and reported progress
	// (MCP `notifications/progress`; llmrelay asks for progress on every
	// tool call). Only with `server_tools`. Zero or more per tool call,
	// before its `tool_result`.
	ToolProgress *ToolProgress `protobuf:"bytes,9,opt,name=tool_progress,json=toolProgress,proto3,oneof"`
}

type GenerateEvent_ToolResult struct {
	// A server tool the model called returned, or failed: what the model
	// is sent as the tool's result. Only with `server_tools`. Exactly one
	// per server tool call, after the turn's model output and before the
	// next turn's first event. Never discarded: the tool ran.
	ToolResult *ToolResult `protobuf:"bytes,10,opt,name=tool_result,json=toolResult,proto3,oneof"`
}

func (*GenerateEvent_Delta) isGenerateEvent_Event() {}

func (*GenerateEvent_WillRetry) isGenerateEvent_Event() {}

func (*GenerateEvent_Final) isGenerateEvent_Event() {}

func (*GenerateEvent_PartialObject) isGenerateEvent_Event() {}

func (*GenerateEvent_Heartbeat) isGenerateEvent_Event() {}

func (*GenerateEvent_ToolProgress) isGenerateEvent_Event() {}

func (*GenerateEvent_ToolResult) isGenerateEvent_Event() {}

// ToolProgress is a progress report of a running server tool.
type ToolProgress struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The id of the model's tool call the tool runs for (`ToolCall.id`).
	ToolCallId string `protobuf:"bytes,1,opt,name=tool_call_id,json=toolCallId,proto3" json:"tool_call_id,omitempty"`
	// The progress so far, as the tool counts it: it increases with every
	// report of one run of the tool, even when the total is unknown. A tool
	// llmrelay calls again (an idempotent tool after a timeout or a lost
	// connection) reports anew from its start under the same tool_call_id,
	// so a report lower than the one before means the tool started over.
	Progress float64 `protobuf:"fixed64,2,opt,name=progress,proto3" json:"progress,omitempty"`
	// The total the progress counts towards, when the tool knows it.
	Total *float64 `protobuf:"fixed64,3,opt,name=total,proto3,oneof" json:"total,omitempty"`
	// What the tool is doing, when it says.
	Message string `protobuf:"bytes,4,opt,name=message,proto3" json:"message,omitempty"`
	// The server tool, as requests name it ("everything/echo").
	Name          string `protobuf:"bytes,5,opt,name=name,proto3" json:"name,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ToolProgress) Reset() {
	*x = ToolProgress{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[16]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolProgress) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolProgress) ProtoMessage() {}

func (x *ToolProgress) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[16]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolProgress.ProtoReflect.Descriptor instead.
func (*ToolProgress) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{16}
}

func (x *ToolProgress) GetToolCallId() string {
	if x != nil {
		return x.ToolCallId
	}
	return ""
}

func (x *ToolProgress) GetProgress() float64 {
	if x != nil {
		return x.Progress
	}
	return 0
}

func (x *ToolProgress) GetTotal() float64 {
	if x != nil && x.Total != nil {
		return *x.Total
	}
	return 0
}

func (x *ToolProgress) GetMessage() string {
	if x != nil {
		return x.Message
	}
	return ""
}

func (x *ToolProgress) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

// ToolResult is the result of a server tool call, as the model is sent it.
type ToolResult struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The id of the model's tool call this result answers (`ToolCall.id`).
	ToolCallId string `protobuf:"bytes,1,opt,name=tool_call_id,json=toolCallId,proto3" json:"tool_call_id,omitempty"`
	// The server tool that ran, as requests name it ("everything/echo").
	Name string `protobuf:"bytes,2,opt,name=name,proto3" json:"name,omitempty"`
	// The result's text, as the model is sent it: the text parts of the
	// tool's content, in order; its structured content, as JSON, when it
	// has no text, or after its text (following a line "[structured
	// content]") when the text is not that JSON already; every other part
	// (audio, resource link, embedded resource, an image llmrelay cannot
	// send as one) described in a line of its own (kind, MIME type, name or
	// URI, size), never dropped silently. Parts meant for the user only
	// are in `user_content` instead, with a line here saying so. For an
	// error (`is_error`), what went wrong. The same as the `content` of the
	// result's ROLE_TOOL message in `final.transcript`.
	//
	// The tool's images (PNG, JPEG, GIF or WebP, up to 20 MiB each) are
	// sent to the model as images, the message's image parts among its
	// text; `images` says where they are, not what they are: their bytes go
	// in `final.transcript` only, so that the stream stays small.
	Content string `protobuf:"bytes,3,opt,name=content,proto3" json:"content,omitempty"`
	// The tool failed: the MCP server returned a result with `isError`, the
	// tool does not exist or refused its arguments, the tool did not
	// return within its server's `timeout`, the server could not be
	// reached (after retries, for idempotent tools), its answer was longer
	// than the server's `max_response_bytes` (not read, not tried again),
	// or its result is not an MCP tool result (not tried again). The model
	// is sent the content as the tool's result and the call goes on.
	IsError bool `protobuf:"varint,4,opt,name=is_error,json=isError,proto3" json:"is_error,omitempty"`
	// The result was cut: its text was longer than the server's
	// `tools.max_tool_result_bytes` (64 KiB unless configured), or the
	// result did not fit in what the call's output limit left it (see
	// OutputLimit: an image that does not fit whole is left out, with what
	// follows it). The model is told so at the end of the content, where
	// the note fits.
	Truncated bool `protobuf:"varint,5,opt,name=truncated,proto3" json:"truncated,omitempty"`
	// How many times the tool was called: more than 1 when an idempotent
	// tool was called again after its server failed or timed out.
	Attempts uint32 `protobuf:"varint,6,opt,name=attempts,proto3" json:"attempts,omitempty"`
	// The images the model is sent with `content`, in order: the image
	// parts of the result's ROLE_TOOL message in `final.transcript`, which
	// carries their bytes. Empty for a result without images.
	Images []*ToolResultImage `protobuf:"bytes,7,rep,name=images,proto3" json:"images,omitempty"`
	// The result's parts meant for the user only, not for the model (MCP
	// annotations whose `audience` leaves out "assistant", such as
	// `["user"]`), in order, one per line, as `content` would have them (an
	// image described, its bytes not passed on). The model is not sent it,
	// nor is `final.transcript`, which a client sends back to continue the
	// conversation: show it to the user with the result. Cut, as `content`
	// is, at `tools.max_tool_result_bytes` (`truncated`). Empty when there
	// are none.
	UserContent   string `protobuf:"bytes,8,opt,name=user_content,json=userContent,proto3" json:"user_content,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ToolResult) Reset() {
	*x = ToolResult{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[17]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolResult) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolResult) ProtoMessage() {}

func (x *ToolResult) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[17]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolResult.ProtoReflect.Descriptor instead.
func (*ToolResult) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{17}
}

func (x *ToolResult) GetToolCallId() string {
	if x != nil {
		return x.ToolCallId
	}
	return ""
}

func (x *ToolResult) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ToolResult) GetContent() string {
	if x != nil {
		return x.Content
	}
	return ""
}

func (x *ToolResult) GetIsError() bool {
	if x != nil {
		return x.IsError
	}
	return false
}

func (x *ToolResult) GetTruncated() bool {
	if x != nil {
		return x.Truncated
	}
	return false
}

func (x *ToolResult) GetAttempts() uint32 {
	if x != nil {
		return x.Attempts
	}
	return 0
}

func (x *ToolResult) GetImages() []*ToolResultImage {
	if x != nil {
		return x.Images
	}
	return nil
}

func (x *ToolResult) GetUserContent() string {
	if x != nil {
		return x.UserContent
	}
	return ""
}

// ToolResultImage is an image of a server tool's result, as the
// `ToolResult` event reports it: where it is and what it is, without its
// bytes (`final.transcript` carries them).
type ToolResultImage struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Where the image is among the result's text: the byte offset in
	// `ToolResult.content` of the text that follows it (0: before all of
	// it; the content's length: after all of it).
	Offset uint32 `protobuf:"varint,1,opt,name=offset,proto3" json:"offset,omitempty"`
	// The image's media type: "image/png", "image/jpeg", "image/gif" or
	// "image/webp".
	MediaType string `protobuf:"bytes,2,opt,name=media_type,json=mediaType,proto3" json:"media_type,omitempty"`
	// The image's size in bytes (decoded, as the transcript's
	// `Image.data` holds it).
	Size          uint32 `protobuf:"varint,3,opt,name=size,proto3" json:"size,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ToolResultImage) Reset() {
	*x = ToolResultImage{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[18]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolResultImage) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolResultImage) ProtoMessage() {}

func (x *ToolResultImage) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[18]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolResultImage.ProtoReflect.Descriptor instead.
func (*ToolResultImage) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{18}
}

func (x *ToolResultImage) GetOffset() uint32 {
	if x != nil {
		return x.Offset
	}
	return 0
}

func (x *ToolResultImage) GetMediaType() string {
	if x != nil {
		return x.MediaType
	}
	return ""
}

func (x *ToolResultImage) GetSize() uint32 {
	if x != nil {
		return x.Size
	}
	return 0
}

// Heartbeat keeps a quiet stream alive through proxies that cut streams
// silent for longer than their idle timeout. See
// `GenerateRequest.heartbeat_interval`.
type Heartbeat struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Heartbeat) Reset() {
	*x = Heartbeat{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[19]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Heartbeat) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Heartbeat) ProtoMessage() {}

func (x *Heartbeat) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[19]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Heartbeat.ProtoReflect.Descriptor instead.
func (*Heartbeat) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{19}
}

// Delta is a fragment of the reply. Concatenating the `text` of the deltas of
// one attempt gives that attempt's text. A delta carries one of its fields.
//
// A fragment may be of any size: never split or joined at any particular
// boundary (a word, a token, a provider's chunk). When the client reads
// slower than the provider streams, the pieces of the same kind that the
// server has already read while it was sending the previous event arrive
// as one delta: text (or a refusal) concatenated, the fragments of one tool
// call (same `index`) merged into one `ToolCallDelta`, the fragments of one
// reasoning block likewise. The server never holds a delta back to wait for
// more, events keep their order and `sequence` stays without gaps; a client
// that keeps up gets a delta per provider chunk. The server's
// `streaming.coalesce_deltas: false` relays one delta per provider chunk
// always.
type Delta struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The next piece of text.
	Text string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	// The next piece of a tool call.
	ToolCall *ToolCallDelta `protobuf:"bytes,2,opt,name=tool_call,json=toolCall,proto3" json:"tool_call,omitempty"`
	// The next piece of the model's reasoning, never part of the text. A
	// `will_retry` with `discard_partial` discards it with the text.
	Reasoning *ReasoningDelta `protobuf:"bytes,3,opt,name=reasoning,proto3" json:"reasoning,omitempty"`
	// The next piece of a refusal (the model declined to answer: see
	// `Message.refusal`).
	Refusal       string `protobuf:"bytes,4,opt,name=refusal,proto3" json:"refusal,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Delta) Reset() {
	*x = Delta{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[20]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Delta) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Delta) ProtoMessage() {}

func (x *Delta) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[20]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Delta.ProtoReflect.Descriptor instead.
func (*Delta) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{20}
}

func (x *Delta) GetText() string {
	if x != nil {
		return x.Text
	}
	return ""
}

func (x *Delta) GetToolCall() *ToolCallDelta {
	if x != nil {
		return x.ToolCall
	}
	return nil
}

func (x *Delta) GetReasoning() *ReasoningDelta {
	if x != nil {
		return x.Reasoning
	}
	return nil
}

func (x *Delta) GetRefusal() string {
	if x != nil {
		return x.Refusal
	}
	return ""
}

// ReasoningDelta is a fragment of a reasoning block. Fragments with the same
// `index` belong to the same block; their `text`s concatenate to the
// block's text, and `final.message.reasoning[index]` holds the whole block.
type ReasoningDelta struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Which reasoning block of this attempt's reply the fragment belongs to,
	// from 0.
	Index uint32 `protobuf:"varint,1,opt,name=index,proto3" json:"index,omitempty"`
	// The next piece of the block's text.
	Text string `protobuf:"bytes,2,opt,name=text,proto3" json:"text,omitempty"`
	// The block's signature (opaque), in one fragment, usually the block's
	// last.
	Signature string `protobuf:"bytes,3,opt,name=signature,proto3" json:"signature,omitempty"`
	// A redacted block's data (opaque), whole, in one fragment.
	Redacted string `protobuf:"bytes,4,opt,name=redacted,proto3" json:"redacted,omitempty"`
	// The block's wire format (see `Reasoning.format`), in its first fragment.
	Format        string `protobuf:"bytes,5,opt,name=format,proto3" json:"format,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ReasoningDelta) Reset() {
	*x = ReasoningDelta{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[21]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ReasoningDelta) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ReasoningDelta) ProtoMessage() {}

func (x *ReasoningDelta) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[21]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ReasoningDelta.ProtoReflect.Descriptor instead.
func (*ReasoningDelta) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{21}
}

func (x *ReasoningDelta) GetIndex() uint32 {
	if x != nil {
		return x.Index
	}
	return 0
}

func (x *ReasoningDelta) GetText() string {
	if x != nil {
		return x.Text
	}
	return ""
}

func (x *ReasoningDelta) GetSignature() string {
	if x != nil {
		return x.Signature
	}
	return ""
}

func (x *ReasoningDelta) GetRedacted() string {
	if x != nil {
		return x.Redacted
	}
	return ""
}

func (x *ReasoningDelta) GetFormat() string {
	if x != nil {
		return x.Format
	}
	return ""
}

// ToolCallDelta is a fragment of a tool call. Fragments with the same `index`
// belong to the same call; `id` and `name` arrive in the first of them (a
// provider that sends the name later holds the call back until it does),
// and the `arguments_delta`s concatenate to the call's arguments.
type ToolCallDelta struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Which tool call of this reply the fragment belongs to, from 0.
	Index uint32 `protobuf:"varint,1,opt,name=index,proto3" json:"index,omitempty"`
	// The call's id (first fragment only).
	Id string `protobuf:"bytes,2,opt,name=id,proto3" json:"id,omitempty"`
	// The tool's name (first fragment only).
	Name string `protobuf:"bytes,3,opt,name=name,proto3" json:"name,omitempty"`
	// The next piece of the JSON arguments.
	ArgumentsDelta string `protobuf:"bytes,4,opt,name=arguments_delta,json=argumentsDelta,proto3" json:"arguments_delta,omitempty"`
	// The provider's signature of the call (Gemini's `thoughtSignature`), in
	// the fragment it came with: Gemini sends a call whole, its signature in
	// its first fragment. `final.message.tool_calls[].signature` has it too.
	Signature     string `protobuf:"bytes,5,opt,name=signature,proto3" json:"signature,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ToolCallDelta) Reset() {
	*x = ToolCallDelta{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[22]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolCallDelta) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolCallDelta) ProtoMessage() {}

func (x *ToolCallDelta) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[22]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolCallDelta.ProtoReflect.Descriptor instead.
func (*ToolCallDelta) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{22}
}

func (x *ToolCallDelta) GetIndex() uint32 {
	if x != nil {
		return x.Index
	}
	return 0
}

func (x *ToolCallDelta) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *ToolCallDelta) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ToolCallDelta) GetArgumentsDelta() string {
	if x != nil {
		return x.ArgumentsDelta
	}
	return ""
}

func (x *ToolCallDelta) GetSignature() string {
	if x != nil {
		return x.Signature
	}
	return ""
}

// WillRetry says an attempt failed and another one is coming.
type WillRetry struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Why the attempt failed.
	Reason RetryReason `protobuf:"varint,1,opt,name=reason,proto3,enum=llmrelay.v1.RetryReason" json:"reason,omitempty"`
	// How long llmrelay waits before the next attempt: exactly the wait that
	// follows. It is the provider's retry hint when it sent one, else the
	// backoff.
	Delay *durationpb.Duration `protobuf:"bytes,2,opt,name=delay,proto3" json:"delay,omitempty"`
	// The number of the attempt that comes next.
	NextAttempt uint32 `protobuf:"varint,3,opt,name=next_attempt,json=nextAttempt,proto3" json:"next_attempt,omitempty"`
	// True when the failed attempt already sent deltas (text, reasoning,
	// refusal or tool-call fragments) or partial objects: the client must
	// throw them away, because the next attempt streams its reply from the
	// start.
	DiscardPartial bool `protobuf:"varint,4,opt,name=discard_partial,json=discardPartial,proto3" json:"discard_partial,omitempty"`
	// The failure, as a status with a google.rpc.ErrorInfo (and, for
	// RETRY_REASON_INVALID_OUTPUT, a google.rpc.BadRequest with one field
	// violation per validation error, the field being the JSON pointer of the
	// offending value).
	Cause *status.Status `protobuf:"bytes,5,opt,name=cause,proto3" json:"cause,omitempty"`
	// The configured provider the next attempt goes to, e.g. "openai".
	NextProvider string `protobuf:"bytes,6,opt,name=next_provider,json=nextProvider,proto3" json:"next_provider,omitempty"`
	// The model the next attempt asks that provider for, as the provider
	// names it, e.g. "gpt-4.1".
	NextModel string `protobuf:"bytes,7,opt,name=next_model,json=nextModel,proto3" json:"next_model,omitempty"`
	// True when the next attempt goes to another target than the failed one:
	// the call falls back (to the next target of its route, or to
	// `fallback_models`). The failed target will not be tried again in this
	// call.
	Fallback      bool `protobuf:"varint,8,opt,name=fallback,proto3" json:"fallback,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WillRetry) Reset() {
	*x = WillRetry{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[23]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WillRetry) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WillRetry) ProtoMessage() {}

func (x *WillRetry) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[23]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WillRetry.ProtoReflect.Descriptor instead.
func (*WillRetry) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{23}
}

func (x *WillRetry) GetReason() RetryReason {
	if x != nil {
		return x.Reason
	}
	return RetryReason_RETRY_REASON_UNSPECIFIED
}

func (x *WillRetry) GetDelay() *durationpb.Duration {
	if x != nil {
		return x.Delay
	}
	return nil
}

func (x *WillRetry) GetNextAttempt() uint32 {
	if x != nil {
		return x.NextAttempt
	}
	return 0
}

func (x *WillRetry) GetDiscardPartial() bool {
	if x != nil {
		return x.DiscardPartial
	}
	return false
}

func (x *WillRetry) GetCause() *status.Status {
	if x != nil {
		return x.Cause
	}
	return nil
}

func (x *WillRetry) GetNextProvider() string {
	if x != nil {
		return x.NextProvider
	}
	return ""
}

func (x *WillRetry) GetNextModel() string {
	if x != nil {
		return x.NextModel
	}
	return ""
}

func (x *WillRetry) GetFallback() bool {
	if x != nil {
		return x.Fallback
	}
	return false
}

// Final is the outcome of a successful call.
type Final struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The assistant message of the successful attempt only: its full text,
	// its reasoning blocks with their signatures, its complete tool calls
	// (with their signatures) and its refusal. Output of failed attempts
	// never appears here. Send it back as it is in the next turn.
	Message *Message `protobuf:"bytes,1,opt,name=message,proto3" json:"message,omitempty"`
	// Structured output: the reply parsed as JSON, conforming to
	// `response_format.json_schema`. Unset without `response_format`, with
	// ON_INVALID_RETURN_TEXT when the reply stayed invalid, and when the model
	// refused (FINISH_REASON_REFUSAL: a refusal is not re-asked).
	Object *structpb.Value `protobuf:"bytes,2,opt,name=object,proto3" json:"object,omitempty"`
	// Why the model stopped.
	FinishReason FinishReason `protobuf:"varint,3,opt,name=finish_reason,json=finishReason,proto3,enum=llmrelay.v1.FinishReason" json:"finish_reason,omitempty"`
	// Tokens used, summed over every attempt of the call (failed ones and
	// cancelled hedges included, as far as the provider reported them).
	Usage *Usage `protobuf:"bytes,4,opt,name=usage,proto3" json:"usage,omitempty"`
	// How many attempts the call took, the successful one included, and the
	// hedges that ran beside them (see `hedges`).
	Attempts uint32 `protobuf:"varint,5,opt,name=attempts,proto3" json:"attempts,omitempty"`
	// How many times the model was re-asked because its structured output was
	// invalid. Counted apart from transport retries, but included in `attempts`.
	ValidationRetries uint32 `protobuf:"varint,6,opt,name=validation_retries,json=validationRetries,proto3" json:"validation_retries,omitempty"`
	// Every validation error seen on the way, across all attempts.
	ValidationErrors []*ValidationError `protobuf:"bytes,7,rep,name=validation_errors,json=validationErrors,proto3" json:"validation_errors,omitempty"`
	// The provider that served the reply, e.g. "openai".
	Provider string `protobuf:"bytes,8,opt,name=provider,proto3" json:"provider,omitempty"`
	// The model that served the reply, as the provider named it.
	Model string `protobuf:"bytes,9,opt,name=model,proto3" json:"model,omitempty"`
	// How many of `attempts` were hedges: attempts started beside a slower
	// one (see HedgePolicy), whether they won, lost or failed. 0 without
	// hedging.
	Hedges uint32 `protobuf:"varint,10,opt,name=hedges,proto3" json:"hedges,omitempty"`
	// The route the call named as its `model`, e.g. "smart"; empty when it
	// named "<provider>/<model>".
	Route string `protobuf:"bytes,13,opt,name=route,proto3" json:"route,omitempty"`
	// Labels the server attached to the call once it succeeded; empty when
	// none applies. The same labels are written to the call's log line. The
	// server's own keys:
	//
	//   - "route.defaults": the route's defaults that applied, comma-separated
	//     (e.g. "messages,generation.max_output_tokens").
	//   - "reasoning.dropped": the formats of the reasoning in `messages` that
	//     the answering provider cannot take and was not sent, comma-separated
	//     (e.g. "anthropic,gemini"; a tool call's `signature` counts as
	//     "gemini", a block without a `format` as "unknown"), as when a route
	//     falls back or hedges to another provider kind. Set only when
	//     something was left out.
	//
	// Hooks built into the server may add their own.
	Annotations map[string]string `protobuf:"bytes,14,rep,name=annotations,proto3" json:"annotations,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// With `server_tools`: every message the call added to the conversation,
	// in order: each turn's assistant message (with its tool calls and
	// reasoning) followed by the ROLE_TOOL results of the server tools it
	// called (`Message.server_tool` names the tool), and last the final
	// turn's message (`message`). Send the request's `messages` followed by
	// the transcript (and, after FINISH_REASON_TOOL_CALLS, the results of
	// the client's own tool calls) to continue the conversation. Only the
	// successful attempt of each turn appears. Empty without server tools:
	// `message` is then the whole reply.
	Transcript []*Message `protobuf:"bytes,20,rep,name=transcript,proto3" json:"transcript,omitempty"`
	// How many model turns the call made: 1 without server tools; with
	// them, one more for every turn whose server tool calls were run.
	Turns uint32 `protobuf:"varint,21,opt,name=turns,proto3" json:"turns,omitempty"`
	// The stop sequence that ended the reply: one of the request's
	// `generation.stop`, exactly as the request wrote it. Set only with
	// FINISH_REASON_STOP, and only when the provider said which sequence
	// matched: Anthropic does (its `stop_sequence` stop reason), and so do
	// OpenAI-compatible servers that add `stop_reason` to a choice (vLLM,
	// TensorRT-LLM) when it names one of the request's sequences. OpenAI and
	// Gemini do not say, so behind them it stays empty even when a stop
	// sequence ended the reply. Empty otherwise: the model finished on its
	// own, stopped for another reason, or the provider named a sequence the
	// request did not ask for (a stop token of the server's own).
	// FINISH_REASON_STOP covers both cases; tell them apart with this field.
	StopSequence  string `protobuf:"bytes,22,opt,name=stop_sequence,json=stopSequence,proto3" json:"stop_sequence,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Final) Reset() {
	*x = Final{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[24]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Final) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Final) ProtoMessage() {}

func (x *Final) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[24]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Final.ProtoReflect.Descriptor instead.
func (*Final) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{24}
}

func (x *Final) GetMessage() *Message {
	if x != nil {
		return x.Message
	}
	return nil
}

func (x *Final) GetObject() *structpb.Value {
	if x != nil {
		return x.Object
	}
	return nil
}

func (x *Final) GetFinishReason() FinishReason {
	if x != nil {
		return x.FinishReason
	}
	return FinishReason_FINISH_REASON_UNSPECIFIED
}

func (x *Final) GetUsage() *Usage {
	if x != nil {
		return x.Usage
	}
	return nil
}

func (x *Final) GetAttempts() uint32 {
	if x != nil {
		return x.Attempts
	}
	return 0
}

func (x *Final) GetValidationRetries() uint32 {
	if x != nil {
		return x.ValidationRetries
	}
	return 0
}

func (x *Final) GetValidationErrors() []*ValidationError {
	if x != nil {
		return x.ValidationErrors
	}
	return nil
}

func (x *Final) GetProvider() string {
	if x != nil {
		return x.Provider
	}
	return ""
}

func (x *Final) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *Final) GetHedges() uint32 {
	if x != nil {
		return x.Hedges
	}
	return 0
}

func (x *Final) GetRoute() string {
	if x != nil {
		return x.Route
	}
	return ""
}

func (x *Final) GetAnnotations() map[string]string {
	if x != nil {
		return x.Annotations
	}
	return nil
}

func (x *Final) GetTranscript() []*Message {
	if x != nil {
		return x.Transcript
	}
	return nil
}

func (x *Final) GetTurns() uint32 {
	if x != nil {
		return x.Turns
	}
	return 0
}

func (x *Final) GetStopSequence() string {
	if x != nil {
		return x.StopSequence
	}
	return ""
}

// Usage counts tokens, the same way for every provider (docs/providers.md
// says how each provider's own counts map onto these). A count a provider
// reports outside 0..4,294,967,295 for one attempt (a negative one, say)
// is taken as the nearer bound, here and in budgets and metrics, and the
// server logs it.
type Usage struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Tokens in the prompt, those read from or written to the provider's
	// prompt cache included.
	InputTokens uint64 `protobuf:"varint,1,opt,name=input_tokens,json=inputTokens,proto3" json:"input_tokens,omitempty"`
	// Tokens the model produced, reasoning tokens included: where a provider
	// counts reasoning apart from its output (Gemini, xAI), llmrelay adds it.
	OutputTokens uint64 `protobuf:"varint,2,opt,name=output_tokens,json=outputTokens,proto3" json:"output_tokens,omitempty"`
	// Of `output_tokens`, the model's reasoning ("thinking") tokens, where the
	// provider reports them.
	ReasoningTokens uint64 `protobuf:"varint,3,opt,name=reasoning_tokens,json=reasoningTokens,proto3" json:"reasoning_tokens,omitempty"`
	// Of `input_tokens`, those read from the provider's prompt cache (cache
	// hits, billed at a discount), where the provider reports them.
	CachedInputTokens uint64 `protobuf:"varint,4,opt,name=cached_input_tokens,json=cachedInputTokens,proto3" json:"cached_input_tokens,omitempty"`
	// Of `input_tokens`, those written to the provider's prompt cache
	// (Anthropic bills cache writes at a premium), where the provider reports
	// them.
	CacheCreationInputTokens uint64 `protobuf:"varint,5,opt,name=cache_creation_input_tokens,json=cacheCreationInputTokens,proto3" json:"cache_creation_input_tokens,omitempty"`
	unknownFields            protoimpl.UnknownFields
	sizeCache                protoimpl.SizeCache
}

func (x *Usage) Reset() {
	*x = Usage{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[25]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Usage) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Usage) ProtoMessage() {}

func (x *Usage) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[25]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Usage.ProtoReflect.Descriptor instead.
func (*Usage) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{25}
}

func (x *Usage) GetInputTokens() uint64 {
	if x != nil {
		return x.InputTokens
	}
	return 0
}

func (x *Usage) GetOutputTokens() uint64 {
	if x != nil {
		return x.OutputTokens
	}
	return 0
}

func (x *Usage) GetReasoningTokens() uint64 {
	if x != nil {
		return x.ReasoningTokens
	}
	return 0
}

func (x *Usage) GetCachedInputTokens() uint64 {
	if x != nil {
		return x.CachedInputTokens
	}
	return 0
}

func (x *Usage) GetCacheCreationInputTokens() uint64 {
	if x != nil {
		return x.CacheCreationInputTokens
	}
	return 0
}

// ValidationError is one way a structured-output reply failed its schema.
type ValidationError struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The attempt whose reply failed.
	Attempt uint32 `protobuf:"varint,1,opt,name=attempt,proto3" json:"attempt,omitempty"`
	// A JSON pointer to the offending value in the reply ("" is the whole
	// reply), e.g. "/score".
	InstanceLocation string `protobuf:"bytes,2,opt,name=instance_location,json=instanceLocation,proto3" json:"instance_location,omitempty"`
	// A JSON pointer to the schema keyword that failed, e.g.
	// "/properties/score/type". Empty when the reply was not JSON at all.
	KeywordLocation string `protobuf:"bytes,3,opt,name=keyword_location,json=keywordLocation,proto3" json:"keyword_location,omitempty"`
	// What is wrong, e.g. "got string, want number".
	Message       string `protobuf:"bytes,4,opt,name=message,proto3" json:"message,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ValidationError) Reset() {
	*x = ValidationError{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[26]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ValidationError) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ValidationError) ProtoMessage() {}

func (x *ValidationError) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[26]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ValidationError.ProtoReflect.Descriptor instead.
func (*ValidationError) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{26}
}

func (x *ValidationError) GetAttempt() uint32 {
	if x != nil {
		return x.Attempt
	}
	return 0
}

func (x *ValidationError) GetInstanceLocation() string {
	if x != nil {
		return x.InstanceLocation
	}
	return ""
}

func (x *ValidationError) GetKeywordLocation() string {
	if x != nil {
		return x.KeywordLocation
	}
	return ""
}

func (x *ValidationError) GetMessage() string {
	if x != nil {
		return x.Message
	}
	return ""
}

// ListModelsRequest asks which models the caller may use.
type ListModelsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Only list this provider's models, and no routes. Empty lists every
	// provider's models and every route.
	Provider      string `protobuf:"bytes,1,opt,name=provider,proto3" json:"provider,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListModelsRequest) Reset() {
	*x = ListModelsRequest{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[27]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListModelsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListModelsRequest) ProtoMessage() {}

func (x *ListModelsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[27]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListModelsRequest.ProtoReflect.Descriptor instead.
func (*ListModelsRequest) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{27}
}

func (x *ListModelsRequest) GetProvider() string {
	if x != nil {
		return x.Provider
	}
	return ""
}

// ListModelsResponse lists models.
type ListModelsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The models, sorted by `id`. Each `id` can be called.
	Models []*Model `protobuf:"bytes,1,rep,name=models,proto3" json:"models,omitempty"`
	// The providers that accept any model name, sorted by `provider`: those
	// whose configuration lists no models (`providers[].models` empty), so
	// `models` lists none of theirs. Call one as "<provider>/<model>" with a
	// model name of the provider's own, e.g. "openai/gpt-4.1". With an API
	// key, only the providers the key's `models` patterns may match a model
	// of (`key_patterns` says which); with `ListModelsRequest.provider`, that
	// provider only.
	AnyModelProviders []*AnyModelProvider `protobuf:"bytes,2,rep,name=any_model_providers,json=anyModelProviders,proto3" json:"any_model_providers,omitempty"`
	unknownFields     protoimpl.UnknownFields
	sizeCache         protoimpl.SizeCache
}

func (x *ListModelsResponse) Reset() {
	*x = ListModelsResponse{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[28]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListModelsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListModelsResponse) ProtoMessage() {}

func (x *ListModelsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[28]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListModelsResponse.ProtoReflect.Descriptor instead.
func (*ListModelsResponse) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{28}
}

func (x *ListModelsResponse) GetModels() []*Model {
	if x != nil {
		return x.Models
	}
	return nil
}

func (x *ListModelsResponse) GetAnyModelProviders() []*AnyModelProvider {
	if x != nil {
		return x.AnyModelProviders
	}
	return nil
}

// AnyModelProvider is a provider that accepts any model name: the server
// passes the name on, and the provider answers whether it has the model.
type AnyModelProvider struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The provider's configured name, e.g. "openai": the part of
	// `GenerateRequest.model` before the first "/".
	Provider string `protobuf:"bytes,1,opt,name=provider,proto3" json:"provider,omitempty"`
	// The provider's kind: "openai", "anthropic" or "gemini".
	ProviderKind string `protobuf:"bytes,2,opt,name=provider_kind,json=providerKind,proto3" json:"provider_kind,omitempty"`
	// The caller's API key's `models` patterns that may match a model of this
	// provider, as the key writes them, e.g. "openai/gpt-4*" or "*": the key
	// may call the names they match, and no others. Empty when the server has
	// no API keys configured, and any model name may be called.
	KeyPatterns   []string `protobuf:"bytes,3,rep,name=key_patterns,json=keyPatterns,proto3" json:"key_patterns,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *AnyModelProvider) Reset() {
	*x = AnyModelProvider{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[29]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AnyModelProvider) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AnyModelProvider) ProtoMessage() {}

func (x *AnyModelProvider) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[29]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AnyModelProvider.ProtoReflect.Descriptor instead.
func (*AnyModelProvider) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{29}
}

func (x *AnyModelProvider) GetProvider() string {
	if x != nil {
		return x.Provider
	}
	return ""
}

func (x *AnyModelProvider) GetProviderKind() string {
	if x != nil {
		return x.ProviderKind
	}
	return ""
}

func (x *AnyModelProvider) GetKeyPatterns() []string {
	if x != nil {
		return x.KeyPatterns
	}
	return nil
}

// Model is a model llmrelay can route to: a provider's model, or a route.
type Model struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The value for `GenerateRequest.model`, e.g. "mock/echo" or "smart".
	Id string `protobuf:"bytes,1,opt,name=id,proto3" json:"id,omitempty"`
	// The provider's configured name, e.g. "mock"; empty for a route.
	Provider string `protobuf:"bytes,2,opt,name=provider,proto3" json:"provider,omitempty"`
	// The provider's kind: "mock", "openai", "anthropic" or "gemini"; empty
	// for a route.
	ProviderKind string `protobuf:"bytes,3,opt,name=provider_kind,json=providerKind,proto3" json:"provider_kind,omitempty"`
	// The model's name at the provider, e.g. "echo"; for a route, its name.
	Name string `protobuf:"bytes,4,opt,name=name,proto3" json:"name,omitempty"`
	// Whether this is a provider's model or a route.
	Kind ModelKind `protobuf:"varint,5,opt,name=kind,proto3,enum=llmrelay.v1.ModelKind" json:"kind,omitempty"`
	// For a route: its targets, in its fallback order (for a weighted route,
	// in configuration order; each call picks its own order by weight).
	Targets []*RouteTarget `protobuf:"bytes,6,rep,name=targets,proto3" json:"targets,omitempty"`
	// For a route: how it orders its targets for each call.
	Balance RouteBalance `protobuf:"varint,7,opt,name=balance,proto3,enum=llmrelay.v1.RouteBalance" json:"balance,omitempty"`
	// For a provider's model that a route uses as a target: its health. Unset
	// for models no route uses, whose health is not tracked.
	Health        *TargetHealth `protobuf:"bytes,8,opt,name=health,proto3" json:"health,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Model) Reset() {
	*x = Model{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[30]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Model) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Model) ProtoMessage() {}

func (x *Model) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[30]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Model.ProtoReflect.Descriptor instead.
func (*Model) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{30}
}

func (x *Model) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *Model) GetProvider() string {
	if x != nil {
		return x.Provider
	}
	return ""
}

func (x *Model) GetProviderKind() string {
	if x != nil {
		return x.ProviderKind
	}
	return ""
}

func (x *Model) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *Model) GetKind() ModelKind {
	if x != nil {
		return x.Kind
	}
	return ModelKind_MODEL_KIND_UNSPECIFIED
}

func (x *Model) GetTargets() []*RouteTarget {
	if x != nil {
		return x.Targets
	}
	return nil
}

func (x *Model) GetBalance() RouteBalance {
	if x != nil {
		return x.Balance
	}
	return RouteBalance_ROUTE_BALANCE_UNSPECIFIED
}

func (x *Model) GetHealth() *TargetHealth {
	if x != nil {
		return x.Health
	}
	return nil
}

// RouteTarget is one target of a route.
type RouteTarget struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The target as "<provider>/<model>", e.g. "openai/gpt-4.1".
	Model string `protobuf:"bytes,1,opt,name=model,proto3" json:"model,omitempty"`
	// The provider's configured name, e.g. "openai".
	Provider string `protobuf:"bytes,2,opt,name=provider,proto3" json:"provider,omitempty"`
	// The model's name at the provider, e.g. "gpt-4.1".
	Name string `protobuf:"bytes,3,opt,name=name,proto3" json:"name,omitempty"`
	// Its weight in a weighted route (1 when the config leaves it unset).
	Weight uint32 `protobuf:"varint,4,opt,name=weight,proto3" json:"weight,omitempty"`
	// Its health.
	Health        *TargetHealth `protobuf:"bytes,5,opt,name=health,proto3" json:"health,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RouteTarget) Reset() {
	*x = RouteTarget{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[31]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RouteTarget) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RouteTarget) ProtoMessage() {}

func (x *RouteTarget) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[31]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RouteTarget.ProtoReflect.Descriptor instead.
func (*RouteTarget) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{31}
}

func (x *RouteTarget) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *RouteTarget) GetProvider() string {
	if x != nil {
		return x.Provider
	}
	return ""
}

func (x *RouteTarget) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *RouteTarget) GetWeight() uint32 {
	if x != nil {
		return x.Weight
	}
	return 0
}

func (x *RouteTarget) GetHealth() *TargetHealth {
	if x != nil {
		return x.Health
	}
	return nil
}

// TargetHealth is a route target's health, by outlier detection: a target
// whose attempts fail several times in a row (for reasons that are the
// target's, not the request's) is ejected, taken out of rotation, for an
// interval that grows with each ejection in a row; one successful attempt
// restores it. Routes skip ejected targets, unless all are ejected.
type TargetHealth struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Whether the target is ejected now.
	Ejected bool `protobuf:"varint,1,opt,name=ejected,proto3" json:"ejected,omitempty"`
	// When the current ejection ends; unset when not ejected.
	EjectedUntil *timestamppb.Timestamp `protobuf:"bytes,2,opt,name=ejected_until,json=ejectedUntil,proto3" json:"ejected_until,omitempty"`
	// Attempts that failed in a row since the last success or ejection.
	ConsecutiveFailures uint32 `protobuf:"varint,3,opt,name=consecutive_failures,json=consecutiveFailures,proto3" json:"consecutive_failures,omitempty"`
	// Ejections in a row since the last success; the next ejection lasts
	// longer with each.
	Ejections     uint32 `protobuf:"varint,4,opt,name=ejections,proto3" json:"ejections,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *TargetHealth) Reset() {
	*x = TargetHealth{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[32]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *TargetHealth) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*TargetHealth) ProtoMessage() {}

func (x *TargetHealth) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[32]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use TargetHealth.ProtoReflect.Descriptor instead.
func (*TargetHealth) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{32}
}

func (x *TargetHealth) GetEjected() bool {
	if x != nil {
		return x.Ejected
	}
	return false
}

func (x *TargetHealth) GetEjectedUntil() *timestamppb.Timestamp {
	if x != nil {
		return x.EjectedUntil
	}
	return nil
}

func (x *TargetHealth) GetConsecutiveFailures() uint32 {
	if x != nil {
		return x.ConsecutiveFailures
	}
	return 0
}

func (x *TargetHealth) GetEjections() uint32 {
	if x != nil {
		return x.Ejections
	}
	return 0
}

// ListToolsRequest asks which server tools the caller may use.
type ListToolsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Only list this MCP server's tools (its configured name). Empty lists
	// every server's.
	Server        string `protobuf:"bytes,1,opt,name=server,proto3" json:"server,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListToolsRequest) Reset() {
	*x = ListToolsRequest{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[33]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListToolsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListToolsRequest) ProtoMessage() {}

func (x *ListToolsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[33]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListToolsRequest.ProtoReflect.Descriptor instead.
func (*ListToolsRequest) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{33}
}

func (x *ListToolsRequest) GetServer() string {
	if x != nil {
		return x.Server
	}
	return ""
}

// ListToolsResponse lists server tools and their MCP servers.
type ListToolsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The tools the caller may use, sorted by `name`, the tools of servers
	// that are not answering included (`available: false`).
	Tools []*ServerTool `protobuf:"bytes,1,rep,name=tools,proto3" json:"tools,omitempty"`
	// The MCP servers of the server's config that the caller may use a tool
	// of (of `server` only, when the request names one), sorted by `name`. A
	// server that never answered, so has no tools listed, is included when
	// the key's `tools` patterns may cover a tool of it. Without API keys
	// configured, every MCP server.
	Servers       []*ToolServer `protobuf:"bytes,2,rep,name=servers,proto3" json:"servers,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListToolsResponse) Reset() {
	*x = ListToolsResponse{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[34]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListToolsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListToolsResponse) ProtoMessage() {}

func (x *ListToolsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[34]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListToolsResponse.ProtoReflect.Descriptor instead.
func (*ListToolsResponse) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{34}
}

func (x *ListToolsResponse) GetTools() []*ServerTool {
	if x != nil {
		return x.Tools
	}
	return nil
}

func (x *ListToolsResponse) GetServers() []*ToolServer {
	if x != nil {
		return x.Servers
	}
	return nil
}

// ServerTool is a tool of an MCP server that llmrelay runs for the model
// (`GenerateRequest.server_tools`).
type ServerTool struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The tool's name as requests and API keys write it: "<server>/<tool>",
	// e.g. "everything/echo".
	Name string `protobuf:"bytes,1,opt,name=name,proto3" json:"name,omitempty"`
	// The MCP server it belongs to, as the config names it.
	Server string `protobuf:"bytes,2,opt,name=server,proto3" json:"server,omitempty"`
	// The name the model sees and calls it by (see
	// `GenerateRequest.server_tools`), e.g. "everything__echo".
	ModelName string `protobuf:"bytes,3,opt,name=model_name,json=modelName,proto3" json:"model_name,omitempty"`
	// The tool's title, when its server gives one.
	Title string `protobuf:"bytes,4,opt,name=title,proto3" json:"title,omitempty"`
	// What the tool does, as its server describes it; the model reads this.
	Description string `protobuf:"bytes,5,opt,name=description,proto3" json:"description,omitempty"`
	// The JSON Schema of the tool's arguments, as its server gives it.
	InputSchema *structpb.Struct `protobuf:"bytes,6,opt,name=input_schema,json=inputSchema,proto3" json:"input_schema,omitempty"`
	// Whether the tool's server answers right now. A tool of a server that
	// is down cannot be offered to a model until the server answers again
	// (llmrelay keeps trying to reach it).
	Available bool `protobuf:"varint,7,opt,name=available,proto3" json:"available,omitempty"`
	// Whether llmrelay calls the tool again when its server fails or times
	// out during a call: the server's annotations say it is idempotent
	// (`idempotentHint`), or the config marks it so (`idempotent`).
	Idempotent    bool `protobuf:"varint,8,opt,name=idempotent,proto3" json:"idempotent,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ServerTool) Reset() {
	*x = ServerTool{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[35]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ServerTool) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ServerTool) ProtoMessage() {}

func (x *ServerTool) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[35]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ServerTool.ProtoReflect.Descriptor instead.
func (*ServerTool) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{35}
}

func (x *ServerTool) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ServerTool) GetServer() string {
	if x != nil {
		return x.Server
	}
	return ""
}

func (x *ServerTool) GetModelName() string {
	if x != nil {
		return x.ModelName
	}
	return ""
}

func (x *ServerTool) GetTitle() string {
	if x != nil {
		return x.Title
	}
	return ""
}

func (x *ServerTool) GetDescription() string {
	if x != nil {
		return x.Description
	}
	return ""
}

func (x *ServerTool) GetInputSchema() *structpb.Struct {
	if x != nil {
		return x.InputSchema
	}
	return nil
}

func (x *ServerTool) GetAvailable() bool {
	if x != nil {
		return x.Available
	}
	return false
}

func (x *ServerTool) GetIdempotent() bool {
	if x != nil {
		return x.Idempotent
	}
	return false
}

// ToolServer is an MCP server of the server's config.
type ToolServer struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The server's name in the config: the "<server>" of its tools' names.
	Name string `protobuf:"bytes,1,opt,name=name,proto3" json:"name,omitempty"`
	// Whether the server answers: llmrelay is connected to it and has listed
	// its tools.
	Available bool `protobuf:"varint,2,opt,name=available,proto3" json:"available,omitempty"`
	// When llmrelay last listed the server's tools; unset if it never did.
	ListedAt *timestamppb.Timestamp `protobuf:"bytes,3,opt,name=listed_at,json=listedAt,proto3" json:"listed_at,omitempty"`
	// How many of the tools llmrelay offers from the server (its `allow`
	// patterns applied) the caller may use: the server's tools in `tools`.
	Tools         uint32 `protobuf:"varint,4,opt,name=tools,proto3" json:"tools,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ToolServer) Reset() {
	*x = ToolServer{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[36]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolServer) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolServer) ProtoMessage() {}

func (x *ToolServer) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[36]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolServer.ProtoReflect.Descriptor instead.
func (*ToolServer) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{36}
}

func (x *ToolServer) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ToolServer) GetAvailable() bool {
	if x != nil {
		return x.Available
	}
	return false
}

func (x *ToolServer) GetListedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.ListedAt
	}
	return nil
}

func (x *ToolServer) GetTools() uint32 {
	if x != nil {
		return x.Tools
	}
	return 0
}

// EmbedRequest asks for the embeddings of some texts.
type EmbedRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The model: a route's name, or "<provider>/<model>", resolved as
	// `GenerateRequest.model` is, with the same rules (e.g.
	// "openai/text-embedding-3-small", "gemini/gemini-embedding-001",
	// "mock/echo": the mock provider embeds with any of its models). A
	// route's targets are tried in its order; its request defaults, which
	// are generation settings, do not apply. Every target of a route must be
	// a provider that embeds.
	Model string `protobuf:"bytes,1,opt,name=model,proto3" json:"model,omitempty"`
	// The texts to embed, each one embedding, returned in this order. At
	// least 1 and at most 2048 (OpenAI's bound), each 1 to 65,536 bytes of
	// UTF-8 (a model's own context bound, often 8,192 tokens, may be lower:
	// the provider then rejects the request). The request as a whole is
	// bounded by the server's `limits.max_request_bytes`.
	Inputs []string `protobuf:"bytes,2,rep,name=inputs,proto3" json:"inputs,omitempty"`
	// The length of each vector, for models that can shorten theirs
	// (OpenAI's text-embedding-3 models, Gemini's outputDimensionality).
	// Unset takes the model's own length. A model that cannot shorten its
	// vectors, or not to this length, rejects the request
	// (PROVIDER_REJECTED). The mock provider makes vectors of this length,
	// 8 when unset. At most 65,536.
	Dimensions *uint32 `protobuf:"varint,3,opt,name=dimensions,proto3,oneof" json:"dimensions,omitempty"`
	// A client-chosen UUID that identifies this call in llmrelay's logs and
	// errors. When empty, llmrelay makes one up.
	RequestId string `protobuf:"bytes,4,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// Free-form labels, written to the call's "finished call" log line as
	// `GenerateRequest.metadata`'s are, with the same bounds. Not sent to
	// the provider.
	Metadata map[string]string `protobuf:"bytes,5,rep,name=metadata,proto3" json:"metadata,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// Options for the provider, checked before the first attempt against
	// the operator's policy for the provider, as
	// `GenerateRequest.provider_options` are. For openai each top-level key
	// is merged into the body of the request (e.g. {"user": "u-42"}); for
	// gemini into each entry of the batch's `requests` (e.g. {"taskType":
	// "RETRIEVAL_DOCUMENT"}). A key llmrelay sets itself (openai: model,
	// input, dimensions, encoding_format; gemini: model, content,
	// outputDimensionality) is refused with INVALID_ARGUMENT, reason
	// INVALID_PROVIDER_OPTIONS, naming it. The mock provider
	// reads `faults`, where only the entries' `status`, `retry_after_ms`,
	// `error_type` and `should_retry` apply (an attempt fails with that
	// status); `extra_headers` adds HTTP headers as for Generate.
	ProviderOptions *structpb.Struct `protobuf:"bytes,6,opt,name=provider_options,json=providerOptions,proto3" json:"provider_options,omitempty"`
	unknownFields   protoimpl.UnknownFields
	sizeCache       protoimpl.SizeCache
}

func (x *EmbedRequest) Reset() {
	*x = EmbedRequest{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[37]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EmbedRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EmbedRequest) ProtoMessage() {}

func (x *EmbedRequest) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[37]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EmbedRequest.ProtoReflect.Descriptor instead.
func (*EmbedRequest) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{37}
}

func (x *EmbedRequest) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *EmbedRequest) GetInputs() []string {
	if x != nil {
		return x.Inputs
	}
	return nil
}

func (x *EmbedRequest) GetDimensions() uint32 {
	if x != nil && x.Dimensions != nil {
		return *x.Dimensions
	}
	return 0
}

func (x *EmbedRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *EmbedRequest) GetMetadata() map[string]string {
	if x != nil {
		return x.Metadata
	}
	return nil
}

func (x *EmbedRequest) GetProviderOptions() *structpb.Struct {
	if x != nil {
		return x.ProviderOptions
	}
	return nil
}

// EmbedResponse holds one embedding per input.
type EmbedResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The embeddings, one per `EmbedRequest.inputs` entry, in the same
	// order: `embeddings[i]` is the embedding of `inputs[i]`.
	Embeddings []*Embedding `protobuf:"bytes,1,rep,name=embeddings,proto3" json:"embeddings,omitempty"`
	// The provider's configured name that served the request, e.g. "openai".
	Provider string `protobuf:"bytes,2,opt,name=provider,proto3" json:"provider,omitempty"`
	// The model at that provider, e.g. "text-embedding-3-small". With a
	// route, the target that answered (after a fallback, not the first).
	Model string `protobuf:"bytes,3,opt,name=model,proto3" json:"model,omitempty"`
	// The route the request named as its `model`; empty when it named
	// "<provider>/<model>".
	Route string `protobuf:"bytes,4,opt,name=route,proto3" json:"route,omitempty"`
	// The tokens the provider counted, in `input_tokens` only (embedding
	// produces no output tokens). Zero when the provider does not report
	// them (Gemini's batchEmbedContents does not): budgets then charge an
	// estimate from the inputs' size (docs/embeddings.md).
	Usage *Usage `protobuf:"bytes,5,opt,name=usage,proto3" json:"usage,omitempty"`
	// How many attempts the call made (1 unless it retried or fell back).
	Attempts      uint32 `protobuf:"varint,6,opt,name=attempts,proto3" json:"attempts,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *EmbedResponse) Reset() {
	*x = EmbedResponse{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[38]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EmbedResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EmbedResponse) ProtoMessage() {}

func (x *EmbedResponse) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[38]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EmbedResponse.ProtoReflect.Descriptor instead.
func (*EmbedResponse) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{38}
}

func (x *EmbedResponse) GetEmbeddings() []*Embedding {
	if x != nil {
		return x.Embeddings
	}
	return nil
}

func (x *EmbedResponse) GetProvider() string {
	if x != nil {
		return x.Provider
	}
	return ""
}

func (x *EmbedResponse) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *EmbedResponse) GetRoute() string {
	if x != nil {
		return x.Route
	}
	return ""
}

func (x *EmbedResponse) GetUsage() *Usage {
	if x != nil {
		return x.Usage
	}
	return nil
}

func (x *EmbedResponse) GetAttempts() uint32 {
	if x != nil {
		return x.Attempts
	}
	return 0
}

// Embedding is the vector of one input.
type Embedding struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The vector, as the provider computed it (OpenAI's and Gemini's are
	// unit length; the mock's too). Every embedding of a response has the
	// same length: `EmbedRequest.dimensions`, or the model's own.
	Values        []float32 `protobuf:"fixed32,1,rep,packed,name=values,proto3" json:"values,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Embedding) Reset() {
	*x = Embedding{}
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[39]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Embedding) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Embedding) ProtoMessage() {}

func (x *Embedding) ProtoReflect() protoreflect.Message {
	mi := &file_llmrelay_v1_llmrelay_proto_msgTypes[39]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Embedding.ProtoReflect.Descriptor instead.
func (*Embedding) Descriptor() ([]byte, []int) {
	return file_llmrelay_v1_llmrelay_proto_rawDescGZIP(), []int{39}
}

func (x *Embedding) GetValues() []float32 {
	if x != nil {
		return x.Values
	}
	return nil
}

var File_llmrelay_v1_llmrelay_proto protoreflect.FileDescriptor

const file_llmrelay_v1_llmrelay_proto_rawDesc = "" +
	"\n" +
	"\x1allmrelay/v1/llmrelay.proto\x12\vllmrelay.v1\x1a\x1bbuf/validate/validate.proto\x1a\x1egoogle/protobuf/duration.proto\x1a\x1cgoogle/protobuf/struct.proto\x1a\x1fgoogle/protobuf/timestamp.proto\x1a\x17google/rpc/status.proto\"b\n" +
	"\rResumeRequest\x12*\n" +
	"\n" +
	"request_id\x18\x01 \x01(\tB\v\xbaH\b\xc8\x01\x01r\x03\xb0\x01\x01R\trequestId\x12%\n" +
	"\x0eafter_sequence\x18\x02 \x01(\x04R\rafterSequence\"\x80\x11\n" +
	"\x0fGenerateRequest\x12\x8c\x04\n" +
	"\x05model\x18\x01 \x01(\tB\xf5\x03\xbaH\xf1\x03\xba\x01\xb0\x02\n" +
	"\fmodel.format\x12\xd1\x01must be a route name like smart, or <provider>/<model> like mock/echo or openai/gpt-4o: a lower-case name, and for a provider's model a slash, then the provider's model name (letters, digits and . _ : / @ + -)\x1aLthis.matches('^[a-z0-9][a-z0-9_-]{0,62}(/[A-Za-z0-9][A-Za-z0-9._:/@+-]*)?$')\xba\x01\xb1\x01\n" +
	"\x13model.path_segments\x12Nthe model name must not have an empty, \".\" or \"..\" segment between its slashes\x1aJthis == '' || !this.split('/').exists(s, s == '' || s == '.' || s == '..')\xc8\x01\x01r\x03\x18\x80\x02R\x05model\x12=\n" +
	"\bmessages\x18\x02 \x03(\v2\x14.llmrelay.v1.MessageB\v\xbaH\b\x92\x01\x05\b\x01\x10\x80\x10R\bmessages\x12=\n" +
	"\n" +
	"generation\x18\x03 \x01(\v2\x1d.llmrelay.v1.GenerationConfigR\n" +
	"generation\x122\n" +
	"\x05tools\x18\x04 \x03(\v2\x11.llmrelay.v1.ToolB\t\xbaH\x06\x92\x01\x03\x10\x80\x01R\x05tools\x128\n" +
	"\vtool_choice\x18\x05 \x01(\v2\x17.llmrelay.v1.ToolChoiceR\n" +
	"toolChoice\x12D\n" +
	"\x0fresponse_format\x18\x06 \x01(\v2\x1b.llmrelay.v1.ResponseFormatR\x0eresponseFormat\x12.\n" +
	"\x05retry\x18\a \x01(\v2\x18.llmrelay.v1.RetryPolicyR\x05retry\x12X\n" +
	"\x13stream_idle_timeout\x18\b \x01(\v2\x19.google.protobuf.DurationB\r\xbaH\n" +
	"\xaa\x01\a\"\x03\b\x90\x1c*\x00R\x11streamIdleTimeout\x12*\n" +
	"\n" +
	"request_id\x18\t \x01(\tB\v\xbaH\b\xd8\x01\x01r\x03\xb0\x01\x01R\trequestId\x12B\n" +
	"\x10provider_options\x18\n" +
	" \x01(\v2\x17.google.protobuf.StructR\x0fproviderOptions\x12\xbd\x03\n" +
	"\x0ffallback_models\x18\x0f \x03(\tB\x93\x03\xbaH\x8f\x03\x92\x01\x8b\x03\x10\b\"\x86\x03\xba\x01\xbe\x01\n" +
	"\x16fallback_models.format\x12Vmust be a route name like smart, or <provider>/<model> like mock/echo or openai/gpt-4o\x1aLthis.matches('^[a-z0-9][a-z0-9_-]{0,62}(/[A-Za-z0-9][A-Za-z0-9._:/@+-]*)?$')\xba\x01\xbb\x01\n" +
	"\x1dfallback_models.path_segments\x12Nthe model name must not have an empty, \".\" or \"..\" segment between its slashes\x1aJthis == '' || !this.split('/').exists(s, s == '' || s == '.' || s == '..')r\x03\x18\x80\x02R\x0efallbackModels\x12`\n" +
	"\bmetadata\x18\v \x03(\v2*.llmrelay.v1.GenerateRequest.MetadataEntryB\x18\xbaH\x15\x9a\x01\x12\x10@\"\ar\x05\x10\x01(\x80\x01*\x05r\x03(\x80\bR\bmetadata\x12X\n" +
	"\x13first_event_timeout\x18\f \x01(\v2\x19.google.protobuf.DurationB\r\xbaH\n" +
	"\xaa\x01\a\"\x03\b\x90\x1c*\x00R\x11firstEventTimeout\x12;\n" +
	"\foutput_limit\x18\r \x01(\v2\x18.llmrelay.v1.OutputLimitR\voutputLimit\x12W\n" +
	"\x12heartbeat_interval\x18\x0e \x01(\v2\x19.google.protobuf.DurationB\r\xbaH\n" +
	"\xaa\x01\a\"\x03\b\xac\x02*\x00R\x11heartbeatInterval\x12!\n" +
	"\tresumable\x18\x10 \x01(\bH\x00R\tresumable\x88\x01\x01\x122\n" +
	"\ahedging\x18\x11 \x01(\v2\x18.llmrelay.v1.HedgePolicyR\ahedging\x124\n" +
	"\fserver_tools\x18\x14 \x03(\tB\x11\xbaH\x0e\x92\x01\v\x10@\"\ar\x05\x10\x01\x18\x80\x02R\vserverTools\x125\n" +
	"\x0emax_tool_turns\x18\x15 \x01(\rB\n" +
	"\xbaH\a*\x05\x18\xe8\a(\x01H\x01R\fmaxToolTurns\x88\x01\x01\x1a;\n" +
	"\rMetadataEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01B\f\n" +
	"\n" +
	"_resumableB\x11\n" +
	"\x0f_max_tool_turns\"x\n" +
	"\vOutputLimit\x12(\n" +
	"\tmax_bytes\x18\x01 \x01(\x04B\v\xbaH\b2\x06\x18\x80\x80\x80\x80\x04R\bmaxBytes\x12?\n" +
	"\bon_limit\x18\x02 \x01(\x0e2\x1a.llmrelay.v1.OnOutputLimitB\b\xbaH\x05\x82\x01\x02\x10\x01R\aonLimit\"\xd2\n" +
	"\n" +
	"\aMessage\x12\x8e\x01\n" +
	"\x04role\x18\x01 \x01(\x0e2\x11.llmrelay.v1.RoleBg\xbaHd\xba\x01a\n" +
	"\frole.defined\x12;must be ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT or ROLE_TOOL\x1a\x14this in [1, 2, 3, 4]R\x04role\x12%\n" +
	"\acontent\x18\x02 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\acontent\x12?\n" +
	"\n" +
	"tool_calls\x18\x03 \x03(\v2\x15.llmrelay.v1.ToolCallB\t\xbaH\x06\x92\x01\x03\x10\x80\bR\ttoolCalls\x12*\n" +
	"\ftool_call_id\x18\x04 \x01(\tB\b\xbaH\x05r\x03\x18\x80\x02R\n" +
	"toolCallId\x12?\n" +
	"\treasoning\x18\x05 \x03(\v2\x16.llmrelay.v1.ReasoningB\t\xbaH\x06\x92\x01\x03\x10\x80\x02R\treasoning\x12%\n" +
	"\arefusal\x18\x06 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\arefusal\x122\n" +
	"\x05parts\x18\a \x03(\v2\x11.llmrelay.v1.PartB\t\xbaH\x06\x92\x01\x03\x10\x80 R\x05parts\x12P\n" +
	"\x0eprovider_tools\x18\b \x03(\v2\x1e.llmrelay.v1.ProviderToolBlockB\t\xbaH\x06\x92\x01\x03\x10\x80\x02R\rproviderTools\x12)\n" +
	"\vserver_tool\x18\x14 \x01(\tB\b\xbaH\x05r\x03\x18\x80\x02R\n" +
	"serverTool\x12\x1d\n" +
	"\n" +
	"tool_error\x18\x15 \x01(\bR\ttoolError:\xe9\x05\xbaH\xe5\x05\x1a\xb1\x02\n" +
	"\x16message.assistant_only\x12\x86\x01reasoning, refusal and provider_tools belong to ROLE_ASSISTANT messages, and parts to ROLE_ASSISTANT, ROLE_USER and ROLE_TOOL messages\x1a\x8d\x01this.role == 3 || (size(this.reasoning) == 0 && this.refusal == '' && !has(this.provider_tools) && (this.role in [2, 4] || !has(this.parts)))\x1a\x8c\x01\n" +
	"\x12message.user_parts\x124a ROLE_USER message's parts are text and image parts\x1a@this.role != 2 || this.parts.all(p, has(p.text) || has(p.image))\x1a\x8c\x01\n" +
	"\x12message.tool_parts\x124a ROLE_TOOL message's parts are text and image parts\x1a@this.role != 4 || this.parts.all(p, has(p.text) || has(p.image))\x1a\x90\x01\n" +
	"\x1amessage.image_user_or_tool\x126image parts belong to ROLE_USER and ROLE_TOOL messages\x1a:this.role in [2, 4] || !this.parts.exists(p, has(p.image))\"\xca\x01\n" +
	"\x04Part\x12!\n" +
	"\x04text\x18\x01 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04H\x00R\x04text\x12\x1e\n" +
	"\treasoning\x18\x02 \x01(\rH\x00R\treasoning\x12\x1d\n" +
	"\ttool_call\x18\x03 \x01(\rH\x00R\btoolCall\x12%\n" +
	"\rprovider_tool\x18\x04 \x01(\rH\x00R\fproviderTool\x12*\n" +
	"\x05image\x18\x05 \x01(\v2\x12.llmrelay.v1.ImageH\x00R\x05imageB\r\n" +
	"\x04part\x12\x05\xbaH\x02\b\x01\"\xbc\x05\n" +
	"\x05Image\x12\xc0\x02\n" +
	"\x03url\x18\x01 \x01(\tB\xab\x02\xbaH\xa7\x02\xba\x01\x82\x01\n" +
	"\x0fimage.url_https\x12Rmust be an https:// URL (send other images inline, in data, with their media_type)\x1a\x1bthis.startsWith('https://')\xba\x01\x95\x01\n" +
	"\x0eimage.url_host\x12#must name a host: https://host/path\x1a^!this.startsWith('https://') || this.matches('^https://([^/?#@]*@)?[^/?#@:][^/?#@]*([/?#]|$)')r\x06\x18\x80@\x88\x01\x01H\x00R\x03url\x12\"\n" +
	"\x04data\x18\x02 \x01(\fB\f\xbaH\tz\a\x10\x01\x18\x80\x80\x80\n" +
	"H\x00R\x04data\x12U\n" +
	"\n" +
	"media_type\x18\x03 \x01(\tB6\xbaH3\xd8\x01\x01r.R\timage/pngR\n" +
	"image/jpegR\timage/gifR\n" +
	"image/webpR\tmediaType\x12:\n" +
	"\x06detail\x18\x04 \x01(\x0e2\x18.llmrelay.v1.ImageDetailB\b\xbaH\x05\x82\x01\x02\x10\x01R\x06detail:\xa7\x01\xbaH\xa3\x01\x1a\xa0\x01\n" +
	"\x17image.inline_media_type\x12[an inline image (data) needs its media_type: image/png, image/jpeg, image/gif or image/webp\x1a(!has(this.data) || this.media_type != ''B\x0f\n" +
	"\x06source\x12\x05\xbaH\x02\b\x01\"\xf7\x01\n" +
	"\x11ProviderToolBlock\x12\x1e\n" +
	"\x04kind\x18\x01 \x01(\tB\n" +
	"\xbaH\ar\x05\x10\x01\x18\x80\x01R\x04kind\x12\x18\n" +
	"\x02id\x18\x02 \x01(\tB\b\xbaH\x05r\x03\x18\x80\x02R\x02id\x12\x1c\n" +
	"\x04name\x18\x03 \x01(\tB\b\xbaH\x05r\x03\x18\x80\x01R\x04name\x12!\n" +
	"\x05input\x18\x04 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\x05input\x12#\n" +
	"\x06result\x18\x05 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\x06result\x12!\n" +
	"\x05extra\x18\x06 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\x05extra\x12\x1f\n" +
	"\x06format\x18\a \x01(\tB\a\xbaH\x04r\x02\x18@R\x06format\"\xa2\x02\n" +
	"\tReasoning\x12\x1f\n" +
	"\x04text\x18\x01 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\x04text\x12)\n" +
	"\tsignature\x18\x02 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\tsignature\x12'\n" +
	"\bredacted\x18\x03 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\bredacted\x127\n" +
	"\x06format\x18\x04 \x01(\tB\x1f\xbaH\x1c\xd8\x01\x01r\x17\x18@2\x13^[a-z][a-z0-9._-]*$R\x06format\x12\x18\n" +
	"\x02id\x18\x05 \x01(\tB\b\xbaH\x05r\x03\x18\x80\x02R\x02id\x12\x1b\n" +
	"\x04kind\x18\x06 \x01(\tB\a\xbaH\x04r\x02\x18@R\x04kind\x120\n" +
	"\x0fprovider_format\x18\a \x01(\tB\a\xbaH\x04r\x02\x18@R\x0eproviderFormat\"\x98\x01\n" +
	"\bToolCall\x12\x18\n" +
	"\x02id\x18\x01 \x01(\tB\b\xbaH\x05r\x03\x18\x80\x02R\x02id\x12\x1c\n" +
	"\x04name\x18\x02 \x01(\tB\b\xbaH\x05r\x03\x18\x80\x01R\x04name\x12)\n" +
	"\targuments\x18\x03 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\targuments\x12)\n" +
	"\tsignature\x18\x04 \x01(\tB\v\xbaH\br\x06(\x80\x80\x80\x80\x04R\tsignature\"\x8a\x02\n" +
	"\x10GenerationConfig\x12<\n" +
	"\x11max_output_tokens\x18\x01 \x01(\rB\v\xbaH\b*\x06\x18\xc0\x84=(\x01H\x00R\x0fmaxOutputTokens\x88\x01\x01\x126\n" +
	"\vtemperature\x18\x02 \x01(\x02B\x0f\xbaH\f\n" +
	"\n" +
	"\x1d\x00\x00\x00@-\x00\x00\x00\x00H\x01R\vtemperature\x88\x01\x01\x12)\n" +
	"\x05top_p\x18\x03 \x01(\x02B\x0f\xbaH\f\n" +
	"\n" +
	"\x1d\x00\x00\x80?-\x00\x00\x00\x00H\x02R\x04topP\x88\x01\x01\x12%\n" +
	"\x04stop\x18\x04 \x03(\tB\x11\xbaH\x0e\x92\x01\v\x10\x10\"\ar\x05\x10\x01(\x80\x02R\x04stopB\x14\n" +
	"\x12_max_output_tokensB\x0e\n" +
	"\f_temperatureB\b\n" +
	"\x06_top_p\"\xf6\x01\n" +
	"\x04Tool\x12\x87\x01\n" +
	"\x04name\x18\x01 \x01(\tBs\xbaHp\xba\x01m\n" +
	"\ttool.name\x129must be 1 to 64 letters, digits, _ or -, like get_weather\x1a%this.matches('^[A-Za-z0-9_-]{1,64}$')R\x04name\x12+\n" +
	"\vdescription\x18\x02 \x01(\tB\t\xbaH\x06r\x04(\x80\x80\x01R\vdescription\x127\n" +
	"\n" +
	"parameters\x18\x03 \x01(\v2\x17.google.protobuf.StructR\n" +
	"parameters\"\xa3\x01\n" +
	"\n" +
	"ToolChoice\x129\n" +
	"\x04mode\x18\x01 \x01(\x0e2\x1b.llmrelay.v1.ToolChoiceModeB\b\xbaH\x05\x82\x01\x02\x10\x01R\x04mode\x12\x1b\n" +
	"\x04name\x18\x02 \x01(\tB\a\xbaH\x04r\x02\x18@R\x04name\x12=\n" +
	"\x1bdisable_parallel_tool_calls\x18\x03 \x01(\bR\x18disableParallelToolCalls\"\xa3\x04\n" +
	"\x0eResponseFormat\x12@\n" +
	"\vjson_schema\x18\x01 \x01(\v2\x17.google.protobuf.StructB\x06\xbaH\x03\xc8\x01\x01R\n" +
	"jsonSchema\x12\x97\x01\n" +
	"\x04name\x18\x02 \x01(\tB\x82\x01\xbaH\x7f\xba\x01|\n" +
	"\x14response_format.name\x12=must be up to 64 letters, digits, _ or -, like weather_report\x1a%this.matches('^[A-Za-z0-9_-]{0,64}$')R\x04name\x12B\n" +
	"\x16max_validation_retries\x18\x03 \x01(\rB\a\xbaH\x04*\x02\x18\n" +
	"H\x00R\x14maxValidationRetries\x88\x01\x01\x12?\n" +
	"\n" +
	"on_invalid\x18\x04 \x01(\x0e2\x16.llmrelay.v1.OnInvalidB\b\xbaH\x05\x82\x01\x02\x10\x01R\tonInvalid\x124\n" +
	"\x16stream_partial_objects\x18\x05 \x01(\bR\x14streamPartialObjects\x12_\n" +
	"\x17partial_object_interval\x18\x06 \x01(\v2\x19.google.protobuf.DurationB\f\xbaH\t\xaa\x01\x06\"\x02\b<2\x00R\x15partialObjectIntervalB\x19\n" +
	"\x17_max_validation_retries\"\x96\x02\n" +
	"\vRetryPolicy\x12*\n" +
	"\fmax_attempts\x18\x01 \x01(\rB\a\xbaH\x04*\x02\x18\n" +
	"R\vmaxAttempts\x12P\n" +
	"\x0finitial_backoff\x18\x02 \x01(\v2\x19.google.protobuf.DurationB\f\xbaH\t\xaa\x01\x06\"\x02\b<*\x00R\x0einitialBackoff\x12I\n" +
	"\vmax_backoff\x18\x03 \x01(\v2\x19.google.protobuf.DurationB\r\xbaH\n" +
	"\xaa\x01\a\"\x03\b\xac\x02*\x00R\n" +
	"maxBackoff\x12>\n" +
	"\tmidstream\x18\x04 \x01(\x0e2\x16.llmrelay.v1.MidstreamB\b\xbaH\x05\x82\x01\x02\x10\x01R\tmidstream\"\xec\x01\n" +
	"\vHedgePolicy\x12I\n" +
	"\vhedge_after\x18\x01 \x01(\v2\x19.google.protobuf.DurationB\r\xbaH\n" +
	"\xaa\x01\a\"\x03\b\xac\x02*\x00R\n" +
	"hedgeAfter\x12\x1a\n" +
	"\badaptive\x18\x02 \x01(\bR\badaptive\x12+\n" +
	"\n" +
	"max_hedges\x18\x03 \x01(\rB\a\xbaH\x04*\x02\x18\x02H\x00R\tmaxHedges\x88\x01\x01\x12:\n" +
	"\x06target\x18\x04 \x01(\x0e2\x18.llmrelay.v1.HedgeTargetB\b\xbaH\x05\x82\x01\x02\x10\x01R\x06targetB\r\n" +
	"\v_max_hedges\"\xea\x03\n" +
	"\rGenerateEvent\x12\x1a\n" +
	"\bsequence\x18\x01 \x01(\x04R\bsequence\x12\x18\n" +
	"\aattempt\x18\x02 \x01(\rR\aattempt\x12*\n" +
	"\x05delta\x18\x03 \x01(\v2\x12.llmrelay.v1.DeltaH\x00R\x05delta\x127\n" +
	"\n" +
	"will_retry\x18\x04 \x01(\v2\x16.llmrelay.v1.WillRetryH\x00R\twillRetry\x12*\n" +
	"\x05final\x18\x05 \x01(\v2\x12.llmrelay.v1.FinalH\x00R\x05final\x12?\n" +
	"\x0epartial_object\x18\x06 \x01(\v2\x16.google.protobuf.ValueH\x00R\rpartialObject\x126\n" +
	"\theartbeat\x18\a \x01(\v2\x16.llmrelay.v1.HeartbeatH\x00R\theartbeat\x12@\n" +
	"\rtool_progress\x18\t \x01(\v2\x19.llmrelay.v1.ToolProgressH\x00R\ftoolProgress\x12:\n" +
	"\vtool_result\x18\n" +
	" \x01(\v2\x17.llmrelay.v1.ToolResultH\x00R\n" +
	"toolResult\x12\x12\n" +
	"\x04turn\x18\b \x01(\rR\x04turnB\a\n" +
	"\x05event\"\x9f\x01\n" +
	"\fToolProgress\x12 \n" +
	"\ftool_call_id\x18\x01 \x01(\tR\n" +
	"toolCallId\x12\x1a\n" +
	"\bprogress\x18\x02 \x01(\x01R\bprogress\x12\x19\n" +
	"\x05total\x18\x03 \x01(\x01H\x00R\x05total\x88\x01\x01\x12\x18\n" +
	"\amessage\x18\x04 \x01(\tR\amessage\x12\x12\n" +
	"\x04name\x18\x05 \x01(\tR\x04nameB\b\n" +
	"\x06_total\"\x8a\x02\n" +
	"\n" +
	"ToolResult\x12 \n" +
	"\ftool_call_id\x18\x01 \x01(\tR\n" +
	"toolCallId\x12\x12\n" +
	"\x04name\x18\x02 \x01(\tR\x04name\x12\x18\n" +
	"\acontent\x18\x03 \x01(\tR\acontent\x12\x19\n" +
	"\bis_error\x18\x04 \x01(\bR\aisError\x12\x1c\n" +
	"\ttruncated\x18\x05 \x01(\bR\ttruncated\x12\x1a\n" +
	"\battempts\x18\x06 \x01(\rR\battempts\x124\n" +
	"\x06images\x18\a \x03(\v2\x1c.llmrelay.v1.ToolResultImageR\x06images\x12!\n" +
	"\fuser_content\x18\b \x01(\tR\vuserContent\"\\\n" +
	"\x0fToolResultImage\x12\x16\n" +
	"\x06offset\x18\x01 \x01(\rR\x06offset\x12\x1d\n" +
	"\n" +
	"media_type\x18\x02 \x01(\tR\tmediaType\x12\x12\n" +
	"\x04size\x18\x03 \x01(\rR\x04size\"\v\n" +
	"\tHeartbeat\"\xa9\x01\n" +
	"\x05Delta\x12\x12\n" +
	"\x04text\x18\x01 \x01(\tR\x04text\x127\n" +
	"\ttool_call\x18\x02 \x01(\v2\x1a.llmrelay.v1.ToolCallDeltaR\btoolCall\x129\n" +
	"\treasoning\x18\x03 \x01(\v2\x1b.llmrelay.v1.ReasoningDeltaR\treasoning\x12\x18\n" +
	"\arefusal\x18\x04 \x01(\tR\arefusal\"\x8c\x01\n" +
	"\x0eReasoningDelta\x12\x14\n" +
	"\x05index\x18\x01 \x01(\rR\x05index\x12\x12\n" +
	"\x04text\x18\x02 \x01(\tR\x04text\x12\x1c\n" +
	"\tsignature\x18\x03 \x01(\tR\tsignature\x12\x1a\n" +
	"\bredacted\x18\x04 \x01(\tR\bredacted\x12\x16\n" +
	"\x06format\x18\x05 \x01(\tR\x06format\"\x90\x01\n" +
	"\rToolCallDelta\x12\x14\n" +
	"\x05index\x18\x01 \x01(\rR\x05index\x12\x0e\n" +
	"\x02id\x18\x02 \x01(\tR\x02id\x12\x12\n" +
	"\x04name\x18\x03 \x01(\tR\x04name\x12'\n" +
	"\x0farguments_delta\x18\x04 \x01(\tR\x0eargumentsDelta\x12\x1c\n" +
	"\tsignature\x18\x05 \x01(\tR\tsignature\"\xc4\x02\n" +
	"\tWillRetry\x120\n" +
	"\x06reason\x18\x01 \x01(\x0e2\x18.llmrelay.v1.RetryReasonR\x06reason\x12/\n" +
	"\x05delay\x18\x02 \x01(\v2\x19.google.protobuf.DurationR\x05delay\x12!\n" +
	"\fnext_attempt\x18\x03 \x01(\rR\vnextAttempt\x12'\n" +
	"\x0fdiscard_partial\x18\x04 \x01(\bR\x0ediscardPartial\x12(\n" +
	"\x05cause\x18\x05 \x01(\v2\x12.google.rpc.StatusR\x05cause\x12#\n" +
	"\rnext_provider\x18\x06 \x01(\tR\fnextProvider\x12\x1d\n" +
	"\n" +
	"next_model\x18\a \x01(\tR\tnextModel\x12\x1a\n" +
	"\bfallback\x18\b \x01(\bR\bfallback\"\xbf\x05\n" +
	"\x05Final\x12.\n" +
	"\amessage\x18\x01 \x01(\v2\x14.llmrelay.v1.MessageR\amessage\x12.\n" +
	"\x06object\x18\x02 \x01(\v2\x16.google.protobuf.ValueR\x06object\x12>\n" +
	"\rfinish_reason\x18\x03 \x01(\x0e2\x19.llmrelay.v1.FinishReasonR\ffinishReason\x12(\n" +
	"\x05usage\x18\x04 \x01(\v2\x12.llmrelay.v1.UsageR\x05usage\x12\x1a\n" +
	"\battempts\x18\x05 \x01(\rR\battempts\x12-\n" +
	"\x12validation_retries\x18\x06 \x01(\rR\x11validationRetries\x12I\n" +
	"\x11validation_errors\x18\a \x03(\v2\x1c.llmrelay.v1.ValidationErrorR\x10validationErrors\x12\x1a\n" +
	"\bprovider\x18\b \x01(\tR\bprovider\x12\x14\n" +
	"\x05model\x18\t \x01(\tR\x05model\x12\x16\n" +
	"\x06hedges\x18\n" +
	" \x01(\rR\x06hedges\x12\x14\n" +
	"\x05route\x18\r \x01(\tR\x05route\x12E\n" +
	"\vannotations\x18\x0e \x03(\v2#.llmrelay.v1.Final.AnnotationsEntryR\vannotations\x124\n" +
	"\n" +
	"transcript\x18\x14 \x03(\v2\x14.llmrelay.v1.MessageR\n" +
	"transcript\x12\x14\n" +
	"\x05turns\x18\x15 \x01(\rR\x05turns\x12#\n" +
	"\rstop_sequence\x18\x16 \x01(\tR\fstopSequence\x1a>\n" +
	"\x10AnnotationsEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\xe9\x01\n" +
	"\x05Usage\x12!\n" +
	"\finput_tokens\x18\x01 \x01(\x04R\vinputTokens\x12#\n" +
	"\routput_tokens\x18\x02 \x01(\x04R\foutputTokens\x12)\n" +
	"\x10reasoning_tokens\x18\x03 \x01(\x04R\x0freasoningTokens\x12.\n" +
	"\x13cached_input_tokens\x18\x04 \x01(\x04R\x11cachedInputTokens\x12=\n" +
	"\x1bcache_creation_input_tokens\x18\x05 \x01(\x04R\x18cacheCreationInputTokens\"\x9d\x01\n" +
	"\x0fValidationError\x12\x18\n" +
	"\aattempt\x18\x01 \x01(\rR\aattempt\x12+\n" +
	"\x11instance_location\x18\x02 \x01(\tR\x10instanceLocation\x12)\n" +
	"\x10keyword_location\x18\x03 \x01(\tR\x0fkeywordLocation\x12\x18\n" +
	"\amessage\x18\x04 \x01(\tR\amessage\"8\n" +
	"\x11ListModelsRequest\x12#\n" +
	"\bprovider\x18\x01 \x01(\tB\a\xbaH\x04r\x02\x18?R\bprovider\"\x8f\x01\n" +
	"\x12ListModelsResponse\x12*\n" +
	"\x06models\x18\x01 \x03(\v2\x12.llmrelay.v1.ModelR\x06models\x12M\n" +
	"\x13any_model_providers\x18\x02 \x03(\v2\x1d.llmrelay.v1.AnyModelProviderR\x11anyModelProviders\"v\n" +
	"\x10AnyModelProvider\x12\x1a\n" +
	"\bprovider\x18\x01 \x01(\tR\bprovider\x12#\n" +
	"\rprovider_kind\x18\x02 \x01(\tR\fproviderKind\x12!\n" +
	"\fkey_patterns\x18\x03 \x03(\tR\vkeyPatterns\"\xb4\x02\n" +
	"\x05Model\x12\x0e\n" +
	"\x02id\x18\x01 \x01(\tR\x02id\x12\x1a\n" +
	"\bprovider\x18\x02 \x01(\tR\bprovider\x12#\n" +
	"\rprovider_kind\x18\x03 \x01(\tR\fproviderKind\x12\x12\n" +
	"\x04name\x18\x04 \x01(\tR\x04name\x12*\n" +
	"\x04kind\x18\x05 \x01(\x0e2\x16.llmrelay.v1.ModelKindR\x04kind\x122\n" +
	"\atargets\x18\x06 \x03(\v2\x18.llmrelay.v1.RouteTargetR\atargets\x123\n" +
	"\abalance\x18\a \x01(\x0e2\x19.llmrelay.v1.RouteBalanceR\abalance\x121\n" +
	"\x06health\x18\b \x01(\v2\x19.llmrelay.v1.TargetHealthR\x06health\"\x9e\x01\n" +
	"\vRouteTarget\x12\x14\n" +
	"\x05model\x18\x01 \x01(\tR\x05model\x12\x1a\n" +
	"\bprovider\x18\x02 \x01(\tR\bprovider\x12\x12\n" +
	"\x04name\x18\x03 \x01(\tR\x04name\x12\x16\n" +
	"\x06weight\x18\x04 \x01(\rR\x06weight\x121\n" +
	"\x06health\x18\x05 \x01(\v2\x19.llmrelay.v1.TargetHealthR\x06health\"\xba\x01\n" +
	"\fTargetHealth\x12\x18\n" +
	"\aejected\x18\x01 \x01(\bR\aejected\x12?\n" +
	"\rejected_until\x18\x02 \x01(\v2\x1a.google.protobuf.TimestampR\fejectedUntil\x121\n" +
	"\x14consecutive_failures\x18\x03 \x01(\rR\x13consecutiveFailures\x12\x1c\n" +
	"\tejections\x18\x04 \x01(\rR\tejections\"3\n" +
	"\x10ListToolsRequest\x12\x1f\n" +
	"\x06server\x18\x01 \x01(\tB\a\xbaH\x04r\x02\x18?R\x06server\"u\n" +
	"\x11ListToolsResponse\x12-\n" +
	"\x05tools\x18\x01 \x03(\v2\x17.llmrelay.v1.ServerToolR\x05tools\x121\n" +
	"\aservers\x18\x02 \x03(\v2\x17.llmrelay.v1.ToolServerR\aservers\"\x89\x02\n" +
	"\n" +
	"ServerTool\x12\x12\n" +
	"\x04name\x18\x01 \x01(\tR\x04name\x12\x16\n" +
	"\x06server\x18\x02 \x01(\tR\x06server\x12\x1d\n" +
	"\n" +
	"model_name\x18\x03 \x01(\tR\tmodelName\x12\x14\n" +
	"\x05title\x18\x04 \x01(\tR\x05title\x12 \n" +
	"\vdescription\x18\x05 \x01(\tR\vdescription\x12:\n" +
	"\finput_schema\x18\x06 \x01(\v2\x17.google.protobuf.StructR\vinputSchema\x12\x1c\n" +
	"\tavailable\x18\a \x01(\bR\tavailable\x12\x1e\n" +
	"\n" +
	"idempotent\x18\b \x01(\bR\n" +
	"idempotent\"\x8d\x01\n" +
	"\n" +
	"ToolServer\x12\x12\n" +
	"\x04name\x18\x01 \x01(\tR\x04name\x12\x1c\n" +
	"\tavailable\x18\x02 \x01(\bR\tavailable\x127\n" +
	"\tlisted_at\x18\x03 \x01(\v2\x1a.google.protobuf.TimestampR\blistedAt\x12\x14\n" +
	"\x05tools\x18\x04 \x01(\rR\x05tools\"\x9d\a\n" +
	"\fEmbedRequest\x12\x90\x04\n" +
	"\x05model\x18\x01 \x01(\tB\xf9\x03\xbaH\xf5\x03\xba\x01\xb4\x02\n" +
	"\fmodel.format\x12\xd5\x01must be a route name like search, or <provider>/<model> like openai/text-embedding-3-small: a lower-case name, and for a provider's model a slash, then the provider's model name (letters, digits and . _ : / @ + -)\x1aLthis.matches('^[a-z0-9][a-z0-9_-]{0,62}(/[A-Za-z0-9][A-Za-z0-9._:/@+-]*)?$')\xba\x01\xb1\x01\n" +
	"\x13model.path_segments\x12Nthe model name must not have an empty, \".\" or \"..\" segment between its slashes\x1aJthis == '' || !this.split('/').exists(s, s == '' || s == '.' || s == '..')\xc8\x01\x01r\x03\x18\x80\x02R\x05model\x12-\n" +
	"\x06inputs\x18\x02 \x03(\tB\x15\xbaH\x12\x92\x01\x0f\b\x01\x10\x80\x10\"\br\x06\x10\x01(\x80\x80\x04R\x06inputs\x120\n" +
	"\n" +
	"dimensions\x18\x03 \x01(\rB\v\xbaH\b*\x06\x18\x80\x80\x04(\x01H\x00R\n" +
	"dimensions\x88\x01\x01\x12*\n" +
	"\n" +
	"request_id\x18\x04 \x01(\tB\v\xbaH\b\xd8\x01\x01r\x03\xb0\x01\x01R\trequestId\x12]\n" +
	"\bmetadata\x18\x05 \x03(\v2'.llmrelay.v1.EmbedRequest.MetadataEntryB\x18\xbaH\x15\x9a\x01\x12\x10@\"\ar\x05\x10\x01(\x80\x01*\x05r\x03(\x80\bR\bmetadata\x12B\n" +
	"\x10provider_options\x18\x06 \x01(\v2\x17.google.protobuf.StructR\x0fproviderOptions\x1a;\n" +
	"\rMetadataEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01B\r\n" +
	"\v_dimensions\"\xd5\x01\n" +
	"\rEmbedResponse\x126\n" +
	"\n" +
	"embeddings\x18\x01 \x03(\v2\x16.llmrelay.v1.EmbeddingR\n" +
	"embeddings\x12\x1a\n" +
	"\bprovider\x18\x02 \x01(\tR\bprovider\x12\x14\n" +
	"\x05model\x18\x03 \x01(\tR\x05model\x12\x14\n" +
	"\x05route\x18\x04 \x01(\tR\x05route\x12(\n" +
	"\x05usage\x18\x05 \x01(\v2\x12.llmrelay.v1.UsageR\x05usage\x12\x1a\n" +
	"\battempts\x18\x06 \x01(\rR\battempts\"#\n" +
	"\tEmbedding\x12\x16\n" +
	"\x06values\x18\x01 \x03(\x02R\x06values*h\n" +
	"\rOnOutputLimit\x12\x1f\n" +
	"\x1bON_OUTPUT_LIMIT_UNSPECIFIED\x10\x00\x12\x18\n" +
	"\x14ON_OUTPUT_LIMIT_FAIL\x10\x01\x12\x1c\n" +
	"\x18ON_OUTPUT_LIMIT_TRUNCATE\x10\x02*\x8a\x01\n" +
	"\vImageDetail\x12\x1c\n" +
	"\x18IMAGE_DETAIL_UNSPECIFIED\x10\x00\x12\x14\n" +
	"\x10IMAGE_DETAIL_LOW\x10\x01\x12\x15\n" +
	"\x11IMAGE_DETAIL_HIGH\x10\x02\x12\x15\n" +
	"\x11IMAGE_DETAIL_AUTO\x10\x03\x12\x19\n" +
	"\x15IMAGE_DETAIL_ORIGINAL\x10\x04*_\n" +
	"\x04Role\x12\x14\n" +
	"\x10ROLE_UNSPECIFIED\x10\x00\x12\x0f\n" +
	"\vROLE_SYSTEM\x10\x01\x12\r\n" +
	"\tROLE_USER\x10\x02\x12\x12\n" +
	"\x0eROLE_ASSISTANT\x10\x03\x12\r\n" +
	"\tROLE_TOOL\x10\x04*\xa2\x01\n" +
	"\x0eToolChoiceMode\x12 \n" +
	"\x1cTOOL_CHOICE_MODE_UNSPECIFIED\x10\x00\x12\x19\n" +
	"\x15TOOL_CHOICE_MODE_AUTO\x10\x01\x12\x19\n" +
	"\x15TOOL_CHOICE_MODE_NONE\x10\x02\x12\x1d\n" +
	"\x19TOOL_CHOICE_MODE_REQUIRED\x10\x03\x12\x19\n" +
	"\x15TOOL_CHOICE_MODE_TOOL\x10\x04*X\n" +
	"\tOnInvalid\x12\x1a\n" +
	"\x16ON_INVALID_UNSPECIFIED\x10\x00\x12\x13\n" +
	"\x0fON_INVALID_FAIL\x10\x01\x12\x1a\n" +
	"\x16ON_INVALID_RETURN_TEXT\x10\x02*Q\n" +
	"\tMidstream\x12\x19\n" +
	"\x15MIDSTREAM_UNSPECIFIED\x10\x00\x12\x15\n" +
	"\x11MIDSTREAM_RESTART\x10\x01\x12\x12\n" +
	"\x0eMIDSTREAM_FAIL\x10\x02*Y\n" +
	"\vHedgeTarget\x12\x1c\n" +
	"\x18HEDGE_TARGET_UNSPECIFIED\x10\x00\x12\x15\n" +
	"\x11HEDGE_TARGET_SAME\x10\x01\x12\x15\n" +
	"\x11HEDGE_TARGET_NEXT\x10\x02*\xfe\x01\n" +
	"\vRetryReason\x12\x1c\n" +
	"\x18RETRY_REASON_UNSPECIFIED\x10\x00\x12\x1d\n" +
	"\x19RETRY_REASON_RATE_LIMITED\x10\x01\x12\x1b\n" +
	"\x17RETRY_REASON_OVERLOADED\x10\x02\x12\x1d\n" +
	"\x19RETRY_REASON_SERVER_ERROR\x10\x03\x12\x1a\n" +
	"\x16RETRY_REASON_TRANSPORT\x10\x04\x12\x18\n" +
	"\x14RETRY_REASON_STALLED\x10\x05\x12\x1f\n" +
	"\x1bRETRY_REASON_INVALID_OUTPUT\x10\x06\x12\x1f\n" +
	"\x1bRETRY_REASON_TARGET_REFUSED\x10\t*\x8f\x02\n" +
	"\fFinishReason\x12\x1d\n" +
	"\x19FINISH_REASON_UNSPECIFIED\x10\x00\x12\x16\n" +
	"\x12FINISH_REASON_STOP\x10\x01\x12\x18\n" +
	"\x14FINISH_REASON_LENGTH\x10\x02\x12\x1c\n" +
	"\x18FINISH_REASON_TOOL_CALLS\x10\x03\x12 \n" +
	"\x1cFINISH_REASON_CONTENT_FILTER\x10\x04\x12\x17\n" +
	"\x13FINISH_REASON_OTHER\x10\x05\x12\x19\n" +
	"\x15FINISH_REASON_REFUSAL\x10\x06\x12\x18\n" +
	"\x14FINISH_REASON_PAUSED\x10\a\x12 \n" +
	"\x1cFINISH_REASON_MAX_TOOL_TURNS\x10\b*\\\n" +
	"\tModelKind\x12\x1a\n" +
	"\x16MODEL_KIND_UNSPECIFIED\x10\x00\x12\x1d\n" +
	"\x19MODEL_KIND_PROVIDER_MODEL\x10\x01\x12\x14\n" +
	"\x10MODEL_KIND_ROUTE\x10\x02*d\n" +
	"\fRouteBalance\x12\x1d\n" +
	"\x19ROUTE_BALANCE_UNSPECIFIED\x10\x00\x12\x19\n" +
	"\x15ROUTE_BALANCE_ORDERED\x10\x01\x12\x1a\n" +
	"\x16ROUTE_BALANCE_WEIGHTED\x10\x022\xf3\x02\n" +
	"\n" +
	"LLMService\x12F\n" +
	"\bGenerate\x12\x1c.llmrelay.v1.GenerateRequest\x1a\x1a.llmrelay.v1.GenerateEvent0\x01\x12M\n" +
	"\n" +
	"ListModels\x12\x1e.llmrelay.v1.ListModelsRequest\x1a\x1f.llmrelay.v1.ListModelsResponse\x12B\n" +
	"\x06Resume\x12\x1a.llmrelay.v1.ResumeRequest\x1a\x1a.llmrelay.v1.GenerateEvent0\x01\x12J\n" +
	"\tListTools\x12\x1d.llmrelay.v1.ListToolsRequest\x1a\x1e.llmrelay.v1.ListToolsResponse\x12>\n" +
	"\x05Embed\x12\x19.llmrelay.v1.EmbedRequest\x1a\x1a.llmrelay.v1.EmbedResponseB@Z>github.com/llmrelay/llmrelay/client/gen/llmrelay/v1;llmrelayv1b\x06proto3"

var (
	file_llmrelay_v1_llmrelay_proto_rawDescOnce sync.Once
	file_llmrelay_v1_llmrelay_proto_rawDescData []byte
)

func file_llmrelay_v1_llmrelay_proto_rawDescGZIP() []byte {
	file_llmrelay_v1_llmrelay_proto_rawDescOnce.Do(func() {
		file_llmrelay_v1_llmrelay_proto_rawDescData = protoimpl.X.CompressGZIP(unsafe.Slice(unsafe.StringData(file_llmrelay_v1_llmrelay_proto_rawDesc), len(file_llmrelay_v1_llmrelay_proto_rawDesc)))
	})
	return file_llmrelay_v1_llmrelay_proto_rawDescData
}

var file_llmrelay_v1_llmrelay_proto_enumTypes = make([]protoimpl.EnumInfo, 11)
var file_llmrelay_v1_llmrelay_proto_msgTypes = make([]protoimpl.MessageInfo, 43)
var file_llmrelay_v1_llmrelay_proto_goTypes = []any{
	(OnOutputLimit)(0),            // 0: llmrelay.v1.OnOutputLimit
	(ImageDetail)(0),              // 1: llmrelay.v1.ImageDetail
	(Role)(0),                     // 2: llmrelay.v1.Role
	(ToolChoiceMode)(0),           // 3: llmrelay.v1.ToolChoiceMode
	(OnInvalid)(0),                // 4: llmrelay.v1.OnInvalid
	(Midstream)(0),                // 5: llmrelay.v1.Midstream
	(HedgeTarget)(0),              // 6: llmrelay.v1.HedgeTarget
	(RetryReason)(0),              // 7: llmrelay.v1.RetryReason
	(FinishReason)(0),             // 8: llmrelay.v1.FinishReason
	(ModelKind)(0),                // 9: llmrelay.v1.ModelKind
	(RouteBalance)(0),             // 10: llmrelay.v1.RouteBalance
	(*ResumeRequest)(nil),         // 11: llmrelay.v1.ResumeRequest
	(*GenerateRequest)(nil),       // 12: llmrelay.v1.GenerateRequest
	(*OutputLimit)(nil),           // 13: llmrelay.v1.OutputLimit
	(*Message)(nil),               // 14: llmrelay.v1.Message
	(*Part)(nil),                  // 15: llmrelay.v1.Part
	(*Image)(nil),                 // 16: llmrelay.v1.Image
	(*ProviderToolBlock)(nil),     // 17: llmrelay.v1.ProviderToolBlock
	(*Reasoning)(nil),             // 18: llmrelay.v1.Reasoning
	(*ToolCall)(nil),              // 19: llmrelay.v1.ToolCall
	(*GenerationConfig)(nil),      // 20: llmrelay.v1.GenerationConfig
	(*Tool)(nil),                  // 21: llmrelay.v1.Tool
	(*ToolChoice)(nil),            // 22: llmrelay.v1.ToolChoice
	(*ResponseFormat)(nil),        // 23: llmrelay.v1.ResponseFormat
	(*RetryPolicy)(nil),           // 24: llmrelay.v1.RetryPolicy
	(*HedgePolicy)(nil),           // 25: llmrelay.v1.HedgePolicy
	(*GenerateEvent)(nil),         // 26: llmrelay.v1.GenerateEvent
	(*ToolProgress)(nil),          // 27: llmrelay.v1.ToolProgress
	(*ToolResult)(nil),            // 28: llmrelay.v1.ToolResult
	(*ToolResultImage)(nil),       // 29: llmrelay.v1.ToolResultImage
	(*Heartbeat)(nil),             // 30: llmrelay.v1.Heartbeat
	(*Delta)(nil),                 // 31: llmrelay.v1.Delta
	(*ReasoningDelta)(nil),        // 32: llmrelay.v1.ReasoningDelta
	(*ToolCallDelta)(nil),         // 33: llmrelay.v1.ToolCallDelta
	(*WillRetry)(nil),             // 34: llmrelay.v1.WillRetry
	(*Final)(nil),                 // 35: llmrelay.v1.Final
	(*Usage)(nil),                 // 36: llmrelay.v1.Usage
	(*ValidationError)(nil),       // 37: llmrelay.v1.ValidationError
	(*ListModelsRequest)(nil),     // 38: llmrelay.v1.ListModelsRequest
	(*ListModelsResponse)(nil),    // 39: llmrelay.v1.ListModelsResponse
	(*AnyModelProvider)(nil),      // 40: llmrelay.v1.AnyModelProvider
	(*Model)(nil),                 // 41: llmrelay.v1.Model
	(*RouteTarget)(nil),           // 42: llmrelay.v1.RouteTarget
	(*TargetHealth)(nil),          // 43: llmrelay.v1.TargetHealth
	(*ListToolsRequest)(nil),      // 44: llmrelay.v1.ListToolsRequest
	(*ListToolsResponse)(nil),     // 45: llmrelay.v1.ListToolsResponse
	(*ServerTool)(nil),            // 46: llmrelay.v1.ServerTool
	(*ToolServer)(nil),            // 47: llmrelay.v1.ToolServer
	(*EmbedRequest)(nil),          // 48: llmrelay.v1.EmbedRequest
	(*EmbedResponse)(nil),         // 49: llmrelay.v1.EmbedResponse
	(*Embedding)(nil),             // 50: llmrelay.v1.Embedding
	nil,                           // 51: llmrelay.v1.GenerateRequest.MetadataEntry
	nil,                           // 52: llmrelay.v1.Final.AnnotationsEntry
	nil,                           // 53: llmrelay.v1.EmbedRequest.MetadataEntry
	(*durationpb.Duration)(nil),   // 54: google.protobuf.Duration
	(*structpb.Struct)(nil),       // 55: google.protobuf.Struct
	(*structpb.Value)(nil),        // 56: google.protobuf.Value
	(*status.Status)(nil),         // 57: google.rpc.Status
	(*timestamppb.Timestamp)(nil), // 58: google.protobuf.Timestamp
}
var file_llmrelay_v1_llmrelay_proto_depIdxs = []int32{
	14, // 0: llmrelay.v1.GenerateRequest.messages:type_name -> llmrelay.v1.Message
	20, // 1: llmrelay.v1.GenerateRequest.generation:type_name -> llmrelay.v1.GenerationConfig
	21, // 2: llmrelay.v1.GenerateRequest.tools:type_name -> llmrelay.v1.Tool
	22, // 3: llmrelay.v1.GenerateRequest.tool_choice:type_name -> llmrelay.v1.ToolChoice
	23, // 4: llmrelay.v1.GenerateRequest.response_format:type_name -> llmrelay.v1.ResponseFormat
	24, // 5: llmrelay.v1.GenerateRequest.retry:type_name -> llmrelay.v1.RetryPolicy
	54, // 6: llmrelay.v1.GenerateRequest.stream_idle_timeout:type_name -> google.protobuf.Duration
	55, // 7: llmrelay.v1.GenerateRequest.provider_options:type_name -> google.protobuf.Struct
	51, // 8: llmrelay.v1.GenerateRequest.metadata:type_name -> llmrelay.v1.GenerateRequest.MetadataEntry
	54, // 9: llmrelay.v1.GenerateRequest.first_event_timeout:type_name -> google.protobuf.Duration
	13, // 10: llmrelay.v1.GenerateRequest.output_limit:type_name -> llmrelay.v1.OutputLimit
	54, // 11: llmrelay.v1.GenerateRequest.heartbeat_interval:type_name -> google.protobuf.Duration
	25, // 12: llmrelay.v1.GenerateRequest.hedging:type_name -> llmrelay.v1.HedgePolicy
	0,  // 13: llmrelay.v1.OutputLimit.on_limit:type_name -> llmrelay.v1.OnOutputLimit
	2,  // 14: llmrelay.v1.Message.role:type_name -> llmrelay.v1.Role
	19, // 15: llmrelay.v1.Message.tool_calls:type_name -> llmrelay.v1.ToolCall
	18, // 16: llmrelay.v1.Message.reasoning:type_name -> llmrelay.v1.Reasoning
	15, // 17: llmrelay.v1.Message.parts:type_name -> llmrelay.v1.Part
	17, // 18: llmrelay.v1.Message.provider_tools:type_name -> llmrelay.v1.ProviderToolBlock
	16, // 19: llmrelay.v1.Part.image:type_name -> llmrelay.v1.Image
	1,  // 20: llmrelay.v1.Image.detail:type_name -> llmrelay.v1.ImageDetail
	55, // 21: llmrelay.v1.Tool.parameters:type_name -> google.protobuf.Struct
	3,  // 22: llmrelay.v1.ToolChoice.mode:type_name -> llmrelay.v1.ToolChoiceMode
	55, // 23: llmrelay.v1.ResponseFormat.json_schema:type_name -> google.protobuf.Struct
	4,  // 24: llmrelay.v1.ResponseFormat.on_invalid:type_name -> llmrelay.v1.OnInvalid
	54, // 25: llmrelay.v1.ResponseFormat.partial_object_interval:type_name -> google.protobuf.Duration
	54, // 26: llmrelay.v1.RetryPolicy.initial_backoff:type_name -> google.protobuf.Duration
	54, // 27: llmrelay.v1.RetryPolicy.max_backoff:type_name -> google.protobuf.Duration
	5,  // 28: llmrelay.v1.RetryPolicy.midstream:type_name -> llmrelay.v1.Midstream
	54, // 29: llmrelay.v1.HedgePolicy.hedge_after:type_name -> google.protobuf.Duration
	6,  // 30: llmrelay.v1.HedgePolicy.target:type_name -> llmrelay.v1.HedgeTarget
	31, // 31: llmrelay.v1.GenerateEvent.delta:type_name -> llmrelay.v1.Delta
	34, // 32: llmrelay.v1.GenerateEvent.will_retry:type_name -> llmrelay.v1.WillRetry
	35, // 33: llmrelay.v1.GenerateEvent.final:type_name -> llmrelay.v1.Final
	56, // 34: llmrelay.v1.GenerateEvent.partial_object:type_name -> google.protobuf.Value
	30, // 35: llmrelay.v1.GenerateEvent.heartbeat:type_name -> llmrelay.v1.Heartbeat
	27, // 36: llmrelay.v1.GenerateEvent.tool_progress:type_name -> llmrelay.v1.ToolProgress
	28, // 37: llmrelay.v1.GenerateEvent.tool_result:type_name -> llmrelay.v1.ToolResult
	29, // 38: llmrelay.v1.ToolResult.images:type_name -> llmrelay.v1.ToolResultImage
	33, // 39: llmrelay.v1.Delta.tool_call:type_name -> llmrelay.v1.ToolCallDelta
	32, // 40: llmrelay.v1.Delta.reasoning:type_name -> llmrelay.v1.ReasoningDelta
	7,  // 41: llmrelay.v1.WillRetry.reason:type_name -> llmrelay.v1.RetryReason
	54, // 42: llmrelay.v1.WillRetry.delay:type_name -> google.protobuf.Duration
	57, // 43: llmrelay.v1.WillRetry.cause:type_name -> google.rpc.Status
	14, // 44: llmrelay.v1.Final.message:type_name -> llmrelay.v1.Message
	56, // 45: llmrelay.v1.Final.object:type_name -> google.protobuf.Value
	8,  // 46: llmrelay.v1.Final.finish_reason:type_name -> llmrelay.v1.FinishReason
	36, // 47: llmrelay.v1.Final.usage:type_name -> llmrelay.v1.Usage
	37, // 48: llmrelay.v1.Final.validation_errors:type_name -> llmrelay.v1.ValidationError
	52, // 49: llmrelay.v1.Final.annotations:type_name -> llmrelay.v1.Final.AnnotationsEntry
	14, // 50: llmrelay.v1.Final.transcript:type_name -> llmrelay.v1.Message
	41, // 51: llmrelay.v1.ListModelsResponse.models:type_name -> llmrelay.v1.Model
	40, // 52: llmrelay.v1.ListModelsResponse.any_model_providers:type_name -> llmrelay.v1.AnyModelProvider
	9,  // 53: llmrelay.v1.Model.kind:type_name -> llmrelay.v1.ModelKind
	42, // 54: llmrelay.v1.Model.targets:type_name -> llmrelay.v1.RouteTarget
	10, // 55: llmrelay.v1.Model.balance:type_name -> llmrelay.v1.RouteBalance
	43, // 56: llmrelay.v1.Model.health:type_name -> llmrelay.v1.TargetHealth
	43, // 57: llmrelay.v1.RouteTarget.health:type_name -> llmrelay.v1.TargetHealth
	58, // 58: llmrelay.v1.TargetHealth.ejected_until:type_name -> google.protobuf.Timestamp
	46, // 59: llmrelay.v1.ListToolsResponse.tools:type_name -> llmrelay.v1.ServerTool
	47, // 60: llmrelay.v1.ListToolsResponse.servers:type_name -> llmrelay.v1.ToolServer
	55, // 61: llmrelay.v1.ServerTool.input_schema:type_name -> google.protobuf.Struct
	58, // 62: llmrelay.v1.ToolServer.listed_at:type_name -> google.protobuf.Timestamp
	53, // 63: llmrelay.v1.EmbedRequest.metadata:type_name -> llmrelay.v1.EmbedRequest.MetadataEntry
	55, // 64: llmrelay.v1.EmbedRequest.provider_options:type_name -> google.protobuf.Struct
	50, // 65: llmrelay.v1.EmbedResponse.embeddings:type_name -> llmrelay.v1.Embedding
	36, // 66: llmrelay.v1.EmbedResponse.usage:type_name -> llmrelay.v1.Usage
	12, // 67: llmrelay.v1.LLMService.Generate:input_type -> llmrelay.v1.GenerateRequest
	38, // 68: llmrelay.v1.LLMService.ListModels:input_type -> llmrelay.v1.ListModelsRequest
	11, // 69: llmrelay.v1.LLMService.Resume:input_type -> llmrelay.v1.ResumeRequest
	44, // 70: llmrelay.v1.LLMService.ListTools:input_type -> llmrelay.v1.ListToolsRequest
	48, // 71: llmrelay.v1.LLMService.Embed:input_type -> llmrelay.v1.EmbedRequest
	26, // 72: llmrelay.v1.LLMService.Generate:output_type -> llmrelay.v1.GenerateEvent
	39, // 73: llmrelay.v1.LLMService.ListModels:output_type -> llmrelay.v1.ListModelsResponse
	26, // 74: llmrelay.v1.LLMService.Resume:output_type -> llmrelay.v1.GenerateEvent
	45, // 75: llmrelay.v1.LLMService.ListTools:output_type -> llmrelay.v1.ListToolsResponse
	49, // 76: llmrelay.v1.LLMService.Embed:output_type -> llmrelay.v1.EmbedResponse
	72, // [72:77] is the sub-list for method output_type
	67, // [67:72] is the sub-list for method input_type
	67, // [67:67] is the sub-list for extension type_name
	67, // [67:67] is the sub-list for extension extendee
	0,  // [0:67] is the sub-list for field type_name
}

func init() { file_llmrelay_v1_llmrelay_proto_init() }
func file_llmrelay_v1_llmrelay_proto_init() {
	if File_llmrelay_v1_llmrelay_proto != nil {
		return
	}
	file_llmrelay_v1_llmrelay_proto_msgTypes[1].OneofWrappers = []any{}
	file_llmrelay_v1_llmrelay_proto_msgTypes[4].OneofWrappers = []any{
		(*Part_Text)(nil),
		(*Part_Reasoning)(nil),
		(*Part_ToolCall)(nil),
		(*Part_ProviderTool)(nil),
		(*Part_Image)(nil),
	}
	file_llmrelay_v1_llmrelay_proto_msgTypes[5].OneofWrappers = []any{
		(*Image_Url)(nil),
		(*Image_Data)(nil),
	}
	file_llmrelay_v1_llmrelay_proto_msgTypes[9].OneofWrappers = []any{}
	file_llmrelay_v1_llmrelay_proto_msgTypes[12].OneofWrappers = []any{}
	file_llmrelay_v1_llmrelay_proto_msgTypes[14].OneofWrappers = []any{}
	file_llmrelay_v1_llmrelay_proto_msgTypes[15].OneofWrappers = []any{
		(*GenerateEvent_Delta)(nil),
		(*GenerateEvent_WillRetry)(nil),
		(*GenerateEvent_Final)(nil),
		(*GenerateEvent_PartialObject)(nil),
		(*GenerateEvent_Heartbeat)(nil),
		(*GenerateEvent_ToolProgress)(nil),
		(*GenerateEvent_ToolResult)(nil),
	}
	file_llmrelay_v1_llmrelay_proto_msgTypes[16].OneofWrappers = []any{}
	file_llmrelay_v1_llmrelay_proto_msgTypes[37].OneofWrappers = []any{}
	type x struct{}
	out := protoimpl.TypeBuilder{
		File: protoimpl.DescBuilder{
			GoPackagePath: reflect.TypeOf(x{}).PkgPath(),
			RawDescriptor: unsafe.Slice(unsafe.StringData(file_llmrelay_v1_llmrelay_proto_rawDesc), len(file_llmrelay_v1_llmrelay_proto_rawDesc)),
			NumEnums:      11,
			NumMessages:   43,
			NumExtensions: 0,
			NumServices:   1,
		},
		GoTypes:           file_llmrelay_v1_llmrelay_proto_goTypes,
		DependencyIndexes: file_llmrelay_v1_llmrelay_proto_depIdxs,
		EnumInfos:         file_llmrelay_v1_llmrelay_proto_enumTypes,
		MessageInfos:      file_llmrelay_v1_llmrelay_proto_msgTypes,
	}.Build()
	File_llmrelay_v1_llmrelay_proto = out.File
	file_llmrelay_v1_llmrelay_proto_goTypes = nil
	file_llmrelay_v1_llmrelay_proto_depIdxs = nil
}
