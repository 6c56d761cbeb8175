/**
 * @llmrelay/client: the TypeScript client of llmrelay, the gRPC gateway to
 * LLM providers.
 *
 * - {@link Client} dials a server (TLS by default; `insecure` for loopback)
 *   and sends its API key; `generate` returns a {@link GenerateStream}, an
 *   AsyncIterable of typed events, which retries a call that failed before
 *   its first event as the recommended service config says (following the
 *   server's pushback), resumes a resumable call whose connection dropped,
 *   and, when asked, re-issues a resumable call the server lost.
 * - {@link Reply} applies the event contract: it keeps the current
 *   attempt's text, drops it on will_retry.discard_partial (only its own
 *   turn's, with server tools, whose results and progress it keeps), and
 *   holds the final event, the answer, and with structured output its
 *   object as plain JSON (`reply.object`).
 * - `embed` returns the embeddings of some texts, one vector per text.
 * - `listModels` and `listTools` list what the caller may use;
 *   `listModelsResponse` also names the providers that accept any model name.
 * - A failed call throws an {@link LLMRelayError}: the status code, the
 *   ErrorInfo reason and metadata, the RetryInfo delay, the field
 *   violations and the request id.
 *
 * The generated messages (`GenerateRequest`, `Role`, ...) are re-exported;
 * build requests as plain objects or with `create(GenerateRequestSchema, ...)`.
 *
 * @module
 */
export { Client, GenerateStream, RESUMABLE_HEADER, REASON_RESUMABLE_CALL_LOST, REASON_RESUMABLE_CALL_NOT_FOUND } from "./client.js";
export type { CallOptions, ClientOptions, EmbedRequestInit, GenerateOptions, GenerateRequestInit } from "./client.js";
export { Code, codeName, DOMAIN, LLMRelayError, REQUEST_ID_HEADER } from "./errors.js";
export type { FieldViolation } from "./errors.js";
export { Reply } from "./reply.js";
export type { ReasoningSoFar, ReplyHooks, ToolCallSoFar, TurnSoFar } from "./reply.js";
export { defaultRetryPolicy, PUSHBACK_TRAILER, Throttle } from "./retry.js";
export type { RetryPolicy } from "./retry.js";
export * from "./gen/llmrelay/v1/llmrelay_pb.js";
export { VERSION } from "./version.js";
