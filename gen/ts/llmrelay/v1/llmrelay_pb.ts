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

// @generated by protoc-gen-es v2.13.0 with parameter "target=ts,import_extension=js"
// @generated from file llmrelay/v1/llmrelay.proto (package llmrelay.v1, syntax proto3)
/* eslint-disable */

import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import { enumDesc, fileDesc, messageDesc, serviceDesc } from "@bufbuild/protobuf/codegenv2";
import { file_buf_validate_validate } from "../../buf/validate/validate_pb.js";
import type { Duration, Timestamp, Value } from "@bufbuild/protobuf/wkt";
import { file_google_protobuf_duration, file_google_protobuf_struct, file_google_protobuf_timestamp } from "@bufbuild/protobuf/wkt";
import type { Status } from "../../google/rpc/status_pb.js";
import { file_google_rpc_status } from "../../google/rpc/status_pb.js";
import type { JsonObject, Message as Message$1 } from "@bufbuild/protobuf";

/**
 * Describes the file llmrelay/v1/llmrelay.proto.
 */
export const file_llmrelay_v1_llmrelay: GenFile = /*@__PURE__*/
  fileDesc("ChpsbG1yZWxheS92MS9sbG1yZWxheS5wcm90bxILbGxtcmVsYXkudjEiSwoNUmVzdW1lUmVxdWVzdBIiCgpyZXF1ZXN0X2lkGAEgASgJQg66SAPIAQG6SAVyA7ABARIWCg5hZnRlcl9zZXF1ZW5jZRgCIAEoBCKoDwoPR2VuZXJhdGVSZXF1ZXN0Eo8ECgVtb2RlbBgBIAEoCUL/A7pIA8gBAbpIBXIDGIACuki0AroBsAIKDG1vZGVsLmZvcm1hdBLRAW11c3QgYmUgYSByb3V0ZSBuYW1lIGxpa2Ugc21hcnQsIG9yIDxwcm92aWRlcj4vPG1vZGVsPiBsaWtlIG1vY2svZWNobyBvciBvcGVuYWkvZ3B0LTRvOiBhIGxvd2VyLWNhc2UgbmFtZSwgYW5kIGZvciBhIHByb3ZpZGVyJ3MgbW9kZWwgYSBzbGFzaCwgdGhlbiB0aGUgcHJvdmlkZXIncyBtb2RlbCBuYW1lIChsZXR0ZXJzLCBkaWdpdHMgYW5kIC4gXyA6IC8gQCArIC0pGkx0aGlzLm1hdGNoZXMoJ15bYS16MC05XVthLXowLTlfLV17MCw2Mn0oL1tBLVphLXowLTldW0EtWmEtejAtOS5fOi9AKy1dKik/JCcpuki1AboBsQEKE21vZGVsLnBhdGhfc2VnbWVudHMSTnRoZSBtb2RlbCBuYW1lIG11c3Qgbm90IGhhdmUgYW4gZW1wdHksICIuIiBvciAiLi4iIHNlZ21lbnQgYmV0d2VlbiBpdHMgc2xhc2hlcxpKdGhpcyA9PSAnJyB8fCAhdGhpcy5zcGxpdCgnLycpLmV4aXN0cyhzLCBzID09ICcnIHx8IHMgPT0gJy4nIHx8IHMgPT0gJy4uJykSMwoIbWVzc2FnZXMYAiADKAsyFC5sbG1yZWxheS52MS5NZXNzYWdlQgu6SAiSAQUIARCAEBIxCgpnZW5lcmF0aW9uGAMgASgLMh0ubGxtcmVsYXkudjEuR2VuZXJhdGlvbkNvbmZpZxIrCgV0b29scxgEIAMoCzIRLmxsbXJlbGF5LnYxLlRvb2xCCbpIBpIBAxCAARIsCgt0b29sX2Nob2ljZRgFIAEoCzIXLmxsbXJlbGF5LnYxLlRvb2xDaG9pY2USNAoPcmVzcG9uc2VfZm9ybWF0GAYgASgLMhsubGxtcmVsYXkudjEuUmVzcG9uc2VGb3JtYXQSJwoFcmV0cnkYByABKAsyGC5sbG1yZWxheS52MS5SZXRyeVBvbGljeRJFChNzdHJlYW1faWRsZV90aW1lb3V0GAggASgLMhkuZ29vZ2xlLnByb3RvYnVmLkR1cmF0aW9uQg26SAqqAQciAwiQHCoAEiIKCnJlcXVlc3RfaWQYCSABKAlCDrpIA9gBAbpIBXIDsAEBEjEKEHByb3ZpZGVyX29wdGlvbnMYCiABKAsyFy5nb29nbGUucHJvdG9idWYuU3RydWN0EsYDCg9mYWxsYmFja19tb2RlbHMYDyADKAlCrAO6SAWSAQIQCLpICpIBByIFcgMYgAK6SMkBkgHFASLCAboBvgEKFmZhbGxiYWNrX21vZGVscy5mb3JtYXQSVm11c3QgYmUgYSByb3V0ZSBuYW1lIGxpa2Ugc21hcnQsIG9yIDxwcm92aWRlcj4vPG1vZGVsPiBsaWtlIG1vY2svZWNobyBvciBvcGVuYWkvZ3B0LTRvGkx0aGlzLm1hdGNoZXMoJ15bYS16MC05XVthLXowLTlfLV17MCw2Mn0oL1tBLVphLXowLTldW0EtWmEtejAtOS5fOi9AKy1dKik/JCcpukjGAZIBwgEivwG6AbsBCh1mYWxsYmFja19tb2RlbHMucGF0aF9zZWdtZW50cxJOdGhlIG1vZGVsIG5hbWUgbXVzdCBub3QgaGF2ZSBhbiBlbXB0eSwgIi4iIG9yICIuLiIgc2VnbWVudCBiZXR3ZWVuIGl0cyBzbGFzaGVzGkp0aGlzID09ICcnIHx8ICF0aGlzLnNwbGl0KCcvJykuZXhpc3RzKHMsIHMgPT0gJycgfHwgcyA9PSAnLicgfHwgcyA9PSAnLi4nKRJWCghtZXRhZGF0YRgLIAMoCzIqLmxsbXJlbGF5LnYxLkdlbmVyYXRlUmVxdWVzdC5NZXRhZGF0YUVudHJ5Qhi6SBWaARIQQCIHcgUQASiAASoFcgMogAgSRQoTZmlyc3RfZXZlbnRfdGltZW91dBgMIAEoCzIZLmdvb2dsZS5wcm90b2J1Zi5EdXJhdGlvbkINukgKqgEHIgMIkBwqABIuCgxvdXRwdXRfbGltaXQYDSABKAsyGC5sbG1yZWxheS52MS5PdXRwdXRMaW1pdBJEChJoZWFydGJlYXRfaW50ZXJ2YWwYDiABKAsyGS5nb29nbGUucHJvdG9idWYuRHVyYXRpb25CDbpICqoBByIDCKwCKgASFgoJcmVzdW1hYmxlGBAgASgISACIAQESKQoHaGVkZ2luZxgRIAEoCzIYLmxsbXJlbGF5LnYxLkhlZGdlUG9saWN5EicKDHNlcnZlcl90b29scxgUIAMoCUIRukgOkgELEEAiB3IFEAEYgAISJwoObWF4X3Rvb2xfdHVybnMYFSABKA1CCrpIByoFGOgHKAFIAYgBARovCg1NZXRhZGF0YUVudHJ5EgsKA2tleRgBIAEoCRINCgV2YWx1ZRgCIAEoCToCOAFCDAoKX3Jlc3VtYWJsZUIRCg9fbWF4X3Rvb2xfdHVybnMiZQoLT3V0cHV0TGltaXQSHgoJbWF4X2J5dGVzGAEgASgEQgu6SAgyBhiAgICABBI2Cghvbl9saW1pdBgCIAEoDjIaLmxsbXJlbGF5LnYxLk9uT3V0cHV0TGltaXRCCLpIBYIBAhABIvcJCgdNZXNzYWdlEogBCgRyb2xlGAEgASgOMhEubGxtcmVsYXkudjEuUm9sZUJnukhkugFhCgxyb2xlLmRlZmluZWQSO211c3QgYmUgUk9MRV9TWVNURU0sIFJPTEVfVVNFUiwgUk9MRV9BU1NJU1RBTlQgb3IgUk9MRV9UT09MGhR0aGlzIGluIFsxLCAyLCAzLCA0XRIcCgdjb250ZW50GAIgASgJQgu6SAhyBiiAgICABBI0Cgp0b29sX2NhbGxzGAMgAygLMhUubGxtcmVsYXkudjEuVG9vbENhbGxCCbpIBpIBAxCACBIeCgx0b29sX2NhbGxfaWQYBCABKAlCCLpIBXIDGIACEjQKCXJlYXNvbmluZxgFIAMoCzIWLmxsbXJlbGF5LnYxLlJlYXNvbmluZ0IJukgGkgEDEIACEhwKB3JlZnVzYWwYBiABKAlCC7pICHIGKICAgIAEEisKBXBhcnRzGAcgAygLMhEubGxtcmVsYXkudjEuUGFydEIJukgGkgEDEIAgEkEKDnByb3ZpZGVyX3Rvb2xzGAggAygLMh4ubGxtcmVsYXkudjEuUHJvdmlkZXJUb29sQmxvY2tCCbpIBpIBAxCAAhIdCgtzZXJ2ZXJfdG9vbBgUIAEoCUIIukgFcgMYgAISEgoKdG9vbF9lcnJvchgVIAEoCDr1BbpItAIasQIKFm1lc3NhZ2UuYXNzaXN0YW50X29ubHkShgFyZWFzb25pbmcsIHJlZnVzYWwgYW5kIHByb3ZpZGVyX3Rvb2xzIGJlbG9uZyB0byBST0xFX0FTU0lTVEFOVCBtZXNzYWdlcywgYW5kIHBhcnRzIHRvIFJPTEVfQVNTSVNUQU5ULCBST0xFX1VTRVIgYW5kIFJPTEVfVE9PTCBtZXNzYWdlcxqNAXRoaXMucm9sZSA9PSAzIHx8IChzaXplKHRoaXMucmVhc29uaW5nKSA9PSAwICYmIHRoaXMucmVmdXNhbCA9PSAnJyAmJiAhaGFzKHRoaXMucHJvdmlkZXJfdG9vbHMpICYmICh0aGlzLnJvbGUgaW4gWzIsIDRdIHx8ICFoYXModGhpcy5wYXJ0cykpKbpIjwEajAEKEm1lc3NhZ2UudXNlcl9wYXJ0cxI0YSBST0xFX1VTRVIgbWVzc2FnZSdzIHBhcnRzIGFyZSB0ZXh0IGFuZCBpbWFnZSBwYXJ0cxpAdGhpcy5yb2xlICE9IDIgfHwgdGhpcy5wYXJ0cy5hbGwocCwgaGFzKHAudGV4dCkgfHwgaGFzKHAuaW1hZ2UpKbpIjwEajAEKEm1lc3NhZ2UudG9vbF9wYXJ0cxI0YSBST0xFX1RPT0wgbWVzc2FnZSdzIHBhcnRzIGFyZSB0ZXh0IGFuZCBpbWFnZSBwYXJ0cxpAdGhpcy5yb2xlICE9IDQgfHwgdGhpcy5wYXJ0cy5hbGwocCwgaGFzKHAudGV4dCkgfHwgaGFzKHAuaW1hZ2UpKbpIkwEakAEKGm1lc3NhZ2UuaW1hZ2VfdXNlcl9vcl90b29sEjZpbWFnZSBwYXJ0cyBiZWxvbmcgdG8gUk9MRV9VU0VSIGFuZCBST0xFX1RPT0wgbWVzc2FnZXMaOnRoaXMucm9sZSBpbiBbMiwgNF0gfHwgIXRoaXMucGFydHMuZXhpc3RzKHAsIGhhcyhwLmltYWdlKSkimgEKBFBhcnQSGwoEdGV4dBgBIAEoCUILukgIcgYogICAgARIABITCglyZWFzb25pbmcYAiABKA1IABITCgl0b29sX2NhbGwYAyABKA1IABIXCg1wcm92aWRlcl90b29sGAQgASgNSAASIwoFaW1hZ2UYBSABKAsyEi5sbG1yZWxheS52MS5JbWFnZUgAQg0KBHBhcnQSBbpIAggBIq0FCgVJbWFnZRLHAgoDdXJsGAEgASgJQrcCukgFcgMYgEC6SAVyA4gBAbpIhgG6AYIBCg9pbWFnZS51cmxfaHR0cHMSUm11c3QgYmUgYW4gaHR0cHM6Ly8gVVJMIChzZW5kIG90aGVyIGltYWdlcyBpbmxpbmUsIGluIGRhdGEsIHdpdGggdGhlaXIgbWVkaWFfdHlwZSkaG3RoaXMuc3RhcnRzV2l0aCgnaHR0cHM6Ly8nKbpImQG6AZUBCg5pbWFnZS51cmxfaG9zdBIjbXVzdCBuYW1lIGEgaG9zdDogaHR0cHM6Ly9ob3N0L3BhdGgaXiF0aGlzLnN0YXJ0c1dpdGgoJ2h0dHBzOi8vJykgfHwgdGhpcy5tYXRjaGVzKCdeaHR0cHM6Ly8oW14vPyNAXSpAKT9bXi8/I0A6XVteLz8jQF0qKFsvPyNdfCQpJylIABIcCgRkYXRhGAIgASgMQgy6SAl6BxABGICAgApIABJNCgptZWRpYV90eXBlGAMgASgJQjm6SAPYAQG6SDByLlIJaW1hZ2UvcG5nUgppbWFnZS9qcGVnUglpbWFnZS9naWZSCmltYWdlL3dlYnASMgoGZGV0YWlsGAQgASgOMhgubGxtcmVsYXkudjEuSW1hZ2VEZXRhaWxCCLpIBYIBAhABOqcBukijARqgAQoXaW1hZ2UuaW5saW5lX21lZGlhX3R5cGUSW2FuIGlubGluZSBpbWFnZSAoZGF0YSkgbmVlZHMgaXRzIG1lZGlhX3R5cGU6IGltYWdlL3BuZywgaW1hZ2UvanBlZywgaW1hZ2UvZ2lmIG9yIGltYWdlL3dlYnAaKCFoYXModGhpcy5kYXRhKSB8fCB0aGlzLm1lZGlhX3R5cGUgIT0gJydCDwoGc291cmNlEgW6SAIIASLJAQoRUHJvdmlkZXJUb29sQmxvY2sSGAoEa2luZBgBIAEoCUIKukgHcgUQARiAARIUCgJpZBgCIAEoCUIIukgFcgMYgAISFgoEbmFtZRgDIAEoCUIIukgFcgMYgAESGgoFaW5wdXQYBCABKAlCC7pICHIGKICAgIAEEhsKBnJlc3VsdBgFIAEoCUILukgIcgYogICAgAQSGgoFZXh0cmEYBiABKAlCC7pICHIGKICAgIAEEhcKBmZvcm1hdBgHIAEoCUIHukgEcgIYQCLoAQoJUmVhc29uaW5nEhkKBHRleHQYASABKAlCC7pICHIGKICAgIAEEh4KCXNpZ25hdHVyZRgCIAEoCUILukgIcgYogICAgAQSHQoIcmVkYWN0ZWQYAyABKAlCC7pICHIGKICAgIAEEjIKBmZvcm1hdBgEIAEoCUIiukgD2AEBukgZchcYQDITXlthLXpdW2EtejAtOS5fLV0qJBIUCgJpZBgFIAEoCUIIukgFcgMYgAISFQoEa2luZBgGIAEoCUIHukgEcgIYQBIgCg9wcm92aWRlcl9mb3JtYXQYByABKAlCB7pIBHICGEAieAoIVG9vbENhbGwSFAoCaWQYASABKAlCCLpIBXIDGIACEhYKBG5hbWUYAiABKAlCCLpIBXIDGIABEh4KCWFyZ3VtZW50cxgDIAEoCUILukgIcgYogICAgAQSHgoJc2lnbmF0dXJlGAQgASgJQgu6SAhyBiiAgICABCLgAQoQR2VuZXJhdGlvbkNvbmZpZxIrChFtYXhfb3V0cHV0X3Rva2VucxgBIAEoDUILukgIKgYYwIQ9KAFIAIgBARIpCgt0ZW1wZXJhdHVyZRgCIAEoAkIPukgMCgodAAAAQC0AAAAASAGIAQESIwoFdG9wX3AYAyABKAJCD7pIDAoKHQAAgD8tAAAAAEgCiAEBEh8KBHN0b3AYBCADKAlCEbpIDpIBCxAQIgdyBRABKIACQhQKEl9tYXhfb3V0cHV0X3Rva2Vuc0IOCgxfdGVtcGVyYXR1cmVCCAoGX3RvcF9wItcBCgRUb29sEoEBCgRuYW1lGAEgASgJQnO6SHC6AW0KCXRvb2wubmFtZRI5bXVzdCBiZSAxIHRvIDY0IGxldHRlcnMsIGRpZ2l0cywgXyBvciAtLCBsaWtlIGdldF93ZWF0aGVyGiV0aGlzLm1hdGNoZXMoJ15bQS1aYS16MC05Xy1dezEsNjR9JCcpEh4KC2Rlc2NyaXB0aW9uGAIgASgJQgm6SAZyBCiAgAESKwoKcGFyYW1ldGVycxgDIAEoCzIXLmdvb2dsZS5wcm90b2J1Zi5TdHJ1Y3QifQoKVG9vbENob2ljZRIzCgRtb2RlGAEgASgOMhsubGxtcmVsYXkudjEuVG9vbENob2ljZU1vZGVCCLpIBYIBAhABEhUKBG5hbWUYAiABKAlCB7pIBHICGEASIwobZGlzYWJsZV9wYXJhbGxlbF90b29sX2NhbGxzGAMgASgIIsMDCg5SZXNwb25zZUZvcm1hdBI0Cgtqc29uX3NjaGVtYRgBIAEoCzIXLmdvb2dsZS5wcm90b2J1Zi5TdHJ1Y3RCBrpIA8gBARKRAQoEbmFtZRgCIAEoCUKCAbpIf7oBfAoUcmVzcG9uc2VfZm9ybWF0Lm5hbWUSPW11c3QgYmUgdXAgdG8gNjQgbGV0dGVycywgZGlnaXRzLCBfIG9yIC0sIGxpa2Ugd2VhdGhlcl9yZXBvcnQaJXRoaXMubWF0Y2hlcygnXltBLVphLXowLTlfLV17MCw2NH0kJykSLAoWbWF4X3ZhbGlkYXRpb25fcmV0cmllcxgDIAEoDUIHukgEKgIYCkgAiAEBEjQKCm9uX2ludmFsaWQYBCABKA4yFi5sbG1yZWxheS52MS5PbkludmFsaWRCCLpIBYIBAhABEh4KFnN0cmVhbV9wYXJ0aWFsX29iamVjdHMYBSABKAgSSAoXcGFydGlhbF9vYmplY3RfaW50ZXJ2YWwYBiABKAsyGS5nb29nbGUucHJvdG9idWYuRHVyYXRpb25CDLpICaoBBiICCDwyAEIZChdfbWF4X3ZhbGlkYXRpb25fcmV0cmllcyLiAQoLUmV0cnlQb2xpY3kSHQoMbWF4X2F0dGVtcHRzGAEgASgNQge6SAQqAhgKEkAKD2luaXRpYWxfYmFja29mZhgCIAEoCzIZLmdvb2dsZS5wcm90b2J1Zi5EdXJhdGlvbkIMukgJqgEGIgIIPCoAEj0KC21heF9iYWNrb2ZmGAMgASgLMhkuZ29vZ2xlLnByb3RvYnVmLkR1cmF0aW9uQg26SAqqAQciAwisAioAEjMKCW1pZHN0cmVhbRgEIAEoDjIWLmxsbXJlbGF5LnYxLk1pZHN0cmVhbUIIukgFggECEAEiwwEKC0hlZGdlUG9saWN5Ej0KC2hlZGdlX2FmdGVyGAEgASgLMhkuZ29vZ2xlLnByb3RvYnVmLkR1cmF0aW9uQg26SAqqAQciAwisAioAEhAKCGFkYXB0aXZlGAIgASgIEiAKCm1heF9oZWRnZXMYAyABKA1CB7pIBCoCGAJIAIgBARIyCgZ0YXJnZXQYBCABKA4yGC5sbG1yZWxheS52MS5IZWRnZVRhcmdldEIIukgFggECEAFCDQoLX21heF9oZWRnZXMihAMKDUdlbmVyYXRlRXZlbnQSEAoIc2VxdWVuY2UYASABKAQSDwoHYXR0ZW1wdBgCIAEoDRIjCgVkZWx0YRgDIAEoCzISLmxsbXJlbGF5LnYxLkRlbHRhSAASLAoKd2lsbF9yZXRyeRgEIAEoCzIWLmxsbXJlbGF5LnYxLldpbGxSZXRyeUgAEiMKBWZpbmFsGAUgASgLMhIubGxtcmVsYXkudjEuRmluYWxIABIwCg5wYXJ0aWFsX29iamVjdBgGIAEoCzIWLmdvb2dsZS5wcm90b2J1Zi5WYWx1ZUgAEisKCWhlYXJ0YmVhdBgHIAEoCzIWLmxsbXJlbGF5LnYxLkhlYXJ0YmVhdEgAEjIKDXRvb2xfcHJvZ3Jlc3MYCSABKAsyGS5sbG1yZWxheS52MS5Ub29sUHJvZ3Jlc3NIABIuCgt0b29sX3Jlc3VsdBgKIAEoCzIXLmxsbXJlbGF5LnYxLlRvb2xSZXN1bHRIABIMCgR0dXJuGAggASgNQgcKBWV2ZW50InMKDFRvb2xQcm9ncmVzcxIUCgx0b29sX2NhbGxfaWQYASABKAkSEAoIcHJvZ3Jlc3MYAiABKAESEgoFdG90YWwYAyABKAFIAIgBARIPCgdtZXNzYWdlGAQgASgJEgwKBG5hbWUYBSABKAlCCAoGX3RvdGFsIrwBCgpUb29sUmVzdWx0EhQKDHRvb2xfY2FsbF9pZBgBIAEoCRIMCgRuYW1lGAIgASgJEg8KB2NvbnRlbnQYAyABKAkSEAoIaXNfZXJyb3IYBCABKAgSEQoJdHJ1bmNhdGVkGAUgASgIEhAKCGF0dGVtcHRzGAYgASgNEiwKBmltYWdlcxgHIAMoCzIcLmxsbXJlbGF5LnYxLlRvb2xSZXN1bHRJbWFnZRIUCgx1c2VyX2NvbnRlbnQYCCABKAkiQwoPVG9vbFJlc3VsdEltYWdlEg4KBm9mZnNldBgBIAEoDRISCgptZWRpYV90eXBlGAIgASgJEgwKBHNpemUYAyABKA0iCwoJSGVhcnRiZWF0IoUBCgVEZWx0YRIMCgR0ZXh0GAEgASgJEi0KCXRvb2xfY2FsbBgCIAEoCzIaLmxsbXJlbGF5LnYxLlRvb2xDYWxsRGVsdGESLgoJcmVhc29uaW5nGAMgASgLMhsubGxtcmVsYXkudjEuUmVhc29uaW5nRGVsdGESDwoHcmVmdXNhbBgEIAEoCSJiCg5SZWFzb25pbmdEZWx0YRINCgVpbmRleBgBIAEoDRIMCgR0ZXh0GAIgASgJEhEKCXNpZ25hdHVyZRgDIAEoCRIQCghyZWRhY3RlZBgEIAEoCRIOCgZmb3JtYXQYBSABKAkiZAoNVG9vbENhbGxEZWx0YRINCgVpbmRleBgBIAEoDRIKCgJpZBgCIAEoCRIMCgRuYW1lGAMgASgJEhcKD2FyZ3VtZW50c19kZWx0YRgEIAEoCRIRCglzaWduYXR1cmUYBSABKAki7gEKCVdpbGxSZXRyeRIoCgZyZWFzb24YASABKA4yGC5sbG1yZWxheS52MS5SZXRyeVJlYXNvbhIoCgVkZWxheRgCIAEoCzIZLmdvb2dsZS5wcm90b2J1Zi5EdXJhdGlvbhIUCgxuZXh0X2F0dGVtcHQYAyABKA0SFwoPZGlzY2FyZF9wYXJ0aWFsGAQgASgIEiEKBWNhdXNlGAUgASgLMhIuZ29vZ2xlLnJwYy5TdGF0dXMSFQoNbmV4dF9wcm92aWRlchgGIAEoCRISCgpuZXh0X21vZGVsGAcgASgJEhAKCGZhbGxiYWNrGAggASgIIpAECgVGaW5hbBIlCgdtZXNzYWdlGAEgASgLMhQubGxtcmVsYXkudjEuTWVzc2FnZRImCgZvYmplY3QYAiABKAsyFi5nb29nbGUucHJvdG9idWYuVmFsdWUSMAoNZmluaXNoX3JlYXNvbhgDIAEoDjIZLmxsbXJlbGF5LnYxLkZpbmlzaFJlYXNvbhIhCgV1c2FnZRgEIAEoCzISLmxsbXJlbGF5LnYxLlVzYWdlEhAKCGF0dGVtcHRzGAUgASgNEhoKEnZhbGlkYXRpb25fcmV0cmllcxgGIAEoDRI3ChF2YWxpZGF0aW9uX2Vycm9ycxgHIAMoCzIcLmxsbXJlbGF5LnYxLlZhbGlkYXRpb25FcnJvchIQCghwcm92aWRlchgIIAEoCRINCgVtb2RlbBgJIAEoCRIOCgZoZWRnZXMYCiABKA0SDQoFcm91dGUYDSABKAkSOAoLYW5ub3RhdGlvbnMYDiADKAsyIy5sbG1yZWxheS52MS5GaW5hbC5Bbm5vdGF0aW9uc0VudHJ5EigKCnRyYW5zY3JpcHQYFCADKAsyFC5sbG1yZWxheS52MS5NZXNzYWdlEg0KBXR1cm5zGBUgASgNEhUKDXN0b3Bfc2VxdWVuY2UYFiABKAkaMgoQQW5ub3RhdGlvbnNFbnRyeRILCgNrZXkYASABKAkSDQoFdmFsdWUYAiABKAk6AjgBIpABCgVVc2FnZRIUCgxpbnB1dF90b2tlbnMYASABKAQSFQoNb3V0cHV0X3Rva2VucxgCIAEoBBIYChByZWFzb25pbmdfdG9rZW5zGAMgASgEEhsKE2NhY2hlZF9pbnB1dF90b2tlbnMYBCABKAQSIwobY2FjaGVfY3JlYXRpb25faW5wdXRfdG9rZW5zGAUgASgEImgKD1ZhbGlkYXRpb25FcnJvchIPCgdhdHRlbXB0GAEgASgNEhkKEWluc3RhbmNlX2xvY2F0aW9uGAIgASgJEhgKEGtleXdvcmRfbG9jYXRpb24YAyABKAkSDwoHbWVzc2FnZRgEIAEoCSIuChFMaXN0TW9kZWxzUmVxdWVzdBIZCghwcm92aWRlchgBIAEoCUIHukgEcgIYPyJ0ChJMaXN0TW9kZWxzUmVzcG9uc2USIgoGbW9kZWxzGAEgAygLMhIubGxtcmVsYXkudjEuTW9kZWwSOgoTYW55X21vZGVsX3Byb3ZpZGVycxgCIAMoCzIdLmxsbXJlbGF5LnYxLkFueU1vZGVsUHJvdmlkZXIiUQoQQW55TW9kZWxQcm92aWRlchIQCghwcm92aWRlchgBIAEoCRIVCg1wcm92aWRlcl9raW5kGAIgASgJEhQKDGtleV9wYXR0ZXJucxgDIAMoCSLyAQoFTW9kZWwSCgoCaWQYASABKAkSEAoIcHJvdmlkZXIYAiABKAkSFQoNcHJvdmlkZXJfa2luZBgDIAEoCRIMCgRuYW1lGAQgASgJEiQKBGtpbmQYBSABKA4yFi5sbG1yZWxheS52MS5Nb2RlbEtpbmQSKQoHdGFyZ2V0cxgGIAMoCzIYLmxsbXJlbGF5LnYxLlJvdXRlVGFyZ2V0EioKB2JhbGFuY2UYByABKA4yGS5sbG1yZWxheS52MS5Sb3V0ZUJhbGFuY2USKQoGaGVhbHRoGAggASgLMhkubGxtcmVsYXkudjEuVGFyZ2V0SGVhbHRoIncKC1JvdXRlVGFyZ2V0Eg0KBW1vZGVsGAEgASgJEhAKCHByb3ZpZGVyGAIgASgJEgwKBG5hbWUYAyABKAkSDgoGd2VpZ2h0GAQgASgNEikKBmhlYWx0aBgFIAEoCzIZLmxsbXJlbGF5LnYxLlRhcmdldEhlYWx0aCKDAQoMVGFyZ2V0SGVhbHRoEg8KB2VqZWN0ZWQYASABKAgSMQoNZWplY3RlZF91bnRpbBgCIAEoCzIaLmdvb2dsZS5wcm90b2J1Zi5UaW1lc3RhbXASHAoUY29uc2VjdXRpdmVfZmFpbHVyZXMYAyABKA0SEQoJZWplY3Rpb25zGAQgASgNIisKEExpc3RUb29sc1JlcXVlc3QSFwoGc2VydmVyGAEgASgJQge6SARyAhg/ImUKEUxpc3RUb29sc1Jlc3BvbnNlEiYKBXRvb2xzGAEgAygLMhcubGxtcmVsYXkudjEuU2VydmVyVG9vbBIoCgdzZXJ2ZXJzGAIgAygLMhcubGxtcmVsYXkudjEuVG9vbFNlcnZlciK4AQoKU2VydmVyVG9vbBIMCgRuYW1lGAEgASgJEg4KBnNlcnZlchgCIAEoCRISCgptb2RlbF9uYW1lGAMgASgJEg0KBXRpdGxlGAQgASgJEhMKC2Rlc2NyaXB0aW9uGAUgASgJEi0KDGlucHV0X3NjaGVtYRgGIAEoCzIXLmdvb2dsZS5wcm90b2J1Zi5TdHJ1Y3QSEQoJYXZhaWxhYmxlGAcgASgIEhIKCmlkZW1wb3RlbnQYCCABKAgiawoKVG9vbFNlcnZlchIMCgRuYW1lGAEgASgJEhEKCWF2YWlsYWJsZRgCIAEoCBItCglsaXN0ZWRfYXQYAyABKAsyGi5nb29nbGUucHJvdG9idWYuVGltZXN0YW1wEg0KBXRvb2xzGAQgASgNIt0GCgxFbWJlZFJlcXVlc3QSkwQKBW1vZGVsGAEgASgJQoMEukgDyAEBukgFcgMYgAK6SLgCugG0AgoMbW9kZWwuZm9ybWF0EtUBbXVzdCBiZSBhIHJvdXRlIG5hbWUgbGlrZSBzZWFyY2gsIG9yIDxwcm92aWRlcj4vPG1vZGVsPiBsaWtlIG9wZW5haS90ZXh0LWVtYmVkZGluZy0zLXNtYWxsOiBhIGxvd2VyLWNhc2UgbmFtZSwgYW5kIGZvciBhIHByb3ZpZGVyJ3MgbW9kZWwgYSBzbGFzaCwgdGhlbiB0aGUgcHJvdmlkZXIncyBtb2RlbCBuYW1lIChsZXR0ZXJzLCBkaWdpdHMgYW5kIC4gXyA6IC8gQCArIC0pGkx0aGlzLm1hdGNoZXMoJ15bYS16MC05XVthLXowLTlfLV17MCw2Mn0oL1tBLVphLXowLTldW0EtWmEtejAtOS5fOi9AKy1dKik/JCcpuki1AboBsQEKE21vZGVsLnBhdGhfc2VnbWVudHMSTnRoZSBtb2RlbCBuYW1lIG11c3Qgbm90IGhhdmUgYW4gZW1wdHksICIuIiBvciAiLi4iIHNlZ21lbnQgYmV0d2VlbiBpdHMgc2xhc2hlcxpKdGhpcyA9PSAnJyB8fCAhdGhpcy5zcGxpdCgnLycpLmV4aXN0cyhzLCBzID09ICcnIHx8IHMgPT0gJy4nIHx8IHMgPT0gJy4uJykSJQoGaW5wdXRzGAIgAygJQhW6SBKSAQ8IARCAECIIcgYQASiAgAQSJAoKZGltZW5zaW9ucxgDIAEoDUILukgIKgYYgIAEKAFIAIgBARIiCgpyZXF1ZXN0X2lkGAQgASgJQg66SAPYAQG6SAVyA7ABARJTCghtZXRhZGF0YRgFIAMoCzInLmxsbXJlbGF5LnYxLkVtYmVkUmVxdWVzdC5NZXRhZGF0YUVudHJ5Qhi6SBWaARIQQCIHcgUQASiAASoFcgMogAgSMQoQcHJvdmlkZXJfb3B0aW9ucxgGIAEoCzIXLmdvb2dsZS5wcm90b2J1Zi5TdHJ1Y3QaLwoNTWV0YWRhdGFFbnRyeRILCgNrZXkYASABKAkSDQoFdmFsdWUYAiABKAk6AjgBQg0KC19kaW1lbnNpb25zIqABCg1FbWJlZFJlc3BvbnNlEioKCmVtYmVkZGluZ3MYASADKAsyFi5sbG1yZWxheS52MS5FbWJlZGRpbmcSEAoIcHJvdmlkZXIYAiABKAkSDQoFbW9kZWwYAyABKAkSDQoFcm91dGUYBCABKAkSIQoFdXNhZ2UYBSABKAsyEi5sbG1yZWxheS52MS5Vc2FnZRIQCghhdHRlbXB0cxgGIAEoDSIbCglFbWJlZGRpbmcSDgoGdmFsdWVzGAEgAygCKmgKDU9uT3V0cHV0TGltaXQSHwobT05fT1VUUFVUX0xJTUlUX1VOU1BFQ0lGSUVEEAASGAoUT05fT1VUUFVUX0xJTUlUX0ZBSUwQARIcChhPTl9PVVRQVVRfTElNSVRfVFJVTkNBVEUQAiqKAQoLSW1hZ2VEZXRhaWwSHAoYSU1BR0VfREVUQUlMX1VOU1BFQ0lGSUVEEAASFAoQSU1BR0VfREVUQUlMX0xPVxABEhUKEUlNQUdFX0RFVEFJTF9ISUdIEAISFQoRSU1BR0VfREVUQUlMX0FVVE8QAxIZChVJTUFHRV9ERVRBSUxfT1JJR0lOQUwQBCpfCgRSb2xlEhQKEFJPTEVfVU5TUEVDSUZJRUQQABIPCgtST0xFX1NZU1RFTRABEg0KCVJPTEVfVVNFUhACEhIKDlJPTEVfQVNTSVNUQU5UEAMSDQoJUk9MRV9UT09MEAQqogEKDlRvb2xDaG9pY2VNb2RlEiAKHFRPT0xfQ0hPSUNFX01PREVfVU5TUEVDSUZJRUQQABIZChVUT09MX0NIT0lDRV9NT0RFX0FVVE8QARIZChVUT09MX0NIT0lDRV9NT0RFX05PTkUQAhIdChlUT09MX0NIT0lDRV9NT0RFX1JFUVVJUkVEEAMSGQoVVE9PTF9DSE9JQ0VfTU9ERV9UT09MEAQqWAoJT25JbnZhbGlkEhoKFk9OX0lOVkFMSURfVU5TUEVDSUZJRUQQABITCg9PTl9JTlZBTElEX0ZBSUwQARIaChZPTl9JTlZBTElEX1JFVFVSTl9URVhUEAIqUQoJTWlkc3RyZWFtEhkKFU1JRFNUUkVBTV9VTlNQRUNJRklFRBAAEhUKEU1JRFNUUkVBTV9SRVNUQVJUEAESEgoOTUlEU1RSRUFNX0ZBSUwQAipZCgtIZWRnZVRhcmdldBIcChhIRURHRV9UQVJHRVRfVU5TUEVDSUZJRUQQABIVChFIRURHRV9UQVJHRVRfU0FNRRABEhUKEUhFREdFX1RBUkdFVF9ORVhUEAIq/gEKC1JldHJ5UmVhc29uEhwKGFJFVFJZX1JFQVNPTl9VTlNQRUNJRklFRBAAEh0KGVJFVFJZX1JFQVNPTl9SQVRFX0xJTUlURUQQARIbChdSRVRSWV9SRUFTT05fT1ZFUkxPQURFRBACEh0KGVJFVFJZX1JFQVNPTl9TRVJWRVJfRVJST1IQAxIaChZSRVRSWV9SRUFTT05fVFJBTlNQT1JUEAQSGAoUUkVUUllfUkVBU09OX1NUQUxMRUQQBRIfChtSRVRSWV9SRUFTT05fSU5WQUxJRF9PVVRQVVQQBhIfChtSRVRSWV9SRUFTT05fVEFSR0VUX1JFRlVTRUQQCSqPAgoMRmluaXNoUmVhc29uEh0KGUZJTklTSF9SRUFTT05fVU5TUEVDSUZJRUQQABIWChJGSU5JU0hfUkVBU09OX1NUT1AQARIYChRGSU5JU0hfUkVBU09OX0xFTkdUSBACEhwKGEZJTklTSF9SRUFTT05fVE9PTF9DQUxMUxADEiAKHEZJTklTSF9SRUFTT05fQ09OVEVOVF9GSUxURVIQBBIXChNGSU5JU0hfUkVBU09OX09USEVSEAUSGQoVRklOSVNIX1JFQVNPTl9SRUZVU0FMEAYSGAoURklOSVNIX1JFQVNPTl9QQVVTRUQQBxIgChxGSU5JU0hfUkVBU09OX01BWF9UT09MX1RVUk5TEAgqXAoJTW9kZWxLaW5kEhoKFk1PREVMX0tJTkRfVU5TUEVDSUZJRUQQABIdChlNT0RFTF9LSU5EX1BST1ZJREVSX01PREVMEAESFAoQTU9ERUxfS0lORF9ST1VURRACKmQKDFJvdXRlQmFsYW5jZRIdChlST1VURV9CQUxBTkNFX1VOU1BFQ0lGSUVEEAASGQoVUk9VVEVfQkFMQU5DRV9PUkRFUkVEEAESGgoWUk9VVEVfQkFMQU5DRV9XRUlHSFRFRBACMvMCCgpMTE1TZXJ2aWNlEkYKCEdlbmVyYXRlEhwubGxtcmVsYXkudjEuR2VuZXJhdGVSZXF1ZXN0GhoubGxtcmVsYXkudjEuR2VuZXJhdGVFdmVudDABEk0KCkxpc3RNb2RlbHMSHi5sbG1yZWxheS52MS5MaXN0TW9kZWxzUmVxdWVzdBofLmxsbXJlbGF5LnYxLkxpc3RNb2RlbHNSZXNwb25zZRJCCgZSZXN1bWUSGi5sbG1yZWxheS52MS5SZXN1bWVSZXF1ZXN0GhoubGxtcmVsYXkudjEuR2VuZXJhdGVFdmVudDABEkoKCUxpc3RUb29scxIdLmxsbXJlbGF5LnYxLkxpc3RUb29sc1JlcXVlc3QaHi5sbG1yZWxheS52MS5MaXN0VG9vbHNSZXNwb25zZRI+CgVFbWJlZBIZLmxsbXJlbGF5LnYxLkVtYmVkUmVxdWVzdBoaLmxsbXJlbGF5LnYxLkVtYmVkUmVzcG9uc2VCQFo+Z2l0aHViLmNvbS9sbG1yZWxheS9sbG1yZWxheS9jbGllbnQvZ2VuL2xsbXJlbGF5L3YxO2xsbXJlbGF5djFiBnByb3RvMw", [file_buf_validate_validate, file_google_protobuf_duration, file_google_protobuf_struct, file_google_protobuf_timestamp, file_google_rpc_status]);

/**
 * ResumeRequest picks up a resumable call where the client left it.
 *
 * @generated from message llmrelay.v1.ResumeRequest
 */
export type ResumeRequest = Message$1<"llmrelay.v1.ResumeRequest"> & {
  /**
   * The call's `request_id`: the one the client set on its
   * GenerateRequest, or the one the server made up and sent in the
   * `llmrelay-request-id` response header. Required, a UUID, in any case
   * (the call is found by its lower-case form).
   *
   * @generated from field: string request_id = 1;
   */
  requestId: string;

  /**
   * The `sequence` of the last event the client received: Resume sends the
   * events after it. 0 replays the call from its first event.
   *
   * @generated from field: uint64 after_sequence = 2;
   */
  afterSequence: bigint;
};

/**
 * Describes the message llmrelay.v1.ResumeRequest.
 * Use `create(ResumeRequestSchema)` to create a new message.
 */
export const ResumeRequestSchema: GenMessage<ResumeRequest> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 0);

/**
 * GenerateRequest asks for one model reply.
 *
 * @generated from message llmrelay.v1.GenerateRequest
 */
export type GenerateRequest = Message$1<"llmrelay.v1.GenerateRequest"> & {
  /**
   * The model: a route's name, or "<provider>/<model>".
   *
   * A route is a name the server's config defines (see docs/routes.md),
   * such as "smart": it stands for one or more targets, each a provider
   * and model, tried in order when one fails (fallback) or picked by
   * weight and health (balancing), and it may set defaults for the
   * request's unset fields (retry policy, generation settings, a system
   * prompt, a response format) and bound the call's time. A route name has
   * no "/". `ListModels` lists the routes a key may use, with their targets.
   *
   * With "<provider>/<model>", the provider is the configured provider name
   * before the first "/", the rest is passed to that provider as its model
   * name (it may itself contain "/" or ":", as in
   * "openrouter/meta-llama/llama-3-70b" or "ollama/llama3.1:8b").
   * The built-in provider is "mock" with models "echo", "lorem" and "think".
   *
   * Required, at most 256 characters. A route or provider name is 1 to 63
   * lower-case letters, digits, "_" or "-", starting with a letter or
   * digit; the model name starts with a letter or digit and may contain
   * letters, digits and . _ : / @ + -. A model that does not fit gets one
   * violation that says so in words, not the pattern. Split at "/", the
   * model name has no empty, "." or ".." segment ("g/a//b", "g/a/../b" are
   * refused): adapters that put the model into a URL path (Gemini) must not
   * be steered to another path.
   *
   * @generated from field: string model = 1;
   */
  model: string;

  /**
   * The conversation so far, oldest first. At least one message, at most
   * 2048: room for a reply of the most tool calls `final.message` may
   * hold (1024) and a result for each, after the conversation before it.
   *
   * @generated from field: repeated llmrelay.v1.Message messages = 2;
   */
  messages: Message[];

  /**
   * Sampling and length settings. Unset fields use the provider's defaults.
   *
   * @generated from field: llmrelay.v1.GenerationConfig generation = 3;
   */
  generation?: GenerationConfig | undefined;

  /**
   * Tools (functions) the model may call. Not offered when `response_format`
   * is set: a structured-output call always ends with the object.
   *
   * @generated from field: repeated llmrelay.v1.Tool tools = 4;
   */
  tools: Tool[];

  /**
   * Whether and which tool the model must call. Unset means TOOL_CHOICE_MODE_AUTO.
   *
   * @generated from field: llmrelay.v1.ToolChoice tool_choice = 5;
   */
  toolChoice?: ToolChoice | undefined;

  /**
   * Ask for structured output: a JSON object that conforms to a JSON Schema.
   * When set, `final.object` holds the validated object.
   *
   * @generated from field: llmrelay.v1.ResponseFormat response_format = 6;
   */
  responseFormat?: ResponseFormat | undefined;

  /**
   * How llmrelay retries failed attempts. Unset fields take the route's
   * defaults (`defaults.retry`), then the server's (`retry`); a value above
   * the server's limit is lowered to it (each field says which).
   *
   * @generated from field: llmrelay.v1.RetryPolicy retry = 7;
   */
  retry?: RetryPolicy | undefined;

  /**
   * Once an attempt's stream has started (the provider sent its first
   * byte, see `first_event_timeout`), an attempt whose provider shows no
   * sign of life for this long is abandoned as STALLED and retried like any
   * transient failure (RETRY_REASON_STALLED).
   *
   * What counts as a sign of life is any byte from the provider, not only
   * what becomes an event for you: keep-alive comments (`: keep-alive`),
   * Anthropic's `ping`, reasoning ("thinking") that is streamed, usage-only
   * chunks, server-tool blocks. So a provider that is visibly working is
   * never declared stalled, even when it sends you nothing for a while. The
   * time llmrelay spends handing an event to a slow client does not count.
   *
   * Unset takes the server default (`deadlines.stream_idle`, 30s unless
   * configured); longer values are lowered to the server maximum
   * (`deadlines.max_stream_idle`, 5m unless configured); values below the
   * server's floor (100ms unless the operator changed
   * deadlines.min_stream_timeout) are refused with INVALID_ARGUMENT naming
   * this field. At most 1h (INVALID_ARGUMENT past it).
   *
   * @generated from field: google.protobuf.Duration stream_idle_timeout = 8;
   */
  streamIdleTimeout?: Duration | undefined;

  /**
   * A client-chosen UUID that identifies this call in llmrelay's logs and
   * errors. When empty, llmrelay makes one up.
   *
   * A UUID's case carries no meaning (RFC 9562): llmrelay knows the call
   * by the id in lower case, the form its logs, errors (ErrorInfo
   * `request_id`), the `llmrelay-request-id` header and trailer, and
   * Resume use. An id in upper or mixed case names the same call as its
   * lower-case form: a Generate repeating it in another case attaches to
   * the resumable call, and Resume finds it in either case.
   *
   * @generated from field: string request_id = 9;
   */
  requestId: string;

  /**
   * Options for the provider, checked before the first attempt.
   *
   * For the openai, anthropic and gemini providers, each top-level key is
   * merged into the body of the request llmrelay sends the provider (an
   * object value is merged key by key with an object llmrelay sets, as
   * Gemini's `generationConfig`), so the provider's own parameters are
   * usable as the provider documents them, for example:
   *
   *   openai:    {"reasoning_effort": "high", "seed": 7}
   *   anthropic: {"thinking": {"type": "enabled", "budget_tokens": 2048}, "top_k": 5}
   *   gemini:    {"generationConfig": {"topK": 40, "thinkingConfig": {"includeThoughts": true}},
   *               "safetySettings": [...]}
   *
   * `extra_headers` (an object of header names to string values) adds HTTP
   * headers to the provider request instead (e.g. "anthropic-beta");
   * credentials, the headers that choose the account billed
   * (OpenAI-Organization, OpenAI-Project, X-Goog-User-Project: the
   * operator's, set in the provider's configuration), Host and the body's
   * framing headers cannot be set, and neither can a header the server's
   * operator configured for the provider (its `headers`, such as a
   * gateway's credential): a request never replaces one, and naming one (in
   * any case) is refused like the keys below, e.g.
   * `provider_options.extra_headers.OpenAI-Project`.
   *
   * A key llmrelay sets itself from this request (model, messages/contents,
   * system, stream, tools, tool_choice, the response format, and any field
   * the request's `generation` or other fields set) is refused with
   * INVALID_ARGUMENT, reason INVALID_PROVIDER_OPTIONS, naming the key (e.g.
   * `provider_options.model`): use the request's own field. A NaN or
   * infinite number, which JSON cannot carry, is refused too. Nothing is
   * ignored silently.
   *
   * The server's operator may allow only some keys, or forbid some, per
   * provider: the options reach the provider with the operator's
   * credentials, and some (Anthropic's `mcp_servers`, `container`, a
   * costlier `service_tier`) are the operator's to decide. A key the
   * policy of any provider the call may reach (every target of a route)
   * refuses fails the call before any attempt with PERMISSION_DENIED,
   * reason PROVIDER_OPTION_NOT_ALLOWED, metadata `option` (the key) and
   * `provider` (the provider whose policy refuses it), and a BadRequest on
   * `provider_options.<key>`. The same holds for the betas of an
   * `extra_headers` "anthropic-beta" (in any case) with an anthropic
   * provider whose configuration lists the betas clients may turn on
   * (`options.client_betas`): a beta it does not list is refused, metadata
   * `option` "extra_headers" and `beta` (its name), the BadRequest on
   * `provider_options.extra_headers.<header>`.
   *
   * The mock provider reads:
   *
   *   words:          (mock/lorem) how many words to reply with, default 32
   *   chunk_delay_ms: pause before each delta
   *   faults:         a list with one object per attempt; attempts past the end
   *                   of the list behave normally:
   *     {}                                    a normal attempt
   *     {"status": 503}                       fail before streaming with that HTTP status
   *     {"status": 429, "retry_after_ms": 700} ... and that retry hint
   *     {"drop_after": 2}                     2 deltas, then the connection drops
   *     {"error_after": 2}                    2 deltas, then an in-stream "overloaded" error
   *     {"stall_after": 2}                    2 deltas, then silence
   *     {"first_delay_ms": 2000}              hold the first event back 2s (a slow
   *                                           first token: see `hedging`)
   *     {"malformed_after": 2}                2 deltas, then an event that does not
   *                                           decode (PROVIDER_PROTOCOL_ERROR, not retried)
   *     {"output": "text"}                    reply with this text instead
   *     {"tool_calls": [{"id": "call_1", "name": "f", "arguments": "{}"}]}
   *                                           after the text, stream these tool calls
   *     {"usage": {"input_tokens": 12, "output_tokens": 9}}
   *                                           report these token counts
   *     {"reasoning": "text"}                 stream this reasoning before the
   *                                           text (mock/think always reasons)
   *     {"refusal": "text"}                   stream this refusal, then finish with
   *                                           FINISH_REASON_REFUSAL
   *
   * @generated from field: google.protobuf.Struct provider_options = 10;
   */
  providerOptions?: JsonObject | undefined;

  /**
   * Where the call goes when `model` fails in a way another model may not
   * (rate limited, quota spent, overloaded, failing, unreachable, stalled,
   * model unknown at the provider, llmrelay's credentials refused; never
   * for a request the provider rejects as invalid): each entry a route's
   * name or "<provider>/<model>", tried in order after the targets of
   * `model`. A route entry adds its targets, in the order the route would
   * try them; its defaults do not apply. A target already listed is not
   * tried twice. Each entry must be a model the caller's key may use.
   *
   * A move to another target is announced by a `will_retry` whose
   * `next_provider` and `next_model` name it (with `fallback` set);
   * `final` names the provider and model that answered. On each target the
   * retry policy applies afresh; the call's deadline covers every target.
   * At most 8 entries, each following the rules of `model` (no empty, "."
   * or ".." segment in a model name).
   *
   * @generated from field: repeated string fallback_models = 15;
   */
  fallbackModels: string[];

  /**
   * Free-form labels (a team, a ticket, a feature flag), written to the
   * call's "finished call" log line as metadata.<key>=<value>, values cut at
   * 256 bytes there. Not sent to the provider. Keep secrets out of them. At
   * most 64 entries, keys up to 128 bytes, values up to 1024 bytes.
   *
   * @generated from field: map<string, string> metadata = 11;
   */
  metadata: { [key: string]: string };

  /**
   * How long an attempt may wait for the provider's first byte (the
   * response headers, then the first byte of the stream) before it is
   * abandoned as STALLED and retried (RETRY_REASON_STALLED). Reasoning
   * models may think for minutes before they send anything, so this is
   * generous; once the first byte arrived, `stream_idle_timeout` takes over.
   *
   * Unset takes the provider's default (server config
   * `providers[].first_event_timeout`, else `deadlines.first_event`,
   * 120s); longer values are lowered to the server maximum
   * (`deadlines.max_first_event`, 10m unless configured); values below
   * the server's floor (100ms unless the operator changed
   * deadlines.min_stream_timeout) are refused with INVALID_ARGUMENT naming
   * this field. At most 1h (INVALID_ARGUMENT past it). The call's deadline
   * bounds it like everything else.
   *
   * @generated from field: google.protobuf.Duration first_event_timeout = 12;
   */
  firstEventTimeout?: Duration | undefined;

  /**
   * How much output the reply may have, and what happens past it. Unset
   * takes the server's default limit (2 MiB unless configured) and fails
   * the call past it. See OutputLimit.
   *
   * @generated from field: llmrelay.v1.OutputLimit output_limit = 13;
   */
  outputLimit?: OutputLimit | undefined;

  /**
   * Send a `heartbeat` event whenever the call has sent nothing else for
   * this long, and send the response headers at once, for clients behind
   * proxies or load balancers that cut streams silent for longer than
   * their idle (read) timeout: pick an interval well below the shortest
   * such timeout on the path. Silences happen before the first event,
   * during retry waits (up to a minute) and while a model thinks.
   *
   * The trade-off: response headers commit the call, so a client library
   * can no longer retry it transparently when it fails before its first
   * event (gRPC retries a call only until it has received headers or a
   * message); llmrelay's own retries, announced by `will_retry`, still
   * happen. Unset takes the server's default (`heartbeat.interval`, off
   * unless configured); a request cannot turn off a server default.
   * Values below the server's `heartbeat.min_interval` (1s unless
   * configured) fail with INVALID_ARGUMENT.
   *
   * @generated from field: google.protobuf.Duration heartbeat_interval = 14;
   */
  heartbeatInterval?: Duration | undefined;

  /**
   * Make the call resumable: it survives its stream. When the client's
   * stream goes away (a dropped connection, a proxy or sidecar restart, a
   * cancel), the call keeps running on the server, up to its deadline, and
   * its events are kept, so the client can pick it up with `Resume` from
   * the last event it received, on a new connection; the upstream request
   * is never sent twice. The client packages (client/ for Go, the
   * TypeScript and Python helpers in examples/) do it by themselves on
   * UNAVAILABLE or a dropped connection. Unset takes the route's default
   * (`defaults.resumable`; off otherwise); false turns a route's default
   * off. See docs/resume.md.
   *
   * The call is kept waiting for a reader for the server's `resume.grace`
   * (60s unless configured) after its stream goes away: when nobody
   * resumes it by then, it is cancelled, its upstream request closed. Its
   * events stay resumable for `resume.grace` after it ends. A server that
   * drains runs it on for its `shutdown_grace`; a call the server loses
   * (still running at the end of a drain, or on a replica that crashed)
   * ends ABORTED, reason RESUMABLE_CALL_LOST, and may be sent again with
   * the same request_id (see `Resume`). Meanwhile it
   * holds its API key's stream slot (`max_concurrent_streams`) and its
   * provider's `max_concurrent` slot, and it is billed like any call:
   * it runs to its end when nobody reads it.
   *
   * The call's id is its `request_id`: set one (the client packages do),
   * or read the one the server made up from the `llmrelay-request-id`
   * response header; `llmrelay-resumable: true` in the response headers
   * says the call is resumable (also when a route made it so). Resuming
   * is idempotent: a Generate with the `request_id` of a resumable call
   * still kept, from the same API key and with the same request, starts
   * nothing new and streams that call from its first event (as `Resume`
   * with `after_sequence` 0), so a gRPC library's own retry of the call
   * never runs it twice. The same `request_id` with another request, or
   * from another key, fails with ALREADY_EXISTS, reason REQUEST_ID_IN_USE;
   * a kept call that failed, or was lost (RESUMABLE_CALL_LOST), is
   * replaced by the new one.
   *
   * The events kept are bounded: per call (`resume.max_call_bytes`, 8 MiB
   * unless configured) and for all the calls of a replica
   * (`resume.max_buffered_bytes`, 256 MiB, which also counts each call's
   * own cost, so that it bounds the memory kept calls take; a replica at
   * that bound runs a new call as an ordinary one, without the
   * `llmrelay-resumable` header). A call past either bound stops
   * being resumable: it runs on for the client still reading it, but is
   * cancelled as soon as no client reads it, and `Resume` then sends the
   * events kept and fails with RESOURCE_EXHAUSTED, reason
   * RESUME_BUFFER_FULL. Heartbeats are events like the others: numbered,
   * kept and replayed, so a resumed stream has no gap in its sequence.
   *
   * @generated from field: optional bool resumable = 16;
   */
  resumable?: boolean | undefined;

  /**
   * Hedge a slow start: when the attempt in progress has shown nothing for
   * `hedging.hedge_after`, llmrelay starts another attempt beside it, and
   * the first of them to show something is the one you see. Cuts the long
   * tail of time to first token, at the price of extra provider requests.
   * See HedgePolicy. Unset: the route's default (`defaults.hedging`), if
   * any; otherwise no hedging. Off by default.
   *
   * @generated from field: llmrelay.v1.HedgePolicy hedging = 17;
   */
  hedging?: HedgePolicy | undefined;

  /**
   * Server tools: tools that llmrelay itself runs for this call, on the
   * MCP servers of its config (`tools.mcp_servers`), offered to the model
   * beside the request's own `tools` (which stay the client's to run).
   * Each entry is a tool's name, "<server>/<tool>" (for example
   * "everything/echo"), or a pattern on those names: "*" matches any run
   * of characters within a "/"-separated segment, "**" any run, "?" one
   * character ("everything/*" offers every tool of the server everything
   * that the key may use). `ListTools` lists the tools a key may use.
   * Unset takes the route's default (`defaults.server_tools`), if any.
   *
   * Checked before the first attempt, against the API key's `tools`
   * patterns and the server's config:
   *   - a name (no pattern characters) the key may not use fails the call
   *     with PERMISSION_DENIED, reason SERVER_TOOL_NOT_PERMITTED (metadata
   *     `tool`), before any upstream request;
   *   - a name no configured MCP server offers fails with
   *     INVALID_ARGUMENT, reason UNKNOWN_SERVER_TOOL;
   *   - a name whose MCP server is not answering fails with UNAVAILABLE,
   *     reason SERVER_TOOL_UNAVAILABLE, with a RetryInfo;
   *   - a pattern offers the tools it matches that the key may use and
   *     whose servers answer; one that matches none fails as above.
   * The check is made again before every later turn, against the
   * configuration and keys then current (a reload, or the admin API for a
   * stored key, may have changed the key's patterns; a reload, the
   * servers): an entry, name or pattern, that named or matched a tool in
   * the turn before that the key may no longer use ends the call with
   * PERMISSION_DENIED, reason SERVER_TOOL_NOT_PERMITTED; one whose tools of
   * the turn before a reload removed (their MCP server or the tools
   * themselves), leaving it none, ends it with FAILED_PRECONDITION, reason
   * SERVER_TOOL_REMOVED; otherwise a pattern offers what it matches then.
   *
   * The model sees each server tool under a name its provider accepts:
   * "<server>__<tool>", with any character other than letters, digits,
   * "_" and "-" replaced by "_" (and shortened, with a hash, past 64
   * characters); `ListTools` gives it as `ServerTool.model_name`. That is
   * the name the model's tool calls carry (`ToolCallDelta.name`,
   * `ToolCall.name`); `ToolResult.name` and `Message.server_tool` give the
   * server tool's own name. A request tool (`tools`) with the same name as
   * an offered server tool fails with INVALID_ARGUMENT.
   *
   * With server tools the call becomes a loop of turns: when a turn of the
   * model ends with calls to server tools, llmrelay runs them (in
   * parallel, up to each MCP server's `max_concurrency`), streams their
   * progress (`tool_progress`) and results (`tool_result`), appends the
   * assistant message and the results to the conversation and starts the
   * next turn; until the model answers without calling a server tool, or
   * `max_tool_turns` is reached. Every event carries its `turn`. Each
   * turn's attempts are planned afresh under the call's `retry` and
   * `hedging`: `retry.max_attempts` and `hedging.max_hedges` bound each
   * turn, and attempt numbers run on across turns. The
   * `final` carries the last turn's message, the whole `transcript` of the
   * call, the usage summed over every turn and the number of `turns`.
   * When the model also calls a request tool (one of `tools`), llmrelay
   * runs that turn's server tools, then ends the call with
   * FINISH_REASON_TOOL_CALLS, the client's tool calls left to the client.
   * Not allowed with `response_format` (INVALID_ARGUMENT). See
   * docs/tools.md.
   *
   * @generated from field: repeated string server_tools = 20;
   */
  serverTools: string[];

  /**
   * The most turns that may run server tools in this call: the model
   * turn after the last of them that asks for server tools again ends the
   * call with FINISH_REASON_MAX_TOOL_TURNS, without running them (its
   * `final` carries that turn's message, its tool calls unrun, and the
   * transcript so far). So a call makes at most max_tool_turns + 1 model
   * turns. Unset takes the server's default (`tools.max_tool_turns`, 8
   * unless configured); larger values are lowered to the server's limit
   * (`tools.max_tool_turns_limit`, 32 unless configured). Only used with
   * `server_tools`.
   *
   * @generated from field: optional uint32 max_tool_turns = 21;
   */
  maxToolTurns?: number | undefined;
};

/**
 * Describes the message llmrelay.v1.GenerateRequest.
 * Use `create(GenerateRequestSchema)` to create a new message.
 */
export const GenerateRequestSchema: GenMessage<GenerateRequest> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 1);

/**
 * OutputLimit bounds the size of a reply. Output is counted per attempt, in
 * UTF-8 bytes, as it streams: every byte of the reply the client receives
 * from the provider, whatever the event: the text, a refusal, the tool
 * calls (ids, names, arguments, signatures) and, where the provider
 * streams it, the model's reasoning (text, format, signatures, redacted
 * blocks). `final` repeats the reply, so the limit also keeps `final`
 * within a client's message size limit (4 MiB by default in gRPC
 * libraries) when the server's limit is below it, as by default; but a
 * `final.message` with `parts` (its blocks in another order than the
 * usual one) carries its text twice, in `content` and in the text parts,
 * so its size may be twice the limit. It goes back as the next request's
 * assistant message, which the server's request bound
 * (`limits.max_request_bytes`) must then take.
 *
 * When an attempt's output reaches the limit, llmrelay stops it at the
 * provider at once (the provider's stream is cancelled, so generation, and
 * its cost, stops there) and ends the call as `on_limit` says. Neither
 * outcome is retried: the reply would be as long the next time.
 *
 * With `server_tools` the limit bounds the whole call, so that its `final`
 * stays within it: the `final` carries every turn's reply and every server
 * tool's result (`transcript`) and the last turn's reply again (`message`).
 * Each turn's reply may be half of what the turns before it left (any
 * turn may be the last), and the turn's tool results may add what its
 * reply left of that, counted as they return: the result that passes it
 * is cut there (`tool_result.truncated`), and once the turn's tools have
 * returned the call ends as `on_limit` says (OUTPUT_TOO_LARGE, its
 * metadata naming the `turn`; or a `final` with FINISH_REASON_LENGTH and
 * the transcript so far). A reply cut at its turn's share ends the call
 * the same way, its tool calls not run.
 *
 * @generated from message llmrelay.v1.OutputLimit
 */
export type OutputLimit = Message$1<"llmrelay.v1.OutputLimit"> & {
  /**
   * The most bytes of output a reply may have. 0 takes the server's
   * default (`limits.default_max_output_bytes`); larger values are lowered
   * to the server's limit (`limits.max_output_bytes`, 3 MiB unless
   * configured): a request may ask for less, never for more.
   *
   * @generated from field: uint64 max_bytes = 1;
   */
  maxBytes: bigint;

  /**
   * What happens when the reply reaches `max_bytes`.
   *
   * @generated from field: llmrelay.v1.OnOutputLimit on_limit = 2;
   */
  onLimit: OnOutputLimit;
};

/**
 * Describes the message llmrelay.v1.OutputLimit.
 * Use `create(OutputLimitSchema)` to create a new message.
 */
export const OutputLimitSchema: GenMessage<OutputLimit> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 2);

/**
 * Message is one turn of the conversation.
 *
 * @generated from message llmrelay.v1.Message
 */
export type Message = Message$1<"llmrelay.v1.Message"> & {
  /**
   * Who wrote it: one of the roles below, never ROLE_UNSPECIFIED.
   *
   * @generated from field: llmrelay.v1.Role role = 1;
   */
  role: Role;

  /**
   * The text of the message. For ROLE_TOOL, the tool's result. For a
   * ROLE_USER or ROLE_TOOL message with images, its text parts
   * concatenated (see `parts`).
   *
   * At most 1 GiB, the most `output_limit.max_bytes` may ask for, so that
   * a reply's text goes back as it came however large its output limit;
   * the request's size is the bound that holds first
   * (`limits.max_request_bytes`, 4 MiB unless configured, which the
   * operator keeps above `limits.max_output_bytes`). Every other field a
   * reply fills with its output (`refusal`, `Part.text`, a reasoning
   * block's text, signature and redacted data, a tool call's arguments
   * and signature, a provider tool block's input, result and extra) has
   * the same bound; each was 1 MiB (extra 64 KiB), less than a reply may
   * hold.
   *
   * @generated from field: string content = 2;
   */
  content: string;

  /**
   * For ROLE_ASSISTANT: the tool calls the model made in this turn. At
   * most 1024, the most a reply may hold (a reply with more fails its
   * attempt, PROVIDER_PROTOCOL_ERROR): every `final.message` goes back as
   * it came. No provider bounds a turn's parallel calls by a number
   * (OpenAI's `parallel_tool_calls` and Anthropic's
   * `disable_parallel_tool_use` only switch them off).
   *
   * @generated from field: repeated llmrelay.v1.ToolCall tool_calls = 3;
   */
  toolCalls: ToolCall[];

  /**
   * For ROLE_TOOL: the `ToolCall.id` this message answers. A tool result
   * answers a call of the last ROLE_ASSISTANT message before it, with only
   * ROLE_TOOL (or ROLE_SYSTEM) messages between them, the results in any
   * order, one result per call; and every call of an assistant message
   * needs its result before the next ROLE_USER or ROLE_ASSISTANT message
   * (a conversation may end with calls still to answer). Otherwise the
   * request is INVALID_ARGUMENT before any attempt (reason
   * INVALID_REQUEST, a BadRequest on this field of the result, or on
   * `tool_calls[j].id` of the call left unanswered), whatever the
   * provider: OpenAI and Anthropic refuse such a conversation, and Gemini
   * would match the result to a call by its name.
   *
   * @generated from field: string tool_call_id = 4;
   */
  toolCallId: string;

  /**
   * For ROLE_ASSISTANT: the model's reasoning in this turn, block by block,
   * in the order the provider sent it. Never part of `content`.
   *
   * Send an assistant message back exactly as `final.message` gave it: each
   * provider needs its own blocks back to continue the conversation
   * (Anthropic requires the signed thinking blocks of a turn that called
   * tools; Gemini 3 refuses a function-calling turn without its
   * signatures; DeepSeek requires `reasoning_content` after tool calls).
   * The adapter puts them where its API expects them (see docs/providers.md)
   * and leaves out blocks another provider's format produced, whose
   * signatures it could not verify. At most 256, the most a reply may hold
   * (a reply with more fails its attempt, PROVIDER_PROTOCOL_ERROR).
   *
   * @generated from field: repeated llmrelay.v1.Reasoning reasoning = 5;
   */
  reasoning: Reasoning[];

  /**
   * For ROLE_ASSISTANT: the model's refusal, when it declined to answer and
   * said why (OpenAI's `refusal`); `content` is then usually empty, and the
   * final's finish_reason FINISH_REASON_REFUSAL. Not sent back to providers.
   * At most 1 GiB, as `content`.
   *
   * @generated from field: string refusal = 6;
   */
  refusal: string;

  /**
   * For ROLE_ASSISTANT: the order of the turn's blocks, exactly as the
   * provider sent them. The fields above hold each kind of block apart
   * (the text in `content`, the reasoning blocks in `reasoning`, the tool
   * calls in `tool_calls`, the provider's own tool blocks in
   * `provider_tools`); `parts` says in which order they came, one part per
   * block: a text block with its text, or which reasoning block, tool call
   * or provider tool block comes next. Replies interleave them: a model
   * may think, call a tool, think again and call another (Anthropic's
   * interleaved thinking), or write text between the searches it runs
   * itself.
   *
   * A message without `parts` is in the usual order: its reasoning blocks,
   * its text (one block), its provider tool blocks, its tool calls.
   * `final.message` has `parts` whenever the reply came in another order,
   * so that an empty `parts` always means the usual order. Send it back as
   * it is: every adapter sends the blocks in this order where its wire
   * format keeps one (Anthropic's content blocks, Gemini's parts,
   * Mistral's content parts), and providers that check the order
   * (Anthropic, with thinking and tool use) accept the turn only so.
   *
   * When set, it must describe the message exactly: its text parts,
   * concatenated, are `content`, and it names every reasoning block, tool
   * call and provider tool block once; otherwise the request is
   * INVALID_ARGUMENT naming the part. Edit `content` and drop `parts`
   * together, or neither.
   *
   * For ROLE_USER: the message's text and images, in order. A user
   * message's parts are text parts and image parts (`Part.image`) only,
   * and, as above, its text parts concatenated are `content`: a message
   * "What is in [image], compared with [image]?" is the parts text
   * "What is in ", image, text " compared with ", image, text "?" and the
   * content "What is in  compared with ?". Images go in no other field
   * and no other role, so a user message with images always has `parts`;
   * one without images needs none. Every adapter sends the blocks in this
   * order (docs/providers.md, "Images").
   *
   * For ROLE_TOOL: the tool's result as text and images, in order (a
   * browser or computer tool's screenshot), under the rules of a user
   * message's parts: text parts and image parts only, the text parts
   * concatenated are `content`, and a result without images needs no
   * parts. Adapters whose API takes no image in a tool result carry it
   * as close as the API allows, or refuse the request before its first
   * attempt (docs/providers.md, "Images in tool results").
   *
   * At most 4096: room for the parts of any reply, whose blocks are at
   * most 1024 tool calls, 256 reasoning blocks and 256 provider tool
   * blocks, with a text block before, between and after them.
   *
   * @generated from field: repeated llmrelay.v1.Part parts = 7;
   */
  parts: Part[];

  /**
   * For ROLE_ASSISTANT: the blocks of the tools the provider ran itself in
   * this turn (Anthropic's server tools: web search, web fetch, code
   * execution, tool search; its MCP connector), calls and results, in the
   * order they came (`parts` places them among the other blocks).
   * llmrelay neither runs nor reads these tools: it carries their blocks
   * so that the turn can go back to the provider as it came, which the
   * provider needs to continue a paused turn (FINISH_REASON_PAUSED) and to
   * keep the results in the conversation. Send them back unchanged; an
   * adapter leaves out blocks of another provider's format. At most 256,
   * the most a reply may hold (a reply with more fails its attempt,
   * PROVIDER_PROTOCOL_ERROR).
   *
   * @generated from field: repeated llmrelay.v1.ProviderToolBlock provider_tools = 8;
   */
  providerTools: ProviderToolBlock[];

  /**
   * For ROLE_TOOL messages of a `final.transcript`: the server tool llmrelay
   * ran to produce this result, as requests name it ("everything/echo").
   * Empty for the results of tools the client ran. Informational: providers
   * are sent `content` (with `parts`, its text and images) and
   * `tool_call_id` only.
   *
   * @generated from field: string server_tool = 20;
   */
  serverTool: string;

  /**
   * For ROLE_TOOL messages: the tool failed, and `content` says how (an MCP
   * tool's `isError` result, or llmrelay's account of a call that could not
   * be made or did not return in time). The model is sent the content as
   * the tool's result either way, marked as a failure where the provider's
   * format has a mark: Anthropic's `is_error`, Gemini's `response.error`
   * in place of `response.output`; OpenAI's format has none.
   *
   * @generated from field: bool tool_error = 21;
   */
  toolError: boolean;
};

/**
 * Describes the message llmrelay.v1.Message.
 * Use `create(MessageSchema)` to create a new message.
 */
export const MessageSchema: GenMessage<Message> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 3);

/**
 * Part is one block of a message, in the order of `Message.parts`. In a
 * ROLE_ASSISTANT message: a text block, or the place of one of the
 * message's reasoning blocks, tool calls or provider tool blocks. In a
 * ROLE_USER or ROLE_TOOL message: a text block or an image. Exactly one
 * of its fields is set.
 *
 * @generated from message llmrelay.v1.Part
 */
export type Part = Message$1<"llmrelay.v1.Part"> & {
  /**
   * The block.
   *
   * @generated from oneof llmrelay.v1.Part.part
   */
  part: {
    /**
     * A text block: its text, a piece of `Message.content` (the text
     * parts of a message, concatenated, are its `content`). At most
     * 1 GiB, as `Message.content`.
     *
     * @generated from field: string text = 1;
     */
    value: string;
    case: "text";
  } | {
    /**
     * `Message.reasoning[reasoning]` comes here.
     *
     * @generated from field: uint32 reasoning = 2;
     */
    value: number;
    case: "reasoning";
  } | {
    /**
     * `Message.tool_calls[tool_call]` comes here.
     *
     * @generated from field: uint32 tool_call = 3;
     */
    value: number;
    case: "toolCall";
  } | {
    /**
     * `Message.provider_tools[provider_tool]` comes here.
     *
     * @generated from field: uint32 provider_tool = 4;
     */
    value: number;
    case: "providerTool";
  } | {
    /**
     * ROLE_USER and ROLE_TOOL only: an image, here among the message's
     * text (a user's image, or a tool result's screenshot). The model
     * must accept image input (a vision model); a provider that refuses
     * images for the model fails the call as it refuses any invalid
     * request.
     *
     * @generated from field: llmrelay.v1.Image image = 5;
     */
    value: Image;
    case: "image";
  } | { case: undefined; value?: undefined };
};

/**
 * Describes the message llmrelay.v1.Part.
 * Use `create(PartSchema)` to create a new message.
 */
export const PartSchema: GenMessage<Part> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 4);

/**
 * Image is an image a user, or a tool's result, sends the model
 * (`Part.image`): fetched by the provider from an https URL, or sent
 * inline as its encoded bytes.
 * Exactly one of `url` and `data` is set.
 *
 * Inline images count towards the request's size, which the server
 * bounds (`limits.max_request_bytes`, 4 MiB unless configured, within
 * gRPC's `limits.max_recv_msg_bytes`, 8 MiB unless configured): raise
 * them to send larger images. Providers bound images further (Anthropic:
 * 5 MB an image; OpenAI: 20 MB; Gemini: 20 MB for the whole request
 * inline) and refuse larger ones as an invalid request. For budgets and
 * estimated usage an image counts as a fixed 1,600 input tokens, whatever
 * its size (docs/providers.md, "Images").
 *
 * @generated from message llmrelay.v1.Image
 */
export type Image = Message$1<"llmrelay.v1.Image"> & {
  /**
   * Where the image comes from.
   *
   * @generated from oneof llmrelay.v1.Image.source
   */
  source: {
    /**
     * An https URL the provider fetches the image from, at most 8,192
     * characters, that names a host: "https://", "https:///x.png" and
     * "https://:443/x", which no provider can fetch, are refused (rule
     * `image.url_host`). Other schemes are refused, data: URLs included:
     * send those bytes in `data`. Providers that cannot fetch URLs
     * (Gemini) refuse a request with one before its first attempt:
     * INVALID_ARGUMENT naming this field and the provider.
     *
     * @generated from field: string url = 1;
     */
    value: string;
    case: "url";
  } | {
    /**
     * The image itself: the file's bytes as they are (PNG, JPEG, GIF or
     * WebP; not base64: gRPC carries bytes, and the adapters encode them
     * as their provider needs). 1 byte to 20 MiB; set `media_type`.
     *
     * @generated from field: bytes data = 2;
     */
    value: Uint8Array;
    case: "data";
  } | { case: undefined; value?: undefined };

  /**
   * The image's media type: "image/png", "image/jpeg", "image/gif" or
   * "image/webp". Required with `data`; with `url`, optional (the
   * provider reads the type from the fetched image) and checked the same
   * when set.
   *
   * @generated from field: string media_type = 3;
   */
  mediaType: string;

  /**
   * How closely the model should look: a hint for OpenAI's `detail`
   * (low-resolution, high-resolution or original-resolution processing),
   * which other providers do not have and leave out. Unset leaves the
   * provider's default (OpenAI's "auto").
   *
   * @generated from field: llmrelay.v1.ImageDetail detail = 4;
   */
  detail: ImageDetail;
};

/**
 * Describes the message llmrelay.v1.Image.
 * Use `create(ImageSchema)` to create a new message.
 */
export const ImageSchema: GenMessage<Image> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 5);

/**
 * ProviderToolBlock is one content block of a tool that the provider ran
 * itself during the turn (a "server tool"): the model's call of the tool,
 * or the tool's result, as the provider sent it. llmrelay carries it
 * opaquely: `kind`, `id` and `name` say what it is, `input` and `result`
 * hold the provider's JSON as it came, and `extra` whatever else the block
 * had, so that the adapter that read it writes it back byte for byte in
 * content. Do not change it. A reply's block whose kind, id, name or
 * format is longer than its bound here fails its attempt as a protocol
 * error (PROVIDER_PROTOCOL_ERROR, not retried), as a message could not
 * take it back.
 *
 * @generated from message llmrelay.v1.ProviderToolBlock
 */
export type ProviderToolBlock = Message$1<"llmrelay.v1.ProviderToolBlock"> & {
  /**
   * The provider's type of the block. Anthropic: "server_tool_use" (a call
   * of a server tool), "web_search_tool_result", "web_fetch_tool_result",
   * "code_execution_tool_result", "bash_code_execution_tool_result",
   * "text_editor_code_execution_tool_result", "tool_search_tool_result"
   * (results), "mcp_tool_use" and "mcp_tool_result" (its MCP connector),
   * and the kinds it adds later.
   *
   * @generated from field: string kind = 1;
   */
  kind: string;

  /**
   * The tool call's id: a call's own id, or for a result the id of the
   * call it answers (Anthropic's `tool_use_id`).
   *
   * @generated from field: string id = 2;
   */
  id: string;

  /**
   * For a call: the tool's name, e.g. "web_search". Empty for a result.
   *
   * @generated from field: string name = 3;
   */
  name: string;

  /**
   * For a call: its input, the JSON text the provider sent (an object),
   * e.g. `{"query": "San Francisco weather today"}`. Empty for a result.
   * At most 1 GiB, as `Message.content` (and `result` and `extra`): the
   * output limit counts the whole block.
   *
   * @generated from field: string input = 4;
   */
  input: string;

  /**
   * For a result: the result, the JSON text the provider sent (Anthropic:
   * the block's `content`, a list of results or an error object; a web
   * search's results carry `encrypted_content` the provider needs back).
   * Empty for a call.
   *
   * @generated from field: string result = 5;
   */
  result: string;

  /**
   * The block's other fields, as a JSON object (Anthropic's `caller`, an
   * MCP block's `server_name` or `is_error`); empty when it had none.
   *
   * @generated from field: string extra = 6;
   */
  extra: string;

  /**
   * The wire format the block came in, set by llmrelay: "anthropic". An
   * adapter sends back the blocks of its own formats only. Keep it as it
   * is.
   *
   * @generated from field: string format = 7;
   */
  format: string;
};

/**
 * Describes the message llmrelay.v1.ProviderToolBlock.
 * Use `create(ProviderToolBlockSchema)` to create a new message.
 */
export const ProviderToolBlockSchema: GenMessage<ProviderToolBlock> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 6);

/**
 * Reasoning is one block of a model's reasoning (its "thinking"), as the
 * provider sent it: readable text, or an opaque block, and the opaque
 * signature the provider needs to accept the block back in a later turn.
 * Signatures and redacted data are not meant to be read: keep them byte
 * for byte. A reply's block whose format, id, kind or provider format is
 * longer than its bound here fails its attempt as a protocol error
 * (PROVIDER_PROTOCOL_ERROR, not retried): the provider needs them back as
 * they came, and a message could not take them.
 *
 * @generated from message llmrelay.v1.Reasoning
 */
export type Reasoning = Message$1<"llmrelay.v1.Reasoning"> & {
  /**
   * The reasoning text (Anthropic's `thinking`, Gemini's thought summary,
   * `reasoning_content` of OpenAI-compatible servers, Magistral's thinking
   * parts). Empty for a redacted block or a signature alone. At most
   * 1 GiB, as `Message.content` (and `signature` and `redacted`).
   *
   * @generated from field: string text = 1;
   */
  text: string;

  /**
   * Opaque: the provider's signature over the block (Anthropic's thinking
   * `signature`, Gemini's `thoughtSignature` of a text part).
   *
   * @generated from field: string signature = 2;
   */
  signature: string;

  /**
   * Opaque: reasoning the provider encrypted or redacted (the `data` of
   * Anthropic's `redacted_thinking`). Never shown.
   *
   * @generated from field: string redacted = 3;
   */
  redacted: string;

  /**
   * The wire format the block came in, set by llmrelay: "anthropic",
   * "gemini", "openai.reasoning_content", "openai.reasoning",
   * "openrouter.reasoning_details", "mistral.thinking" or "mock". An
   * adapter sends back the blocks of its own formats only. Keep it as it
   * is. Empty, or a name like those: a lower-case letter, then lower-case
   * letters, digits, ".", "_" or "-", at most 64 in all (a format the
   * answering adapter leaves out is named in the final's
   * `reasoning.dropped` annotation, a comma-separated list, so a name
   * that could break it up or carry control characters into logs is
   * INVALID_ARGUMENT, before any attempt).
   *
   * @generated from field: string format = 4;
   */
  format: string;

  /**
   * Opaque: the provider's id of the block, when it gives one
   * (OpenRouter's reasoning_details `id`, such as the `rs_…` id of an
   * OpenAI reasoning item, which must come back with its encrypted data).
   * Keep it as it is.
   *
   * @generated from field: string id = 5;
   */
  id: string;

  /**
   * What kind of block it is, when its format has several (OpenRouter's
   * reasoning_details `type`: "reasoning.text" (readable `text`, maybe a
   * `signature`), "reasoning.summary" (`text` is a summary of the
   * reasoning), "reasoning.encrypted" (the block is in `redacted`)).
   * Empty for formats of one kind. Keep it as it is.
   *
   * @generated from field: string kind = 6;
   */
  kind: string;

  /**
   * The format the model's own provider gave the block, when a router
   * relays it (OpenRouter's reasoning_details `format`:
   * "anthropic-claude-v1", "openai-responses-v1", "xai-responses-v1",
   * "google-gemini-v1", ...); the router needs it back to hand the block
   * to that provider. Keep it as it is.
   *
   * @generated from field: string provider_format = 7;
   */
  providerFormat: string;
};

/**
 * Describes the message llmrelay.v1.Reasoning.
 * Use `create(ReasoningSchema)` to create a new message.
 */
export const ReasoningSchema: GenMessage<Reasoning> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 7);

/**
 * ToolCall is one complete call the model made to a tool.
 *
 * @generated from message llmrelay.v1.ToolCall
 */
export type ToolCall = Message$1<"llmrelay.v1.ToolCall"> & {
  /**
   * The call's id: the provider's, or, for a provider that sent none (vLLM
   * and some other OpenAI-compatible servers, Gemini), one llmrelay made
   * (`call_` and a suffix). Echo it in the ROLE_TOOL message that carries
   * the result. At most 256 characters: a provider's longer id is cut to
   * fit, with `_` and 8 hex digits of a hash of the whole id (the same in
   * the call's `ToolCallDelta` and in `final.message`), so that the reply
   * goes back as it came.
   *
   * @generated from field: string id = 1;
   */
  id: string;

  /**
   * The tool's name, as declared in `Tool.name`. A reply whose call has a
   * name longer than 128 characters (which no `Tool.name` is) fails its
   * attempt as a protocol error (PROVIDER_PROTOCOL_ERROR, not retried).
   *
   * @generated from field: string name = 2;
   */
  name: string;

  /**
   * The arguments as the JSON text the model produced (normally an object).
   * At most 1 GiB, as `Message.content` (and `signature`).
   *
   * @generated from field: string arguments = 3;
   */
  arguments: string;

  /**
   * Opaque: the provider's signature of the call (Gemini's
   * `thoughtSignature` on a function call), which the provider needs back
   * with the call in the next turn; Gemini 3 refuses the turn without it.
   * Set in `final.message`, and in the `ToolCallDelta` that brought it;
   * send it back byte for byte.
   *
   * @generated from field: string signature = 4;
   */
  signature: string;
};

/**
 * Describes the message llmrelay.v1.ToolCall.
 * Use `create(ToolCallSchema)` to create a new message.
 */
export const ToolCallSchema: GenMessage<ToolCall> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 8);

/**
 * GenerationConfig holds sampling and length settings. An unset field
 * takes the route's default (`defaults.generation`), if any, else the
 * provider's.
 *
 * @generated from message llmrelay.v1.GenerationConfig
 */
export type GenerationConfig = Message$1<"llmrelay.v1.GenerationConfig"> & {
  /**
   * The most tokens the model may produce, 1 to 1,000,000. Sent as the
   * provider's own bound (`max_tokens` or `max_completion_tokens`,
   * Gemini's `maxOutputTokens`). Unset: the provider's default; Anthropic,
   * whose API requires one, is sent 4096 (with extended thinking in
   * `provider_options` whose `budget_tokens` is 4096 or more, that budget
   * plus 4096, as the API wants more than the budget). A provider that
   * takes fewer for the model rejects the request (PROVIDER_REJECTED).
   *
   * @generated from field: optional uint32 max_output_tokens = 1;
   */
  maxOutputTokens?: number | undefined;

  /**
   * Sampling temperature, 0 to 2, sent as it is. Anthropic takes 0 to 1:
   * above 1, a call that may reach an `anthropic` target is refused before
   * any attempt (INVALID_ARGUMENT, INVALID_REQUEST, a BadRequest on
   * generation.temperature naming the range).
   *
   * @generated from field: optional float temperature = 2;
   */
  temperature?: number | undefined;

  /**
   * Nucleus sampling: consider only the tokens within this probability
   * mass, 0 to 1.
   *
   * @generated from field: optional float top_p = 3;
   */
  topP?: number | undefined;

  /**
   * Sequences at which the model stops producing output: at most 16, each
   * 1 to 256 bytes. Providers take fewer: OpenAI's and Azure OpenAI's
   * Chat Completions at most 4, Gemini at most 5. More than a target the
   * call may reach takes (any target of the route, or of
   * `fallback_models`) is refused before any attempt: INVALID_ARGUMENT,
   * a BadRequest on `generation.stop` naming the bound. Other
   * OpenAI-compatible servers get every sequence. `Final.stop_sequence`
   * says which one ended the reply, where the provider tells.
   *
   * @generated from field: repeated string stop = 4;
   */
  stop: string[];
};

/**
 * Describes the message llmrelay.v1.GenerationConfig.
 * Use `create(GenerationConfigSchema)` to create a new message.
 */
export const GenerationConfigSchema: GenMessage<GenerationConfig> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 9);

/**
 * Tool declares a function the model may call.
 *
 * @generated from message llmrelay.v1.Tool
 */
export type Tool = Message$1<"llmrelay.v1.Tool"> & {
  /**
   * The function's name: 1 to 64 letters, digits, "_" or "-".
   *
   * @generated from field: string name = 1;
   */
  name: string;

  /**
   * What the function does and when to call it; the model reads this.
   *
   * @generated from field: string description = 2;
   */
  description: string;

  /**
   * The arguments, as a JSON Schema object (for example
   * {"type": "object", "properties": {"city": {"type": "string"}}}).
   *
   * @generated from field: google.protobuf.Struct parameters = 3;
   */
  parameters?: JsonObject | undefined;
};

/**
 * Describes the message llmrelay.v1.Tool.
 * Use `create(ToolSchema)` to create a new message.
 */
export const ToolSchema: GenMessage<Tool> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 10);

/**
 * ToolChoice says whether the model must call a tool.
 *
 * @generated from message llmrelay.v1.ToolChoice
 */
export type ToolChoice = Message$1<"llmrelay.v1.ToolChoice"> & {
  /**
   * The mode.
   *
   * @generated from field: llmrelay.v1.ToolChoiceMode mode = 1;
   */
  mode: ToolChoiceMode;

  /**
   * With TOOL_CHOICE_MODE_TOOL: the tool the model must call, required and
   * one of `tools` (or, with `server_tools`, a server tool's `model_name`);
   * anything else is INVALID_ARGUMENT (INVALID_REQUEST) before any attempt.
   *
   * @generated from field: string name = 2;
   */
  name: string;

  /**
   * At most one tool call per reply: the model calls one tool, or none,
   * and waits for its result before it calls the next. Unset (false) lets
   * the model call several tools in one reply, each provider's default.
   * Agent frameworks that run one tool at a time set it; it is what
   * OpenAI's `parallel_tool_calls: false` and Anthropic's
   * `tool_choice.disable_parallel_tool_use: true` say, and llmrelay's
   * OpenAI- and Anthropic-compatible HTTP APIs translate those to it.
   *
   * Each provider kind gets it in its own form:
   *   - openai (and OpenAI-compatible servers): `parallel_tool_calls: false`.
   *     Setting `parallel_tool_calls` in `provider_options` as well is
   *     INVALID_ARGUMENT; without this field, `provider_options` may still
   *     set it.
   *   - anthropic: `disable_parallel_tool_use: true` on the request's
   *     `tool_choice` (type auto, any or tool).
   *   - gemini: the Gemini API has no such switch, so llmrelay keeps the
   *     first function call of each reply and drops the ones after it,
   *     which are never streamed; the model makes them in a later turn,
   *     once it has the first one's result. (Refusing the request instead
   *     would fail every call of a framework that always sets it, and a
   *     fallback from another provider; ignoring it would hand the client
   *     calls it said it cannot run.)
   *   - mock: honoured, a reply calls only its first tool.
   *
   * It has no effect without tools to call (no `tools` or `server_tools`,
   * or `response_format` set), and none with TOOL_CHOICE_MODE_NONE: such a
   * reply calls no tool at all, and nothing is sent to the provider. With
   * `server_tools` it holds in every turn: llmrelay runs one call per turn.
   *
   * @generated from field: bool disable_parallel_tool_calls = 3;
   */
  disableParallelToolCalls: boolean;
};

/**
 * Describes the message llmrelay.v1.ToolChoice.
 * Use `create(ToolChoiceSchema)` to create a new message.
 */
export const ToolChoiceSchema: GenMessage<ToolChoice> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 11);

/**
 * ResponseFormat asks for structured output.
 *
 * llmrelay sends the schema to the provider in the provider's own form where
 * it has one, then validates the reply locally. When the reply does not parse
 * or does not conform, llmrelay re-asks the model with the validation errors
 * (a `will_retry` with reason RETRY_REASON_INVALID_OUTPUT), up to
 * `max_validation_retries` times.
 *
 * Re-asks are counted apart from transport retries: they do not use up
 * `retry.max_attempts`, which bounds the attempts that fail in transport
 * over the whole call, and they happen whatever `retry.midstream` says (set
 * `max_validation_retries` to 0 to never replace output that was shown).
 *
 * @generated from message llmrelay.v1.ResponseFormat
 */
export type ResponseFormat = Message$1<"llmrelay.v1.ResponseFormat"> & {
  /**
   * The JSON Schema (draft 2020-12) the reply must conform to. An invalid
   * schema fails the call with INVALID_ARGUMENT (INVALID_SCHEMA) before any
   * provider call, and so does a schema no value can satisfy where llmrelay
   * can prove it ({"type": "string", "minLength": 5, "maxLength": 2},
   * {"enum": []}, a required property whose subschema allows nothing, ...;
   * the message names the subschema's JSON pointer and what contradicts
   * what). docs/structured-output.md lists what is checked.
   *
   * @generated from field: google.protobuf.Struct json_schema = 1;
   */
  jsonSchema?: JsonObject | undefined;

  /**
   * A short name for the schema, sent to providers that want one: up to 64
   * letters, digits, "_" or "-". Default "response".
   *
   * @generated from field: string name = 2;
   */
  name: string;

  /**
   * How many times to re-ask the model after an invalid reply; 0 means
   * never re-ask. Unset takes the route's default, else the server's
   * (`structured_output.default_validation_retries`, 2 unless configured);
   * larger values are lowered to the server's limit
   * (`structured_output.max_validation_retries`, 5 unless configured). At
   * most 10 (INVALID_ARGUMENT past it).
   *
   * @generated from field: optional uint32 max_validation_retries = 3;
   */
  maxValidationRetries?: number | undefined;

  /**
   * What to do when the reply is still invalid after every re-ask.
   *
   * @generated from field: llmrelay.v1.OnInvalid on_invalid = 4;
   */
  onInvalid: OnInvalid;

  /**
   * Also stream `partial_object` events: the reply parsed so far, as it
   * changes. Partial objects are not validated; only `final.object` is.
   *
   * Each `partial_object` is a whole snapshot, so sending one per delta
   * would make the bytes grow with the square of the reply. llmrelay sends a
   * snapshot only while the bound below holds, and otherwise skips it (the
   * next one shows everything the skipped one did):
   *
   *   The `partial_object` events of one attempt, each counted as its whole
   *   encoded GenerateEvent, total at most 4 × the bytes of reply text that
   *   attempt received so far.
   *
   * Within that budget a snapshot goes out when what can be read changed:
   * at once while the budget allows after a structural change (a value
   * started or completed: an object, array or string opened, a number or
   * literal read, anything closed), but when only a string being written
   * grew, only while the snapshots so far stay within 2 × the text, so that
   * a long string leaves room for the values after it. A snapshot encodes
   * to about the size of the text it shows, so in practice the first one
   * comes within the first few bytes of the reply, they are dense while the
   * reply is short, then each follows about a third more text (a doubling,
   * inside a long string), and the last one before `final` shows most of
   * the reply. A snapshot much larger than its text (an array of one-digit
   * numbers takes 11 bytes per 2-byte element) waits until the budget has
   * room, possibly for `final`. Each attempt has its own budget.
   *
   * @generated from field: bool stream_partial_objects = 5;
   */
  streamPartialObjects: boolean;

  /**
   * The shortest time between two `partial_object` events of an attempt, on
   * top of the byte bound above; the first one of each attempt is not held
   * back. A snapshot due sooner is skipped, not delayed: a later one shows
   * everything it would have, and `final` has the object. Unset or 0: no
   * interval.
   * The server may impose a longer one
   * (`structured_output.partial_object_min_interval`); the longer of the two
   * applies. Only with `stream_partial_objects`.
   *
   * @generated from field: google.protobuf.Duration partial_object_interval = 6;
   */
  partialObjectInterval?: Duration | undefined;
};

/**
 * Describes the message llmrelay.v1.ResponseFormat.
 * Use `create(ResponseFormatSchema)` to create a new message.
 */
export const ResponseFormatSchema: GenMessage<ResponseFormat> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 12);

/**
 * RetryPolicy says how llmrelay retries failed attempts. Transient failures
 * are retried: rate limits, overload, 5xx, dropped or cut connections and
 * stalls. Requests the provider rejects are not, nor streams that arrive
 * whole but do not decode (PROVIDER_PROTOCOL_ERROR).
 *
 * @generated from message llmrelay.v1.RetryPolicy
 */
export type RetryPolicy = Message$1<"llmrelay.v1.RetryPolicy"> & {
  /**
   * The most attempts, the first one included: 1 disables retries; 0 takes
   * the server default (3). More than 10 is refused (INVALID_ARGUMENT
   * naming this field); up to 10, a value above the server's limit
   * (`retry.max_attempts_limit`, 10 unless the operator lowered it) is
   * clamped to it. Structured-output re-asks come on top (see
   * ResponseFormat).
   *
   * @generated from field: uint32 max_attempts = 1;
   */
  maxAttempts: number;

  /**
   * The backoff before the first retry; it doubles for each further retry,
   * up to `max_backoff`, and each wait is drawn from [d/2, d] ("equal
   * jitter"). A provider's retry hint (Retry-After and its kin) replaces the
   * backoff; a hint longer than the server's `retry.max_retry_after` (60s
   * unless configured) ends the call (RETRY_HINT_TOO_LONG). Unset takes the
   * server's `retry.initial_backoff` (500ms unless configured); a value
   * above `max_backoff` is lowered to it. At most 60s.
   *
   * @generated from field: google.protobuf.Duration initial_backoff = 2;
   */
  initialBackoff?: Duration | undefined;

  /**
   * The longest backoff. Unset takes the server's `retry.max_backoff` (8s
   * unless configured), which is also its limit: a longer value is
   * lowered to it (a request may shorten the backoff, never lengthen it).
   * At most 300s.
   *
   * @generated from field: google.protobuf.Duration max_backoff = 3;
   */
  maxBackoff?: Duration | undefined;

  /**
   * What to do when an attempt fails after some of its deltas were sent.
   *
   * @generated from field: llmrelay.v1.Midstream midstream = 4;
   */
  midstream: Midstream;
};

/**
 * Describes the message llmrelay.v1.RetryPolicy.
 * Use `create(RetryPolicySchema)` to create a new message.
 */
export const RetryPolicySchema: GenMessage<RetryPolicy> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 13);

/**
 * HedgePolicy asks llmrelay to hedge slow attempts (gRFC A6's hedging,
 * adapted to streams).
 *
 * How it runs. Each attempt llmrelay starts (the first, and each retry,
 * fallback or structured-output re-ask) may race hedges: when the attempt
 * has produced no delta for the hedging delay, llmrelay starts a hedge,
 * another attempt of the same request, beside it; and, with `max_hedges`
 * 2, another one after a further delay, while the call has hedges left.
 * The first attempt of the race to produce a delta wins: llmrelay cancels
 * the others at once (their provider requests are closed, which stops
 * their generation and their cost) and streams only the winner.
 *
 * "Produce a delta" means produce something you would see: a text,
 * reasoning, refusal or tool-call fragment (`delta`). Signs of life you do
 * not see (a provider's keep-alives and pings, usage reports) do not win a
 * race, nor stop a hedge from starting; a reasoning model that streams its
 * reasoning does both. An attempt that completes without any delta (an
 * empty reply) wins when it ends, if no other attempt produced a delta.
 *
 * What you see. Only the winner's events: its deltas (with its `attempt`
 * number), and, if it fails after streaming, the `will_retry` that says
 * so. Nothing of a loser ever reaches you, so there is nothing to discard.
 * A call both `resumable` and hedged keeps the same events: `Resume`
 * replays the winner's, never a loser's.
 * A hedge that fails before producing a delta while another attempt of its
 * race still runs is not a `will_retry`: the call still has a live
 * attempt. When every attempt of a race fails before any delta, the call
 * goes on as if the race's first attempt had run alone: its failure is the
 * one the retry policy, the route's fallback and the `will_retry` (its
 * `attempt` and `cause`) are about.
 *
 * Attempt numbers. Attempts are numbered in the order they start, hedges
 * included: a call whose attempt 1 was hedged by attempt 2, which won,
 * streams deltas with `attempt` 2 and a `final` with `attempt` 2,
 * `attempts` 2 and `hedges` 1; the next attempt after a failed race of
 * attempts 1 and 2 is attempt 3 (`will_retry.next_attempt`).
 *
 * Cost. Every hedge is a provider request: its input tokens are paid, and
 * its output tokens up to its cancellation (most providers bill what they
 * generated before the request was closed). `final.usage` sums the tokens
 * every attempt reported, cancelled hedges included; a hedge cancelled
 * before its provider reported usage counts none there. A call starts at
 * most `max_hedges` hedges in all (each turn, with `server_tools`). Hedges
 * count against the provider's retry budget like retries: the budget may
 * refuse a hedge (the call then runs on without it), and a hedge counts as
 * a retry in flight until its race is decided, so that hedging a slow
 * provider adds at most the budget's share of requests to it. Hedges do
 * not count against `retry.max_attempts`.
 *
 * @generated from message llmrelay.v1.HedgePolicy
 */
export type HedgePolicy = Message$1<"llmrelay.v1.HedgePolicy"> & {
  /**
   * Start a hedge when the attempt has produced no delta for this long,
   * and the next one this long after it. Choose about the provider's p95
   * time to first token: then about one call in twenty is hedged. Required
   * unless `adaptive` is set; with `adaptive`, the least wait. At least the
   * server's floor (`retry.hedging.min_hedge_after`, 50ms unless
   * configured): shorter is INVALID_ARGUMENT naming this field.
   *
   * @generated from field: google.protobuf.Duration hedge_after = 1;
   */
  hedgeAfter?: Duration | undefined;

  /**
   * Derive the delay from what this llmrelay replica observed: the p95
   * time to first delta of the target's recent attempts (its last 200,
   * once it has 20; an attempt cancelled because a hedge won counts with
   * the time it had waited), never below `hedge_after` nor the server's
   * floor. Until the target has 20 observations the delay is `hedge_after`,
   * or, without it, the call is not hedged.
   *
   * @generated from field: bool adaptive = 2;
   */
  adaptive: boolean;

  /**
   * How many hedges the call may start, in all (with `server_tools`, in
   * each turn): 1 or 2. Unset means 1; 0 turns hedging off for this call
   * (also a route's default). Lowered to the server's limit
   * (`retry.hedging.max_hedges`, 2 unless configured; a server that allows
   * 0 hedges nothing).
   *
   * @generated from field: optional uint32 max_hedges = 3;
   */
  maxHedges?: number | undefined;

  /**
   * Where the hedges go. Unset means HEDGE_TARGET_SAME.
   *
   * @generated from field: llmrelay.v1.HedgeTarget target = 4;
   */
  target: HedgeTarget;
};

/**
 * Describes the message llmrelay.v1.HedgePolicy.
 * Use `create(HedgePolicySchema)` to create a new message.
 */
export const HedgePolicySchema: GenMessage<HedgePolicy> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 14);

/**
 * GenerateEvent is one event of a Generate stream.
 *
 * @generated from message llmrelay.v1.GenerateEvent
 */
export type GenerateEvent = Message$1<"llmrelay.v1.GenerateEvent"> & {
  /**
   * The event's position in the stream: 1, 2, 3, ... with no gaps.
   *
   * @generated from field: uint64 sequence = 1;
   */
  sequence: bigint;

  /**
   * The attempt this event belongs to, from 1. For `will_retry`, the attempt
   * that failed; for `final`, the attempt that succeeded. Attempts are
   * numbered in the order they start, hedges included (see HedgePolicy): a
   * hedge that lost never shows, so numbers may skip.
   *
   * @generated from field: uint32 attempt = 2;
   */
  attempt: number;

  /**
   * The event.
   *
   * @generated from oneof llmrelay.v1.GenerateEvent.event
   */
  event: {
    /**
     * A fragment of the reply.
     *
     * @generated from field: llmrelay.v1.Delta delta = 3;
     */
    value: Delta;
    case: "delta";
  } | {
    /**
     * The attempt failed and another one is coming.
     *
     * @generated from field: llmrelay.v1.WillRetry will_retry = 4;
     */
    value: WillRetry;
    case: "willRetry";
  } | {
    /**
     * The call succeeded. Always the last event.
     *
     * @generated from field: llmrelay.v1.Final final = 5;
     */
    value: Final;
    case: "final";
  } | {
    /**
     * Structured output with `stream_partial_objects`: the reply parsed so
     * far, with open strings, arrays and objects closed and any incomplete
     * key or literal dropped. Not validated. Always a whole snapshot, never
     * a difference; not every change gets one (see
     * `ResponseFormat.stream_partial_objects` for the byte bound and
     * `ResponseFormat.partial_object_interval`).
     *
     * @generated from field: google.protobuf.Value partial_object = 6;
     */
    value: Value;
    case: "partialObject";
  } | {
    /**
     * Nothing else was sent for the call's heartbeat interval (only with
     * `heartbeat_interval` or the server's `heartbeat.interval`). It
     * carries nothing; clients skip it. Its `attempt` is 0: it belongs to
     * no attempt.
     *
     * @generated from field: llmrelay.v1.Heartbeat heartbeat = 7;
     */
    value: Heartbeat;
    case: "heartbeat";
  } | {
    /**
     * A server tool the model called is running and reported progress
     * (MCP `notifications/progress`; llmrelay asks for progress on every
     * tool call). Only with `server_tools`. Zero or more per tool call,
     * before its `tool_result`.
     *
     * @generated from field: llmrelay.v1.ToolProgress tool_progress = 9;
     */
    value: ToolProgress;
    case: "toolProgress";
  } | {
    /**
     * A server tool the model called returned, or failed: what the model
     * is sent as the tool's result. Only with `server_tools`. Exactly one
     * per server tool call, after the turn's model output and before the
     * next turn's first event. Never discarded: the tool ran.
     *
     * @generated from field: llmrelay.v1.ToolResult tool_result = 10;
     */
    value: ToolResult;
    case: "toolResult";
  } | { case: undefined; value?: undefined };

  /**
   * The turn this event belongs to, from 1. A call without server tools
   * has one turn. With `server_tools`, each model turn, the server tools
   * it called and their events (`tool_progress`, `tool_result`) share a
   * turn; the next model turn's events have the next number. A
   * `will_retry` concerns its turn only: `discard_partial` discards what
   * the failed attempt of that turn streamed, never an earlier turn's
   * output or tool results. The `final` carries the last turn. 0 for a
   * `heartbeat`, which belongs to no turn.
   *
   * @generated from field: uint32 turn = 8;
   */
  turn: number;
};

/**
 * Describes the message llmrelay.v1.GenerateEvent.
 * Use `create(GenerateEventSchema)` to create a new message.
 */
export const GenerateEventSchema: GenMessage<GenerateEvent> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 15);

/**
 * ToolProgress is a progress report of a running server tool.
 *
 * @generated from message llmrelay.v1.ToolProgress
 */
export type ToolProgress = Message$1<"llmrelay.v1.ToolProgress"> & {
  /**
   * The id of the model's tool call the tool runs for (`ToolCall.id`).
   *
   * @generated from field: string tool_call_id = 1;
   */
  toolCallId: string;

  /**
   * The progress so far, as the tool counts it: it increases with every
   * report of one run of the tool, even when the total is unknown. A tool
   * llmrelay calls again (an idempotent tool after a timeout or a lost
   * connection) reports anew from its start under the same tool_call_id,
   * so a report lower than the one before means the tool started over.
   *
   * @generated from field: double progress = 2;
   */
  progress: number;

  /**
   * The total the progress counts towards, when the tool knows it.
   *
   * @generated from field: optional double total = 3;
   */
  total?: number | undefined;

  /**
   * What the tool is doing, when it says.
   *
   * @generated from field: string message = 4;
   */
  message: string;

  /**
   * The server tool, as requests name it ("everything/echo").
   *
   * @generated from field: string name = 5;
   */
  name: string;
};

/**
 * Describes the message llmrelay.v1.ToolProgress.
 * Use `create(ToolProgressSchema)` to create a new message.
 */
export const ToolProgressSchema: GenMessage<ToolProgress> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 16);

/**
 * ToolResult is the result of a server tool call, as the model is sent it.
 *
 * @generated from message llmrelay.v1.ToolResult
 */
export type ToolResult = Message$1<"llmrelay.v1.ToolResult"> & {
  /**
   * The id of the model's tool call this result answers (`ToolCall.id`).
   *
   * @generated from field: string tool_call_id = 1;
   */
  toolCallId: string;

  /**
   * The server tool that ran, as requests name it ("everything/echo").
   *
   * @generated from field: string name = 2;
   */
  name: string;

  /**
   * The result's text, as the model is sent it: the text parts of the
   * tool's content, in order; its structured content, as JSON, when it
   * has no text, or after its text (following a line "[structured
   * content]") when the text is not that JSON already; every other part
   * (audio, resource link, embedded resource, an image llmrelay cannot
   * send as one) described in a line of its own (kind, MIME type, name or
   * URI, size), never dropped silently. Parts meant for the user only
   * are in `user_content` instead, with a line here saying so. For an
   * error (`is_error`), what went wrong. The same as the `content` of the
   * result's ROLE_TOOL message in `final.transcript`.
   *
   * The tool's images (PNG, JPEG, GIF or WebP, up to 20 MiB each) are
   * sent to the model as images, the message's image parts among its
   * text; `images` says where they are, not what they are: their bytes go
   * in `final.transcript` only, so that the stream stays small.
   *
   * @generated from field: string content = 3;
   */
  content: string;

  /**
   * The tool failed: the MCP server returned a result with `isError`, the
   * tool does not exist or refused its arguments, the tool did not
   * return within its server's `timeout`, the server could not be
   * reached (after retries, for idempotent tools), its answer was longer
   * than the server's `max_response_bytes` (not read, not tried again),
   * or its result is not an MCP tool result (not tried again). The model
   * is sent the content as the tool's result and the call goes on.
   *
   * @generated from field: bool is_error = 4;
   */
  isError: boolean;

  /**
   * The result was cut: its text was longer than the server's
   * `tools.max_tool_result_bytes` (64 KiB unless configured), or the
   * result did not fit in what the call's output limit left it (see
   * OutputLimit: an image that does not fit whole is left out, with what
   * follows it). The model is told so at the end of the content, where
   * the note fits.
   *
   * @generated from field: bool truncated = 5;
   */
  truncated: boolean;

  /**
   * How many times the tool was called: more than 1 when an idempotent
   * tool was called again after its server failed or timed out.
   *
   * @generated from field: uint32 attempts = 6;
   */
  attempts: number;

  /**
   * The images the model is sent with `content`, in order: the image
   * parts of the result's ROLE_TOOL message in `final.transcript`, which
   * carries their bytes. Empty for a result without images.
   *
   * @generated from field: repeated llmrelay.v1.ToolResultImage images = 7;
   */
  images: ToolResultImage[];

  /**
   * The result's parts meant for the user only, not for the model (MCP
   * annotations whose `audience` leaves out "assistant", such as
   * `["user"]`), in order, one per line, as `content` would have them (an
   * image described, its bytes not passed on). The model is not sent it,
   * nor is `final.transcript`, which a client sends back to continue the
   * conversation: show it to the user with the result. Cut, as `content`
   * is, at `tools.max_tool_result_bytes` (`truncated`). Empty when there
   * are none.
   *
   * @generated from field: string user_content = 8;
   */
  userContent: string;
};

/**
 * Describes the message llmrelay.v1.ToolResult.
 * Use `create(ToolResultSchema)` to create a new message.
 */
export const ToolResultSchema: GenMessage<ToolResult> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 17);

/**
 * ToolResultImage is an image of a server tool's result, as the
 * `ToolResult` event reports it: where it is and what it is, without its
 * bytes (`final.transcript` carries them).
 *
 * @generated from message llmrelay.v1.ToolResultImage
 */
export type ToolResultImage = Message$1<"llmrelay.v1.ToolResultImage"> & {
  /**
   * Where the image is among the result's text: the byte offset in
   * `ToolResult.content` of the text that follows it (0: before all of
   * it; the content's length: after all of it).
   *
   * @generated from field: uint32 offset = 1;
   */
  offset: number;

  /**
   * The image's media type: "image/png", "image/jpeg", "image/gif" or
   * "image/webp".
   *
   * @generated from field: string media_type = 2;
   */
  mediaType: string;

  /**
   * The image's size in bytes (decoded, as the transcript's
   * `Image.data` holds it).
   *
   * @generated from field: uint32 size = 3;
   */
  size: number;
};

/**
 * Describes the message llmrelay.v1.ToolResultImage.
 * Use `create(ToolResultImageSchema)` to create a new message.
 */
export const ToolResultImageSchema: GenMessage<ToolResultImage> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 18);

/**
 * Heartbeat keeps a quiet stream alive through proxies that cut streams
 * silent for longer than their idle timeout. See
 * `GenerateRequest.heartbeat_interval`.
 *
 * @generated from message llmrelay.v1.Heartbeat
 */
export type Heartbeat = Message$1<"llmrelay.v1.Heartbeat"> & {
};

/**
 * Describes the message llmrelay.v1.Heartbeat.
 * Use `create(HeartbeatSchema)` to create a new message.
 */
export const HeartbeatSchema: GenMessage<Heartbeat> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 19);

/**
 * Delta is a fragment of the reply. Concatenating the `text` of the deltas of
 * one attempt gives that attempt's text. A delta carries one of its fields.
 *
 * A fragment may be of any size: never split or joined at any particular
 * boundary (a word, a token, a provider's chunk). When the client reads
 * slower than the provider streams, the pieces of the same kind that the
 * server has already read while it was sending the previous event arrive
 * as one delta: text (or a refusal) concatenated, the fragments of one tool
 * call (same `index`) merged into one `ToolCallDelta`, the fragments of one
 * reasoning block likewise. The server never holds a delta back to wait for
 * more, events keep their order and `sequence` stays without gaps; a client
 * that keeps up gets a delta per provider chunk. The server's
 * `streaming.coalesce_deltas: false` relays one delta per provider chunk
 * always.
 *
 * @generated from message llmrelay.v1.Delta
 */
export type Delta = Message$1<"llmrelay.v1.Delta"> & {
  /**
   * The next piece of text.
   *
   * @generated from field: string text = 1;
   */
  text: string;

  /**
   * The next piece of a tool call.
   *
   * @generated from field: llmrelay.v1.ToolCallDelta tool_call = 2;
   */
  toolCall?: ToolCallDelta | undefined;

  /**
   * The next piece of the model's reasoning, never part of the text. A
   * `will_retry` with `discard_partial` discards it with the text.
   *
   * @generated from field: llmrelay.v1.ReasoningDelta reasoning = 3;
   */
  reasoning?: ReasoningDelta | undefined;

  /**
   * The next piece of a refusal (the model declined to answer: see
   * `Message.refusal`).
   *
   * @generated from field: string refusal = 4;
   */
  refusal: string;
};

/**
 * Describes the message llmrelay.v1.Delta.
 * Use `create(DeltaSchema)` to create a new message.
 */
export const DeltaSchema: GenMessage<Delta> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 20);

/**
 * ReasoningDelta is a fragment of a reasoning block. Fragments with the same
 * `index` belong to the same block; their `text`s concatenate to the
 * block's text, and `final.message.reasoning[index]` holds the whole block.
 *
 * @generated from message llmrelay.v1.ReasoningDelta
 */
export type ReasoningDelta = Message$1<"llmrelay.v1.ReasoningDelta"> & {
  /**
   * Which reasoning block of this attempt's reply the fragment belongs to,
   * from 0.
   *
   * @generated from field: uint32 index = 1;
   */
  index: number;

  /**
   * The next piece of the block's text.
   *
   * @generated from field: string text = 2;
   */
  text: string;

  /**
   * The block's signature (opaque), in one fragment, usually the block's
   * last.
   *
   * @generated from field: string signature = 3;
   */
  signature: string;

  /**
   * A redacted block's data (opaque), whole, in one fragment.
   *
   * @generated from field: string redacted = 4;
   */
  redacted: string;

  /**
   * The block's wire format (see `Reasoning.format`), in its first fragment.
   *
   * @generated from field: string format = 5;
   */
  format: string;
};

/**
 * Describes the message llmrelay.v1.ReasoningDelta.
 * Use `create(ReasoningDeltaSchema)` to create a new message.
 */
export const ReasoningDeltaSchema: GenMessage<ReasoningDelta> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 21);

/**
 * ToolCallDelta is a fragment of a tool call. Fragments with the same `index`
 * belong to the same call; `id` and `name` arrive in the first of them (a
 * provider that sends the name later holds the call back until it does),
 * and the `arguments_delta`s concatenate to the call's arguments.
 *
 * @generated from message llmrelay.v1.ToolCallDelta
 */
export type ToolCallDelta = Message$1<"llmrelay.v1.ToolCallDelta"> & {
  /**
   * Which tool call of this reply the fragment belongs to, from 0.
   *
   * @generated from field: uint32 index = 1;
   */
  index: number;

  /**
   * The call's id (first fragment only).
   *
   * @generated from field: string id = 2;
   */
  id: string;

  /**
   * The tool's name (first fragment only).
   *
   * @generated from field: string name = 3;
   */
  name: string;

  /**
   * The next piece of the JSON arguments.
   *
   * @generated from field: string arguments_delta = 4;
   */
  argumentsDelta: string;

  /**
   * The provider's signature of the call (Gemini's `thoughtSignature`), in
   * the fragment it came with: Gemini sends a call whole, its signature in
   * its first fragment. `final.message.tool_calls[].signature` has it too.
   *
   * @generated from field: string signature = 5;
   */
  signature: string;
};

/**
 * Describes the message llmrelay.v1.ToolCallDelta.
 * Use `create(ToolCallDeltaSchema)` to create a new message.
 */
export const ToolCallDeltaSchema: GenMessage<ToolCallDelta> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 22);

/**
 * WillRetry says an attempt failed and another one is coming.
 *
 * @generated from message llmrelay.v1.WillRetry
 */
export type WillRetry = Message$1<"llmrelay.v1.WillRetry"> & {
  /**
   * Why the attempt failed.
   *
   * @generated from field: llmrelay.v1.RetryReason reason = 1;
   */
  reason: RetryReason;

  /**
   * How long llmrelay waits before the next attempt: exactly the wait that
   * follows. It is the provider's retry hint when it sent one, else the
   * backoff.
   *
   * @generated from field: google.protobuf.Duration delay = 2;
   */
  delay?: Duration | undefined;

  /**
   * The number of the attempt that comes next.
   *
   * @generated from field: uint32 next_attempt = 3;
   */
  nextAttempt: number;

  /**
   * True when the failed attempt already sent deltas (text, reasoning,
   * refusal or tool-call fragments) or partial objects: the client must
   * throw them away, because the next attempt streams its reply from the
   * start.
   *
   * @generated from field: bool discard_partial = 4;
   */
  discardPartial: boolean;

  /**
   * The failure, as a status with a google.rpc.ErrorInfo (and, for
   * RETRY_REASON_INVALID_OUTPUT, a google.rpc.BadRequest with one field
   * violation per validation error, the field being the JSON pointer of the
   * offending value).
   *
   * @generated from field: google.rpc.Status cause = 5;
   */
  cause?: Status | undefined;

  /**
   * The configured provider the next attempt goes to, e.g. "openai".
   *
   * @generated from field: string next_provider = 6;
   */
  nextProvider: string;

  /**
   * The model the next attempt asks that provider for, as the provider
   * names it, e.g. "gpt-4.1".
   *
   * @generated from field: string next_model = 7;
   */
  nextModel: string;

  /**
   * True when the next attempt goes to another target than the failed one:
   * the call falls back (to the next target of its route, or to
   * `fallback_models`). The failed target will not be tried again in this
   * call.
   *
   * @generated from field: bool fallback = 8;
   */
  fallback: boolean;
};

/**
 * Describes the message llmrelay.v1.WillRetry.
 * Use `create(WillRetrySchema)` to create a new message.
 */
export const WillRetrySchema: GenMessage<WillRetry> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 23);

/**
 * Final is the outcome of a successful call.
 *
 * @generated from message llmrelay.v1.Final
 */
export type Final = Message$1<"llmrelay.v1.Final"> & {
  /**
   * The assistant message of the successful attempt only: its full text,
   * its reasoning blocks with their signatures, its complete tool calls
   * (with their signatures) and its refusal. Output of failed attempts
   * never appears here. Send it back as it is in the next turn.
   *
   * @generated from field: llmrelay.v1.Message message = 1;
   */
  message?: Message | undefined;

  /**
   * Structured output: the reply parsed as JSON, conforming to
   * `response_format.json_schema`. Unset without `response_format`, with
   * ON_INVALID_RETURN_TEXT when the reply stayed invalid, and when the model
   * refused (FINISH_REASON_REFUSAL: a refusal is not re-asked).
   *
   * @generated from field: google.protobuf.Value object = 2;
   */
  object?: Value | undefined;

  /**
   * Why the model stopped.
   *
   * @generated from field: llmrelay.v1.FinishReason finish_reason = 3;
   */
  finishReason: FinishReason;

  /**
   * Tokens used, summed over every attempt of the call (failed ones and
   * cancelled hedges included, as far as the provider reported them).
   *
   * @generated from field: llmrelay.v1.Usage usage = 4;
   */
  usage?: Usage | undefined;

  /**
   * How many attempts the call took, the successful one included, and the
   * hedges that ran beside them (see `hedges`).
   *
   * @generated from field: uint32 attempts = 5;
   */
  attempts: number;

  /**
   * How many times the model was re-asked because its structured output was
   * invalid. Counted apart from transport retries, but included in `attempts`.
   *
   * @generated from field: uint32 validation_retries = 6;
   */
  validationRetries: number;

  /**
   * Every validation error seen on the way, across all attempts.
   *
   * @generated from field: repeated llmrelay.v1.ValidationError validation_errors = 7;
   */
  validationErrors: ValidationError[];

  /**
   * The provider that served the reply, e.g. "openai".
   *
   * @generated from field: string provider = 8;
   */
  provider: string;

  /**
   * The model that served the reply, as the provider named it.
   *
   * @generated from field: string model = 9;
   */
  model: string;

  /**
   * How many of `attempts` were hedges: attempts started beside a slower
   * one (see HedgePolicy), whether they won, lost or failed. 0 without
   * hedging.
   *
   * @generated from field: uint32 hedges = 10;
   */
  hedges: number;

  /**
   * The route the call named as its `model`, e.g. "smart"; empty when it
   * named "<provider>/<model>".
   *
   * @generated from field: string route = 13;
   */
  route: string;

  /**
   * Labels the server attached to the call once it succeeded; empty when
   * none applies. The same labels are written to the call's log line. The
   * server's own keys:
   *
   * - "route.defaults": the route's defaults that applied, comma-separated
   *   (e.g. "messages,generation.max_output_tokens").
   * - "reasoning.dropped": the formats of the reasoning in `messages` that
   *   the answering provider cannot take and was not sent, comma-separated
   *   (e.g. "anthropic,gemini"; a tool call's `signature` counts as
   *   "gemini", a block without a `format` as "unknown"), as when a route
   *   falls back or hedges to another provider kind. Set only when
   *   something was left out.
   *
   * Hooks built into the server may add their own.
   *
   * @generated from field: map<string, string> annotations = 14;
   */
  annotations: { [key: string]: string };

  /**
   * With `server_tools`: every message the call added to the conversation,
   * in order: each turn's assistant message (with its tool calls and
   * reasoning) followed by the ROLE_TOOL results of the server tools it
   * called (`Message.server_tool` names the tool), and last the final
   * turn's message (`message`). Send the request's `messages` followed by
   * the transcript (and, after FINISH_REASON_TOOL_CALLS, the results of
   * the client's own tool calls) to continue the conversation. Only the
   * successful attempt of each turn appears. Empty without server tools:
   * `message` is then the whole reply.
   *
   * @generated from field: repeated llmrelay.v1.Message transcript = 20;
   */
  transcript: Message[];

  /**
   * How many model turns the call made: 1 without server tools; with
   * them, one more for every turn whose server tool calls were run.
   *
   * @generated from field: uint32 turns = 21;
   */
  turns: number;

  /**
   * The stop sequence that ended the reply: one of the request's
   * `generation.stop`, exactly as the request wrote it. Set only with
   * FINISH_REASON_STOP, and only when the provider said which sequence
   * matched: Anthropic does (its `stop_sequence` stop reason), and so do
   * OpenAI-compatible servers that add `stop_reason` to a choice (vLLM,
   * TensorRT-LLM) when it names one of the request's sequences. OpenAI and
   * Gemini do not say, so behind them it stays empty even when a stop
   * sequence ended the reply. Empty otherwise: the model finished on its
   * own, stopped for another reason, or the provider named a sequence the
   * request did not ask for (a stop token of the server's own).
   * FINISH_REASON_STOP covers both cases; tell them apart with this field.
   *
   * @generated from field: string stop_sequence = 22;
   */
  stopSequence: string;
};

/**
 * Describes the message llmrelay.v1.Final.
 * Use `create(FinalSchema)` to create a new message.
 */
export const FinalSchema: GenMessage<Final> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 24);

/**
 * Usage counts tokens, the same way for every provider (docs/providers.md
 * says how each provider's own counts map onto these). A count a provider
 * reports outside 0..4,294,967,295 for one attempt (a negative one, say)
 * is taken as the nearer bound, here and in budgets and metrics, and the
 * server logs it.
 *
 * @generated from message llmrelay.v1.Usage
 */
export type Usage = Message$1<"llmrelay.v1.Usage"> & {
  /**
   * Tokens in the prompt, those read from or written to the provider's
   * prompt cache included.
   *
   * @generated from field: uint64 input_tokens = 1;
   */
  inputTokens: bigint;

  /**
   * Tokens the model produced, reasoning tokens included: where a provider
   * counts reasoning apart from its output (Gemini, xAI), llmrelay adds it.
   *
   * @generated from field: uint64 output_tokens = 2;
   */
  outputTokens: bigint;

  /**
   * Of `output_tokens`, the model's reasoning ("thinking") tokens, where the
   * provider reports them.
   *
   * @generated from field: uint64 reasoning_tokens = 3;
   */
  reasoningTokens: bigint;

  /**
   * Of `input_tokens`, those read from the provider's prompt cache (cache
   * hits, billed at a discount), where the provider reports them.
   *
   * @generated from field: uint64 cached_input_tokens = 4;
   */
  cachedInputTokens: bigint;

  /**
   * Of `input_tokens`, those written to the provider's prompt cache
   * (Anthropic bills cache writes at a premium), where the provider reports
   * them.
   *
   * @generated from field: uint64 cache_creation_input_tokens = 5;
   */
  cacheCreationInputTokens: bigint;
};

/**
 * Describes the message llmrelay.v1.Usage.
 * Use `create(UsageSchema)` to create a new message.
 */
export const UsageSchema: GenMessage<Usage> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 25);

/**
 * ValidationError is one way a structured-output reply failed its schema.
 *
 * @generated from message llmrelay.v1.ValidationError
 */
export type ValidationError = Message$1<"llmrelay.v1.ValidationError"> & {
  /**
   * The attempt whose reply failed.
   *
   * @generated from field: uint32 attempt = 1;
   */
  attempt: number;

  /**
   * A JSON pointer to the offending value in the reply ("" is the whole
   * reply), e.g. "/score".
   *
   * @generated from field: string instance_location = 2;
   */
  instanceLocation: string;

  /**
   * A JSON pointer to the schema keyword that failed, e.g.
   * "/properties/score/type". Empty when the reply was not JSON at all.
   *
   * @generated from field: string keyword_location = 3;
   */
  keywordLocation: string;

  /**
   * What is wrong, e.g. "got string, want number".
   *
   * @generated from field: string message = 4;
   */
  message: string;
};

/**
 * Describes the message llmrelay.v1.ValidationError.
 * Use `create(ValidationErrorSchema)` to create a new message.
 */
export const ValidationErrorSchema: GenMessage<ValidationError> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 26);

/**
 * ListModelsRequest asks which models the caller may use.
 *
 * @generated from message llmrelay.v1.ListModelsRequest
 */
export type ListModelsRequest = Message$1<"llmrelay.v1.ListModelsRequest"> & {
  /**
   * Only list this provider's models, and no routes. Empty lists every
   * provider's models and every route.
   *
   * @generated from field: string provider = 1;
   */
  provider: string;
};

/**
 * Describes the message llmrelay.v1.ListModelsRequest.
 * Use `create(ListModelsRequestSchema)` to create a new message.
 */
export const ListModelsRequestSchema: GenMessage<ListModelsRequest> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 27);

/**
 * ListModelsResponse lists models.
 *
 * @generated from message llmrelay.v1.ListModelsResponse
 */
export type ListModelsResponse = Message$1<"llmrelay.v1.ListModelsResponse"> & {
  /**
   * The models, sorted by `id`. Each `id` can be called.
   *
   * @generated from field: repeated llmrelay.v1.Model models = 1;
   */
  models: Model[];

  /**
   * The providers that accept any model name, sorted by `provider`: those
   * whose configuration lists no models (`providers[].models` empty), so
   * `models` lists none of theirs. Call one as "<provider>/<model>" with a
   * model name of the provider's own, e.g. "openai/gpt-4.1". With an API
   * key, only the providers the key's `models` patterns may match a model
   * of (`key_patterns` says which); with `ListModelsRequest.provider`, that
   * provider only.
   *
   * @generated from field: repeated llmrelay.v1.AnyModelProvider any_model_providers = 2;
   */
  anyModelProviders: AnyModelProvider[];
};

/**
 * Describes the message llmrelay.v1.ListModelsResponse.
 * Use `create(ListModelsResponseSchema)` to create a new message.
 */
export const ListModelsResponseSchema: GenMessage<ListModelsResponse> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 28);

/**
 * AnyModelProvider is a provider that accepts any model name: the server
 * passes the name on, and the provider answers whether it has the model.
 *
 * @generated from message llmrelay.v1.AnyModelProvider
 */
export type AnyModelProvider = Message$1<"llmrelay.v1.AnyModelProvider"> & {
  /**
   * The provider's configured name, e.g. "openai": the part of
   * `GenerateRequest.model` before the first "/".
   *
   * @generated from field: string provider = 1;
   */
  provider: string;

  /**
   * The provider's kind: "openai", "anthropic" or "gemini".
   *
   * @generated from field: string provider_kind = 2;
   */
  providerKind: string;

  /**
   * The caller's API key's `models` patterns that may match a model of this
   * provider, as the key writes them, e.g. "openai/gpt-4*" or "*": the key
   * may call the names they match, and no others. Empty when the server has
   * no API keys configured, and any model name may be called.
   *
   * @generated from field: repeated string key_patterns = 3;
   */
  keyPatterns: string[];
};

/**
 * Describes the message llmrelay.v1.AnyModelProvider.
 * Use `create(AnyModelProviderSchema)` to create a new message.
 */
export const AnyModelProviderSchema: GenMessage<AnyModelProvider> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 29);

/**
 * Model is a model llmrelay can route to: a provider's model, or a route.
 *
 * @generated from message llmrelay.v1.Model
 */
export type Model = Message$1<"llmrelay.v1.Model"> & {
  /**
   * The value for `GenerateRequest.model`, e.g. "mock/echo" or "smart".
   *
   * @generated from field: string id = 1;
   */
  id: string;

  /**
   * The provider's configured name, e.g. "mock"; empty for a route.
   *
   * @generated from field: string provider = 2;
   */
  provider: string;

  /**
   * The provider's kind: "mock", "openai", "anthropic" or "gemini"; empty
   * for a route.
   *
   * @generated from field: string provider_kind = 3;
   */
  providerKind: string;

  /**
   * The model's name at the provider, e.g. "echo"; for a route, its name.
   *
   * @generated from field: string name = 4;
   */
  name: string;

  /**
   * Whether this is a provider's model or a route.
   *
   * @generated from field: llmrelay.v1.ModelKind kind = 5;
   */
  kind: ModelKind;

  /**
   * For a route: its targets, in its fallback order (for a weighted route,
   * in configuration order; each call picks its own order by weight).
   *
   * @generated from field: repeated llmrelay.v1.RouteTarget targets = 6;
   */
  targets: RouteTarget[];

  /**
   * For a route: how it orders its targets for each call.
   *
   * @generated from field: llmrelay.v1.RouteBalance balance = 7;
   */
  balance: RouteBalance;

  /**
   * For a provider's model that a route uses as a target: its health. Unset
   * for models no route uses, whose health is not tracked.
   *
   * @generated from field: llmrelay.v1.TargetHealth health = 8;
   */
  health?: TargetHealth | undefined;
};

/**
 * Describes the message llmrelay.v1.Model.
 * Use `create(ModelSchema)` to create a new message.
 */
export const ModelSchema: GenMessage<Model> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 30);

/**
 * RouteTarget is one target of a route.
 *
 * @generated from message llmrelay.v1.RouteTarget
 */
export type RouteTarget = Message$1<"llmrelay.v1.RouteTarget"> & {
  /**
   * The target as "<provider>/<model>", e.g. "openai/gpt-4.1".
   *
   * @generated from field: string model = 1;
   */
  model: string;

  /**
   * The provider's configured name, e.g. "openai".
   *
   * @generated from field: string provider = 2;
   */
  provider: string;

  /**
   * The model's name at the provider, e.g. "gpt-4.1".
   *
   * @generated from field: string name = 3;
   */
  name: string;

  /**
   * Its weight in a weighted route (1 when the config leaves it unset).
   *
   * @generated from field: uint32 weight = 4;
   */
  weight: number;

  /**
   * Its health.
   *
   * @generated from field: llmrelay.v1.TargetHealth health = 5;
   */
  health?: TargetHealth | undefined;
};

/**
 * Describes the message llmrelay.v1.RouteTarget.
 * Use `create(RouteTargetSchema)` to create a new message.
 */
export const RouteTargetSchema: GenMessage<RouteTarget> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 31);

/**
 * TargetHealth is a route target's health, by outlier detection: a target
 * whose attempts fail several times in a row (for reasons that are the
 * target's, not the request's) is ejected, taken out of rotation, for an
 * interval that grows with each ejection in a row; one successful attempt
 * restores it. Routes skip ejected targets, unless all are ejected.
 *
 * @generated from message llmrelay.v1.TargetHealth
 */
export type TargetHealth = Message$1<"llmrelay.v1.TargetHealth"> & {
  /**
   * Whether the target is ejected now.
   *
   * @generated from field: bool ejected = 1;
   */
  ejected: boolean;

  /**
   * When the current ejection ends; unset when not ejected.
   *
   * @generated from field: google.protobuf.Timestamp ejected_until = 2;
   */
  ejectedUntil?: Timestamp | undefined;

  /**
   * Attempts that failed in a row since the last success or ejection.
   *
   * @generated from field: uint32 consecutive_failures = 3;
   */
  consecutiveFailures: number;

  /**
   * Ejections in a row since the last success; the next ejection lasts
   * longer with each.
   *
   * @generated from field: uint32 ejections = 4;
   */
  ejections: number;
};

/**
 * Describes the message llmrelay.v1.TargetHealth.
 * Use `create(TargetHealthSchema)` to create a new message.
 */
export const TargetHealthSchema: GenMessage<TargetHealth> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 32);

/**
 * ListToolsRequest asks which server tools the caller may use.
 *
 * @generated from message llmrelay.v1.ListToolsRequest
 */
export type ListToolsRequest = Message$1<"llmrelay.v1.ListToolsRequest"> & {
  /**
   * Only list this MCP server's tools (its configured name). Empty lists
   * every server's.
   *
   * @generated from field: string server = 1;
   */
  server: string;
};

/**
 * Describes the message llmrelay.v1.ListToolsRequest.
 * Use `create(ListToolsRequestSchema)` to create a new message.
 */
export const ListToolsRequestSchema: GenMessage<ListToolsRequest> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 33);

/**
 * ListToolsResponse lists server tools and their MCP servers.
 *
 * @generated from message llmrelay.v1.ListToolsResponse
 */
export type ListToolsResponse = Message$1<"llmrelay.v1.ListToolsResponse"> & {
  /**
   * The tools the caller may use, sorted by `name`, the tools of servers
   * that are not answering included (`available: false`).
   *
   * @generated from field: repeated llmrelay.v1.ServerTool tools = 1;
   */
  tools: ServerTool[];

  /**
   * The MCP servers of the server's config that the caller may use a tool
   * of (of `server` only, when the request names one), sorted by `name`. A
   * server that never answered, so has no tools listed, is included when
   * the key's `tools` patterns may cover a tool of it. Without API keys
   * configured, every MCP server.
   *
   * @generated from field: repeated llmrelay.v1.ToolServer servers = 2;
   */
  servers: ToolServer[];
};

/**
 * Describes the message llmrelay.v1.ListToolsResponse.
 * Use `create(ListToolsResponseSchema)` to create a new message.
 */
export const ListToolsResponseSchema: GenMessage<ListToolsResponse> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 34);

/**
 * ServerTool is a tool of an MCP server that llmrelay runs for the model
 * (`GenerateRequest.server_tools`).
 *
 * @generated from message llmrelay.v1.ServerTool
 */
export type ServerTool = Message$1<"llmrelay.v1.ServerTool"> & {
  /**
   * The tool's name as requests and API keys write it: "<server>/<tool>",
   * e.g. "everything/echo".
   *
   * @generated from field: string name = 1;
   */
  name: string;

  /**
   * The MCP server it belongs to, as the config names it.
   *
   * @generated from field: string server = 2;
   */
  server: string;

  /**
   * The name the model sees and calls it by (see
   * `GenerateRequest.server_tools`), e.g. "everything__echo".
   *
   * @generated from field: string model_name = 3;
   */
  modelName: string;

  /**
   * The tool's title, when its server gives one.
   *
   * @generated from field: string title = 4;
   */
  title: string;

  /**
   * What the tool does, as its server describes it; the model reads this.
   *
   * @generated from field: string description = 5;
   */
  description: string;

  /**
   * The JSON Schema of the tool's arguments, as its server gives it.
   *
   * @generated from field: google.protobuf.Struct input_schema = 6;
   */
  inputSchema?: JsonObject | undefined;

  /**
   * Whether the tool's server answers right now. A tool of a server that
   * is down cannot be offered to a model until the server answers again
   * (llmrelay keeps trying to reach it).
   *
   * @generated from field: bool available = 7;
   */
  available: boolean;

  /**
   * Whether llmrelay calls the tool again when its server fails or times
   * out during a call: the server's annotations say it is idempotent
   * (`idempotentHint`), or the config marks it so (`idempotent`).
   *
   * @generated from field: bool idempotent = 8;
   */
  idempotent: boolean;
};

/**
 * Describes the message llmrelay.v1.ServerTool.
 * Use `create(ServerToolSchema)` to create a new message.
 */
export const ServerToolSchema: GenMessage<ServerTool> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 35);

/**
 * ToolServer is an MCP server of the server's config.
 *
 * @generated from message llmrelay.v1.ToolServer
 */
export type ToolServer = Message$1<"llmrelay.v1.ToolServer"> & {
  /**
   * The server's name in the config: the "<server>" of its tools' names.
   *
   * @generated from field: string name = 1;
   */
  name: string;

  /**
   * Whether the server answers: llmrelay is connected to it and has listed
   * its tools.
   *
   * @generated from field: bool available = 2;
   */
  available: boolean;

  /**
   * When llmrelay last listed the server's tools; unset if it never did.
   *
   * @generated from field: google.protobuf.Timestamp listed_at = 3;
   */
  listedAt?: Timestamp | undefined;

  /**
   * How many of the tools llmrelay offers from the server (its `allow`
   * patterns applied) the caller may use: the server's tools in `tools`.
   *
   * @generated from field: uint32 tools = 4;
   */
  tools: number;
};

/**
 * Describes the message llmrelay.v1.ToolServer.
 * Use `create(ToolServerSchema)` to create a new message.
 */
export const ToolServerSchema: GenMessage<ToolServer> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 36);

/**
 * EmbedRequest asks for the embeddings of some texts.
 *
 * @generated from message llmrelay.v1.EmbedRequest
 */
export type EmbedRequest = Message$1<"llmrelay.v1.EmbedRequest"> & {
  /**
   * The model: a route's name, or "<provider>/<model>", resolved as
   * `GenerateRequest.model` is, with the same rules (e.g.
   * "openai/text-embedding-3-small", "gemini/gemini-embedding-001",
   * "mock/echo": the mock provider embeds with any of its models). A
   * route's targets are tried in its order; its request defaults, which
   * are generation settings, do not apply. Every target of a route must be
   * a provider that embeds.
   *
   * @generated from field: string model = 1;
   */
  model: string;

  /**
   * The texts to embed, each one embedding, returned in this order. At
   * least 1 and at most 2048 (OpenAI's bound), each 1 to 65,536 bytes of
   * UTF-8 (a model's own context bound, often 8,192 tokens, may be lower:
   * the provider then rejects the request). The request as a whole is
   * bounded by the server's `limits.max_request_bytes`.
   *
   * @generated from field: repeated string inputs = 2;
   */
  inputs: string[];

  /**
   * The length of each vector, for models that can shorten theirs
   * (OpenAI's text-embedding-3 models, Gemini's outputDimensionality).
   * Unset takes the model's own length. A model that cannot shorten its
   * vectors, or not to this length, rejects the request
   * (PROVIDER_REJECTED). The mock provider makes vectors of this length,
   * 8 when unset. At most 65,536.
   *
   * @generated from field: optional uint32 dimensions = 3;
   */
  dimensions?: number | undefined;

  /**
   * A client-chosen UUID that identifies this call in llmrelay's logs and
   * errors. When empty, llmrelay makes one up.
   *
   * @generated from field: string request_id = 4;
   */
  requestId: string;

  /**
   * Free-form labels, written to the call's "finished call" log line as
   * `GenerateRequest.metadata`'s are, with the same bounds. Not sent to
   * the provider.
   *
   * @generated from field: map<string, string> metadata = 5;
   */
  metadata: { [key: string]: string };

  /**
   * Options for the provider, checked before the first attempt against
   * the operator's policy for the provider, as
   * `GenerateRequest.provider_options` are. For openai each top-level key
   * is merged into the body of the request (e.g. {"user": "u-42"}); for
   * gemini into each entry of the batch's `requests` (e.g. {"taskType":
   * "RETRIEVAL_DOCUMENT"}). A key llmrelay sets itself (openai: model,
   * input, dimensions, encoding_format; gemini: model, content,
   * outputDimensionality) is refused with INVALID_ARGUMENT, reason
   * INVALID_PROVIDER_OPTIONS, naming it. The mock provider
   * reads `faults`, where only the entries' `status`, `retry_after_ms`,
   * `error_type` and `should_retry` apply (an attempt fails with that
   * status); `extra_headers` adds HTTP headers as for Generate.
   *
   * @generated from field: google.protobuf.Struct provider_options = 6;
   */
  providerOptions?: JsonObject | undefined;
};

/**
 * Describes the message llmrelay.v1.EmbedRequest.
 * Use `create(EmbedRequestSchema)` to create a new message.
 */
export const EmbedRequestSchema: GenMessage<EmbedRequest> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 37);

/**
 * EmbedResponse holds one embedding per input.
 *
 * @generated from message llmrelay.v1.EmbedResponse
 */
export type EmbedResponse = Message$1<"llmrelay.v1.EmbedResponse"> & {
  /**
   * The embeddings, one per `EmbedRequest.inputs` entry, in the same
   * order: `embeddings[i]` is the embedding of `inputs[i]`.
   *
   * @generated from field: repeated llmrelay.v1.Embedding embeddings = 1;
   */
  embeddings: Embedding[];

  /**
   * The provider's configured name that served the request, e.g. "openai".
   *
   * @generated from field: string provider = 2;
   */
  provider: string;

  /**
   * The model at that provider, e.g. "text-embedding-3-small". With a
   * route, the target that answered (after a fallback, not the first).
   *
   * @generated from field: string model = 3;
   */
  model: string;

  /**
   * The route the request named as its `model`; empty when it named
   * "<provider>/<model>".
   *
   * @generated from field: string route = 4;
   */
  route: string;

  /**
   * The tokens the provider counted, in `input_tokens` only (embedding
   * produces no output tokens). Zero when the provider does not report
   * them (Gemini's batchEmbedContents does not): budgets then charge an
   * estimate from the inputs' size (docs/embeddings.md).
   *
   * @generated from field: llmrelay.v1.Usage usage = 5;
   */
  usage?: Usage | undefined;

  /**
   * How many attempts the call made (1 unless it retried or fell back).
   *
   * @generated from field: uint32 attempts = 6;
   */
  attempts: number;
};

/**
 * Describes the message llmrelay.v1.EmbedResponse.
 * Use `create(EmbedResponseSchema)` to create a new message.
 */
export const EmbedResponseSchema: GenMessage<EmbedResponse> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 38);

/**
 * Embedding is the vector of one input.
 *
 * @generated from message llmrelay.v1.Embedding
 */
export type Embedding = Message$1<"llmrelay.v1.Embedding"> & {
  /**
   * The vector, as the provider computed it (OpenAI's and Gemini's are
   * unit length; the mock's too). Every embedding of a response has the
   * same length: `EmbedRequest.dimensions`, or the model's own.
   *
   * @generated from field: repeated float values = 1;
   */
  values: number[];
};

/**
 * Describes the message llmrelay.v1.Embedding.
 * Use `create(EmbeddingSchema)` to create a new message.
 */
export const EmbeddingSchema: GenMessage<Embedding> = /*@__PURE__*/
  messageDesc(file_llmrelay_v1_llmrelay, 39);

/**
 * OnOutputLimit says what happens when a reply reaches its output limit.
 *
 * @generated from enum llmrelay.v1.OnOutputLimit
 */
export enum OnOutputLimit {
  /**
   * Same as ON_OUTPUT_LIMIT_FAIL.
   *
   * @generated from enum value: ON_OUTPUT_LIMIT_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * End the call with RESOURCE_EXHAUSTED, ErrorInfo reason
   * OUTPUT_TOO_LARGE (metadata `max_output_bytes`, `provider`,
   * `attempts`), without a `final`. What the attempt streamed before the
   * limit was sent as deltas.
   *
   * @generated from enum value: ON_OUTPUT_LIMIT_FAIL = 1;
   */
  FAIL = 1,

  /**
   * End the call with a `final` whose message holds the reply up to the
   * limit (the last delta cut on a character boundary, so a tool call's
   * arguments, a refusal or reasoning text may be cut too; an opaque value
   * that does not fit whole, such as a signature, a redacted reasoning
   * block or a tool call's id or name, is left out) and whose
   * `finish_reason` is FINISH_REASON_LENGTH. Not allowed with
   * `response_format`, whose object could never conform once cut:
   * INVALID_ARGUMENT.
   *
   * @generated from enum value: ON_OUTPUT_LIMIT_TRUNCATE = 2;
   */
  TRUNCATE = 2,
}

/**
 * Describes the enum llmrelay.v1.OnOutputLimit.
 */
export const OnOutputLimitSchema: GenEnum<OnOutputLimit> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 0);

/**
 * ImageDetail is how closely the model looks at an image (OpenAI's
 * `detail`). The openai adapter sends it as OpenAI's `detail` ("low",
 * "high", "auto", "original"); OpenAI-compatible servers that do not know
 * a value answer as they do (a 400 is INVALID_ARGUMENT, not retried).
 * Anthropic and Gemini have no such setting: their adapters leave it
 * out, whatever its value, and the provider scales the image by its own
 * rules. An estimate of a request's input tokens (for budgets, and the
 * usage of an attempt whose provider reported none) counts every image
 * as 1,600 tokens whatever its detail; the provider's own count replaces
 * the estimate where it reports one.
 *
 * @generated from enum llmrelay.v1.ImageDetail
 */
export enum ImageDetail {
  /**
   * The provider's default: nothing is sent.
   *
   * @generated from enum value: IMAGE_DETAIL_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * Low resolution: fewer input tokens, fast.
   *
   * @generated from enum value: IMAGE_DETAIL_LOW = 1;
   */
  LOW = 1,

  /**
   * High resolution: finer detail, more input tokens.
   *
   * @generated from enum value: IMAGE_DETAIL_HIGH = 2;
   */
  HIGH = 2,

  /**
   * The provider chooses (OpenAI's "auto").
   *
   * @generated from enum value: IMAGE_DETAIL_AUTO = 3;
   */
  AUTO = 3,

  /**
   * The image at its original resolution, not scaled down as "high"
   * scales it: the finest detail (small or handwritten text, dense
   * scans) and the most input tokens (OpenAI's "original", which not
   * every OpenAI model supports: see OpenAI's vision guide).
   * Anthropic and Gemini leave it out, as every detail: the image goes
   * as it is and the provider scales it as it always does.
   *
   * @generated from enum value: IMAGE_DETAIL_ORIGINAL = 4;
   */
  ORIGINAL = 4,
}

/**
 * Describes the enum llmrelay.v1.ImageDetail.
 */
export const ImageDetailSchema: GenEnum<ImageDetail> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 1);

/**
 * Role says who wrote a message.
 *
 * @generated from enum llmrelay.v1.Role
 */
export enum Role {
  /**
   * Not allowed: every message must have a role.
   *
   * @generated from enum value: ROLE_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * Instructions for the model. Providers that keep system text outside the
   * conversation (Anthropic, Gemini) receive all system messages joined.
   *
   * @generated from enum value: ROLE_SYSTEM = 1;
   */
  SYSTEM = 1,

  /**
   * The end user.
   *
   * @generated from enum value: ROLE_USER = 2;
   */
  USER = 2,

  /**
   * The model.
   *
   * @generated from enum value: ROLE_ASSISTANT = 3;
   */
  ASSISTANT = 3,

  /**
   * The result of a tool call; set `tool_call_id`.
   *
   * @generated from enum value: ROLE_TOOL = 4;
   */
  TOOL = 4,
}

/**
 * Describes the enum llmrelay.v1.Role.
 */
export const RoleSchema: GenEnum<Role> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 2);

/**
 * ToolChoiceMode says whether the model must call a tool.
 *
 * @generated from enum llmrelay.v1.ToolChoiceMode
 */
export enum ToolChoiceMode {
  /**
   * Same as TOOL_CHOICE_MODE_AUTO.
   *
   * @generated from enum value: TOOL_CHOICE_MODE_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * The model decides.
   *
   * @generated from enum value: TOOL_CHOICE_MODE_AUTO = 1;
   */
  AUTO = 1,

  /**
   * The model must not call a tool.
   *
   * @generated from enum value: TOOL_CHOICE_MODE_NONE = 2;
   */
  NONE = 2,

  /**
   * The model must call some tool: the request offers at least one
   * (`tools` or `server_tools`), or it is INVALID_ARGUMENT (INVALID_REQUEST).
   *
   * @generated from enum value: TOOL_CHOICE_MODE_REQUIRED = 3;
   */
  REQUIRED = 3,

  /**
   * The model must call the tool named in `ToolChoice.name`.
   *
   * @generated from enum value: TOOL_CHOICE_MODE_TOOL = 4;
   */
  TOOL = 4,
}

/**
 * Describes the enum llmrelay.v1.ToolChoiceMode.
 */
export const ToolChoiceModeSchema: GenEnum<ToolChoiceMode> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 3);

/**
 * OnInvalid says what happens when structured output stays invalid.
 *
 * @generated from enum llmrelay.v1.OnInvalid
 */
export enum OnInvalid {
  /**
   * Same as ON_INVALID_FAIL.
   *
   * @generated from enum value: ON_INVALID_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * End the call with ABORTED, ErrorInfo reason OUTPUT_VALIDATION_FAILED and
   * a google.rpc.BadRequest listing the violations.
   *
   * @generated from enum value: ON_INVALID_FAIL = 1;
   */
  FAIL = 1,

  /**
   * End with a `final` whose message holds the last reply's text, with
   * `object` unset and `validation_errors` filled.
   *
   * @generated from enum value: ON_INVALID_RETURN_TEXT = 2;
   */
  RETURN_TEXT = 2,
}

/**
 * Describes the enum llmrelay.v1.OnInvalid.
 */
export const OnInvalidSchema: GenEnum<OnInvalid> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 4);

/**
 * Midstream says what happens when an attempt fails after it streamed deltas.
 *
 * @generated from enum llmrelay.v1.Midstream
 */
export enum Midstream {
  /**
   * Same as MIDSTREAM_RESTART.
   *
   * @generated from enum value: MIDSTREAM_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * Send a `will_retry` with `discard_partial` set and stream the next attempt
   * from its start. The client must drop what the failed attempt showed.
   *
   * @generated from enum value: MIDSTREAM_RESTART = 1;
   */
  RESTART = 1,

  /**
   * End the call with the error: output that was shown is never replaced.
   *
   * @generated from enum value: MIDSTREAM_FAIL = 2;
   */
  FAIL = 2,
}

/**
 * Describes the enum llmrelay.v1.Midstream.
 */
export const MidstreamSchema: GenEnum<Midstream> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 5);

/**
 * HedgeTarget says where an attempt's hedges go.
 *
 * @generated from enum llmrelay.v1.HedgeTarget
 */
export enum HedgeTarget {
  /**
   * Same as HEDGE_TARGET_SAME.
   *
   * @generated from enum value: HEDGE_TARGET_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * To the target (provider and model) of the attempt they race.
   *
   * @generated from enum value: HEDGE_TARGET_SAME = 1;
   */
  SAME = 1,

  /**
   * To the call's next targets (its route's next target, then its
   * `fallback_models`): the first hedge to the target after the attempt's,
   * the second to the one after that; to the attempt's own target when
   * there is none. A hedge that wins moves the call to its target, as a
   * fallback would (`final.provider` and `final.model` name it).
   *
   * @generated from enum value: HEDGE_TARGET_NEXT = 2;
   */
  NEXT = 2,
}

/**
 * Describes the enum llmrelay.v1.HedgeTarget.
 */
export const HedgeTargetSchema: GenEnum<HedgeTarget> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 6);

/**
 * RetryReason says why an attempt failed.
 *
 * @generated from enum llmrelay.v1.RetryReason
 */
export enum RetryReason {
  /**
   * Not used.
   *
   * @generated from enum value: RETRY_REASON_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * The provider rate-limited the request (HTTP 429).
   *
   * @generated from enum value: RETRY_REASON_RATE_LIMITED = 1;
   */
  RATE_LIMITED = 1,

  /**
   * The provider is overloaded (HTTP 503, 529, or an in-stream overloaded error).
   *
   * @generated from enum value: RETRY_REASON_OVERLOADED = 2;
   */
  OVERLOADED = 2,

  /**
   * The provider failed (HTTP 500, 502, 504, other 5xx, 408, 409, or an
   * in-stream server error).
   *
   * @generated from enum value: RETRY_REASON_SERVER_ERROR = 3;
   */
  SERVER_ERROR = 3,

  /**
   * The connection failed or dropped, the provider's stream was cut in the
   * middle of an event, or it ended without its terminator. (A complete
   * event that does not decode is not retried on the same target, which
   * would send the same: the call falls back to its next target, if any,
   * with RETRY_REASON_TARGET_REFUSED, else fails with UNKNOWN, reason
   * PROVIDER_PROTOCOL_ERROR.)
   *
   * @generated from enum value: RETRY_REASON_TRANSPORT = 4;
   */
  TRANSPORT = 4,

  /**
   * The provider sent nothing for `first_event_timeout` before its first
   * byte, or showed no sign of life for `stream_idle_timeout` once
   * streaming.
   *
   * @generated from enum value: RETRY_REASON_STALLED = 5;
   */
  STALLED = 5,

  /**
   * The model's output was invalid. Structured output that did not parse
   * or did not conform to the schema: the model is asked again with the
   * validation errors. A tool call the provider refused as malformed
   * (Groq's `tool_use_failed`): the same request is tried again, once per
   * call (docs/providers.md says why).
   *
   * @generated from enum value: RETRY_REASON_INVALID_OUTPUT = 6;
   */
  INVALID_OUTPUT = 6,

  /**
   * The target cannot serve the call and retrying it would not change
   * that: its quota or spend limit is used up, it does not know the model
   * (HTTP 404), it refused llmrelay's credentials (401/403), its stream
   * does not decode (PROVIDER_PROTOCOL_ERROR), or the request is longer
   * than its model's context window (PROVIDER_CONTEXT_LENGTH_EXCEEDED, the
   * reason when no target can take it). Only sent when the call falls back
   * to another target (`fallback`).
   *
   * @generated from enum value: RETRY_REASON_TARGET_REFUSED = 9;
   */
  TARGET_REFUSED = 9,
}

/**
 * Describes the enum llmrelay.v1.RetryReason.
 */
export const RetryReasonSchema: GenEnum<RetryReason> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 7);

/**
 * FinishReason says why the model stopped.
 *
 * @generated from enum llmrelay.v1.FinishReason
 */
export enum FinishReason {
  /**
   * The provider did not say.
   *
   * @generated from enum value: FINISH_REASON_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * The model finished its reply, or hit a stop sequence
   * (`Final.stop_sequence` says which, when the provider reports it).
   *
   * @generated from enum value: FINISH_REASON_STOP = 1;
   */
  STOP = 1,

  /**
   * The reply hit `max_output_tokens`, or llmrelay cut it at
   * `output_limit.max_bytes` (ON_OUTPUT_LIMIT_TRUNCATE).
   *
   * @generated from enum value: FINISH_REASON_LENGTH = 2;
   */
  LENGTH = 2,

  /**
   * The model called one or more tools.
   *
   * @generated from enum value: FINISH_REASON_TOOL_CALLS = 3;
   */
  TOOL_CALLS = 3,

  /**
   * The provider's content filter stopped the reply.
   *
   * @generated from enum value: FINISH_REASON_CONTENT_FILTER = 4;
   */
  CONTENT_FILTER = 4,

  /**
   * Any other reason the provider gave.
   *
   * @generated from enum value: FINISH_REASON_OTHER = 5;
   */
  OTHER = 5,

  /**
   * The model declined to answer: `message.refusal` says why when the
   * provider sent a refusal (OpenAI), and Anthropic's `refusal` stop reason
   * is reported so.
   *
   * @generated from enum value: FINISH_REASON_REFUSAL = 6;
   */
  REFUSAL = 6,

  /**
   * The provider paused a long turn before it was done (Anthropic's
   * `pause_turn`: its server tools, such as web search, ran for many
   * iterations). The turn is not over: to continue it, send the same
   * request again with `final.message` appended, unchanged (its `parts`
   * and `provider_tools` included), as the last message, and the model
   * carries on where it stopped. Do not add a user message after it.
   *
   * @generated from enum value: FINISH_REASON_PAUSED = 7;
   */
  PAUSED = 7,

  /**
   * The model called server tools again after `max_tool_turns` turns had
   * run them, or when their results and a next reply would have made the
   * conversation (the request's `messages` and the `transcript`) more
   * than the 2048 messages a request holds: the call ended without
   * running them. `message` holds the unrun tool calls and `transcript`
   * the conversation so far; send them back (with a higher
   * `max_tool_turns`, or after running the calls yourself) to go on.
   *
   * @generated from enum value: FINISH_REASON_MAX_TOOL_TURNS = 8;
   */
  MAX_TOOL_TURNS = 8,
}

/**
 * Describes the enum llmrelay.v1.FinishReason.
 */
export const FinishReasonSchema: GenEnum<FinishReason> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 8);

/**
 * ModelKind says what a listed model is.
 *
 * @generated from enum llmrelay.v1.ModelKind
 */
export enum ModelKind {
  /**
   * Not used.
   *
   * @generated from enum value: MODEL_KIND_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * A provider's model, called as "<provider>/<model>".
   *
   * @generated from enum value: MODEL_KIND_PROVIDER_MODEL = 1;
   */
  PROVIDER_MODEL = 1,

  /**
   * A route, called by its name.
   *
   * @generated from enum value: MODEL_KIND_ROUTE = 2;
   */
  ROUTE = 2,
}

/**
 * Describes the enum llmrelay.v1.ModelKind.
 */
export const ModelKindSchema: GenEnum<ModelKind> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 9);

/**
 * RouteBalance says how a route orders its targets for a call.
 *
 * @generated from enum llmrelay.v1.RouteBalance
 */
export enum RouteBalance {
  /**
   * Not used.
   *
   * @generated from enum value: ROUTE_BALANCE_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * In configuration order: the first healthy target serves, the next ones
   * are its fallbacks.
   *
   * @generated from enum value: ROUTE_BALANCE_ORDERED = 1;
   */
  ORDERED = 1,

  /**
   * Each call picks its first target at random by weight among the healthy
   * ones; the others follow as fallbacks, also by weight.
   *
   * @generated from enum value: ROUTE_BALANCE_WEIGHTED = 2;
   */
  WEIGHTED = 2,
}

/**
 * Describes the enum llmrelay.v1.RouteBalance.
 */
export const RouteBalanceSchema: GenEnum<RouteBalance> = /*@__PURE__*/
  enumDesc(file_llmrelay_v1_llmrelay, 10);

/**
 * LLMService relays generation requests to the configured LLM providers.
 *
 * @generated from service llmrelay.v1.LLMService
 */
export const LLMService: GenService<{
  /**
   * Generate runs one model reply and streams it as events.
   *
   * The stream carries, in order and numbered by `GenerateEvent.sequence`:
   * zero or more `delta`s (and `partial_object`s) per attempt, a `will_retry`
   * between a failed attempt and the next one, and then exactly one `final`.
   * With `server_tools`, each turn whose reply called server tools is
   * followed by their `tool_progress` and `tool_result` events, then the
   * next turn's. Nothing follows the `final`. A call that fails ends with a
   * non-OK status instead of a `final`.
   *
   * llmrelay sends no response headers before the first event (unless the
   * call has a heartbeat), so a client library may transparently retry a
   * call that failed before any event (for example UNAVAILABLE while the
   * server drains). Once events flow, retries are llmrelay's job and are
   * reported as `will_retry` events. Every failed call's trailers carry
   * `grpc-retry-pushback-ms` (gRFC A6): -1, do not retry, when llmrelay
   * decided against another attempt itself, or the wait before calling
   * again when the server was only busy or shutting down; gRPC libraries
   * with a retry policy follow it.
   *
   * The response headers sent with the first delta say where the reply
   * comes from: `llmrelay-attempts` (the number of the attempt it starts
   * with), `llmrelay-provider` and `llmrelay-model` (the configured
   * provider and its model name). A call whose headers went out earlier
   * (a heartbeat) does not carry them; `final` always says the same.
   *
   * Resume sends the same events, so both return GenerateEvent.
   *
   * buf:lint:ignore RPC_RESPONSE_STANDARD_NAME
   * buf:lint:ignore RPC_REQUEST_RESPONSE_UNIQUE
   *
   * @generated from rpc llmrelay.v1.LLMService.Generate
   */
  generate: {
    methodKind: "server_streaming";
    input: typeof GenerateRequestSchema;
    output: typeof GenerateEventSchema;
  },
  /**
   * ListModels lists the models the caller may use: each configured
   * provider's models, and the routes, with their targets and health; and
   * the providers that accept any model name, whose models it cannot list.
   *
   * @generated from rpc llmrelay.v1.LLMService.ListModels
   */
  listModels: {
    methodKind: "unary";
    input: typeof ListModelsRequestSchema;
    output: typeof ListModelsResponseSchema;
  },
  /**
   * Resume picks up a resumable call (`GenerateRequest.resumable`) whose
   * stream went away: the client's connection dropped, a proxy or sidecar
   * restarted, or the client cancelled. It streams the call's events whose
   * `sequence` is greater than `after_sequence`, exactly as Generate
   * numbered and sent them (heartbeats included), then the call's live
   * events as they come, until its `final`; a call that fails ends Resume
   * with the call's own status. Pass the `sequence` of the last event
   * received, and the stream continues right after it: nothing is missed,
   * nothing repeated. The call itself ran on without a reader: its
   * upstream request is the same one, never sent again.
   *
   * A call can be resumed while it runs and for the server's
   * `resume.grace` (60s unless configured) after it ended or after its
   * last reader went away, whichever is later; a finished call is then
   * replayed to its end. Several Resume streams may read a call at once.
   * With the state store shared in Redis (`state.store: redis`), any
   * replica serves Resume, the call running on the replica that took it;
   * with the memory store only that replica can (see docs/resume.md).
   *
   * Only the API key that started the call may resume it. Resume needs the
   * key's `generate` scope and takes a token of its rate limit, not one of
   * its `max_concurrent_streams` slots (the call it reads holds one); a
   * key's Resume streams open at once are bounded on their own, by
   * `resume.max_readers_per_key` (32 unless configured) or the key's
   * `max_concurrent_streams` if higher.
   *
   * What a resumable call promises when a server stops:
   *
   *   - A drain (SIGTERM): the replica running the call keeps running it,
   *     and keeps its events where readers find them, for the server's
   *     `shutdown_grace`, while it takes no new calls. A call that finishes
   *     within it is answered live, or by Resume (on any replica with the
   *     redis store). One still running when the grace period ends is
   *     lost: it ends ABORTED, reason RESUMABLE_CALL_LOST, for its live
   *     client and for every Resume after (its log keeps that end).
   *   - A crash (kill -9, an OOM kill, a lost node): the call is lost at
   *     once. With the redis store, a Resume on another replica sends the
   *     events the call had logged, then ABORTED, RESUMABLE_CALL_LOST,
   *     within about a second of the crash (the replicas watch each
   *     other's presence in Redis), not after a lease TTL. With the memory
   *     store the call was only ever on that replica: NOT_FOUND.
   *
   * RESUMABLE_CALL_LOST says that nothing more of the call will come. The
   * client may send the same GenerateRequest again, with the same
   * request_id (the lost call is replaced, never attached to); the new
   * call streams its reply from the start, from sequence 1, so the client
   * must discard what the lost call showed, exactly as for a will_retry
   * with discard_partial. A new call asks the provider again: clients send
   * it only when their caller allowed it (the Go client: Hooks.OnReissue).
   *
   * Errors (ErrorInfo reason in parentheses):
   *
   *   NOT_FOUND          (RESUMABLE_CALL_NOT_FOUND) no resumable call has this
   *                      request_id: it never existed, was not resumable, its
   *                      grace period passed, or the replica that ran it kept
   *                      it in its own memory and is gone
   *   ABORTED            (RESUMABLE_CALL_LOST) the call is gone before its end
   *                      (see above); send the same request again to run it
   *                      anew, discarding what was shown
   *   PERMISSION_DENIED  (RESUME_KEY_MISMATCH) another API key started the call
   *   OUT_OF_RANGE       (RESUME_SEQUENCE_AHEAD) after_sequence is past the
   *                      call's last event
   *   RESOURCE_EXHAUSTED (RESUME_BUFFER_FULL) the call's events outgrew the
   *                      server's resume bounds, so it stopped being
   *                      resumable; sent after the events that were kept
   *   RESOURCE_EXHAUSTED (TOO_MANY_STREAMS, metadata limit resume_readers) the
   *                      key has as many Resume streams open as it may
   *   UNAVAILABLE        (STATE_STORE_UNAVAILABLE) the shared store cannot be
   *                      read right now; see RetryInfo, then resume again
   *   UNAVAILABLE        (RESUME_INTERRUPTED) the server serving this Resume
   *                      is shutting down; the call runs on: resume again
   *   DATA_LOSS          (RESUME_EVENTS_LOST) events the stream needs are no
   *                      longer kept (a Redis store that restarted empty or
   *                      trimmed the call's log), sent after the events
   *                      before the gap: the stream never skips one
   *
   * buf:lint:ignore RPC_RESPONSE_STANDARD_NAME
   * buf:lint:ignore RPC_REQUEST_RESPONSE_UNIQUE
   *
   * @generated from rpc llmrelay.v1.LLMService.Resume
   */
  resume: {
    methodKind: "server_streaming";
    input: typeof ResumeRequestSchema;
    output: typeof GenerateEventSchema;
  },
  /**
   * ListTools lists the server tools the caller may offer a model
   * (`GenerateRequest.server_tools`): the tools of the MCP servers in the
   * server's config (`tools.mcp_servers`) that the config's `allow` lets
   * llmrelay offer and the caller's API key's `tools` patterns let it use,
   * each with its description, input schema and whether its server answers
   * right now; and the MCP servers the caller may use a tool of, available
   * or not. A server that is down is listed with `available: false`, with
   * the tools it had when it last answered (none if it never did), until it
   * answers again. A server none of whose tools the key may use is not
   * listed at all, as ListModels hides the models a key may not use.
   *
   * Needs the key's `generate` scope: the tools it lists are what the key
   * may use in Generate. Without API keys configured, every tool and every
   * MCP server is listed.
   *
   * @generated from rpc llmrelay.v1.LLMService.ListTools
   */
  listTools: {
    methodKind: "unary";
    input: typeof ListToolsRequestSchema;
    output: typeof ListToolsResponseSchema;
  },
  /**
   * Embed turns each of a request's inputs into an embedding: a vector of
   * floats that places the text in the model's semantic space (for search,
   * clustering, retrieval). Unary: the embeddings come whole, in the order
   * of the inputs, in one response.
   *
   * The call is admitted as a Generate is (docs/embeddings.md): the key
   * needs the `embed` scope or the `generate` scope, takes a token of its
   * rate limit (no `max_concurrent_streams` slot: it streams nothing), may
   * use only the models its patterns allow; the deadline, size and
   * validation rules apply; the model resolves as Generate's does (a route
   * or "<provider>/<model>"); the budgets of the key and its team reserve
   * the inputs' estimate and are charged the input tokens at the model's
   * price; the provider's `max_concurrent` slot is held while it runs.
   * Attempts follow the server's retry policy: a transient failure (503,
   * 429, a dropped connection) is retried on the same target, and a route
   * falls back to its next target when a target fails in a way another
   * may not (the same rule as Generate's `fallback_models`). A request the
   * provider rejects is not retried.
   *
   * Providers that embed: the `openai` kind (POST /embeddings, and every
   * server compatible with it), `gemini` (batchEmbedContents) and `mock`
   * (deterministic unit vectors). The `anthropic` kind has no embeddings
   * API.
   *
   * Errors (ErrorInfo reason in parentheses), beside those every call
   * shares (UNAUTHENTICATED, PERMISSION_DENIED SCOPE_MISSING or
   * MODEL_NOT_ALLOWED, RESOURCE_EXHAUSTED RATE_LIMITED or REQUEST_TOO_LARGE
   * or BUDGET_EXHAUSTED, UNAVAILABLE PROVIDER_BUSY, DEADLINE_EXCEEDED):
   *
   *   INVALID_ARGUMENT    (INVALID_REQUEST) a rule of EmbedRequest broken, with a
   *                       BadRequest naming the field (`inputs[3]`)
   *   INVALID_ARGUMENT    (UNKNOWN_PROVIDER, UNKNOWN_MODEL) the model does not
   *                       resolve
   *   FAILED_PRECONDITION (EMBEDDINGS_NOT_SUPPORTED) a target of the model is
   *                       a provider that cannot embed (metadata `provider`,
   *                       `provider_kind`, `model`), refused before any
   *                       upstream request
   *   INVALID_ARGUMENT    (PROVIDER_REJECTED) the provider refused the request
   *                       (an unknown model, dimensions it does not take, an
   *                       input over the model's context)
   *   UNAVAILABLE         (RETRIES_EXHAUSTED) every attempt failed transiently
   *   RESOURCE_EXHAUSTED  (RETRIES_EXHAUSTED, `retry_reason` RATE_LIMITED) the
   *                       provider's rate limit, still after every attempt
   *   RESOURCE_EXHAUSTED  (PROVIDER_QUOTA_EXHAUSTED) the provider's quota or
   *                       spend limit is used up, not retried
   *   UNKNOWN             (PROVIDER_PROTOCOL_ERROR) the provider's answer does not
   *                       decode, holds a different number of embeddings
   *                       than inputs, or vectors of another length than
   *                       `dimensions` asked for (a server that does not
   *                       shorten vectors: leave `dimensions` out)
   *
   * @generated from rpc llmrelay.v1.LLMService.Embed
   */
  embed: {
    methodKind: "unary";
    input: typeof EmbedRequestSchema;
    output: typeof EmbedResponseSchema;
  },
}> = /*@__PURE__*/
  serviceDesc(file_llmrelay_v1_llmrelay, 0);

