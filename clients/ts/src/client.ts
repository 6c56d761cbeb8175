import type { MessageInitShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import type { Client as ConnectClient, Interceptor, Transport } from "@connectrpc/connect";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { randomUUID } from "node:crypto";
import type { SecureContextOptions } from "node:tls";

import { DOMAIN, LLMRelayError, REQUEST_ID_HEADER } from "./errors.js";
import type {
  EmbedRequest,
  EmbedResponse,
  GenerateEvent,
  GenerateRequest,
  ListModelsResponse,
  ListToolsResponse,
  Model,
} from "./gen/llmrelay/v1/llmrelay_pb.js";
import {
  EmbedRequestSchema,
  GenerateRequestSchema,
  LLMService,
  ListModelsRequestSchema,
  ListToolsRequestSchema,
  ResumeRequestSchema,
} from "./gen/llmrelay/v1/llmrelay_pb.js";
import type { RetryPolicy } from "./retry.js";
import { defaultRetryPolicy, retryDelay, Throttle } from "./retry.js";

/** The response header that says whether a call is resumable ("true" or "false"). */
export const RESUMABLE_HEADER = "llmrelay-resumable";

/** A GenerateRequest, as a message or as the plain object `create` takes. */
export type GenerateRequestInit = GenerateRequest | MessageInitShape<typeof GenerateRequestSchema>;

/** An EmbedRequest, as a message or as the plain object `create` takes. */
export type EmbedRequestInit = EmbedRequest | MessageInitShape<typeof EmbedRequestSchema>;

/** Options of a Client. */
export interface ClientOptions {
  /** Sent on every call as "authorization: Bearer <apiKey>". */
  apiKey?: string;
  /** Plaintext HTTP/2, as for a server on loopback: the key, if any, travels in the clear. The default is TLS. */
  insecure?: boolean;
  /** TLS options (a private CA, a client certificate); the system's roots without them. */
  tls?: SecureContextOptions;
  /**
   * How calls that fail before their first event are retried: the
   * recommended service config's policy by default, which follows the
   * server's pushback, so that the client never multiplies the server's own
   * retries; false turns it off.
   */
  retry?: RetryPolicy | false;
  /** Headers sent on every call. */
  headers?: Record<string, string>;
}

/** Options of one call. */
export interface CallOptions {
  /** The deadline of the whole call, resumes and retries included, in milliseconds from now. */
  timeoutMs?: number;
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Headers for this call. */
  headers?: Record<string, string>;
}

/** Options of a Generate call. */
export interface GenerateOptions extends CallOptions {
  /**
   * Re-issue the same request (same request_id) when the server reports its
   * resumable call lost (ABORTED, RESUMABLE_CALL_LOST: its replica crashed,
   * or a drain could not keep it; or NOT_FOUND, RESUMABLE_CALL_NOT_FOUND, in
   * answer to the stream's own Resume after a drop), up to 3 times. What the lost call showed must then be
   * discarded, as on will_retry.discard_partial: `Reply` does it, a caller
   * of the raw stream listens with onReissue. Off by default: the lost call
   * may have had effects the caller must weigh first.
   */
  reissueLostCall?: boolean;
  /** Called when a resumable call's stream dropped (cause) and is picked up again after event afterSequence. */
  onResume?: (afterSequence: bigint, cause: LLMRelayError) => void;
  /** Called when a lost call is issued again (reissueLostCall): discard everything its events showed. */
  onReissue?: (cause: LLMRelayError) => void;
}

// Reasons of llmrelay's after which a resumable call runs on, to be resumed again.
const RESUME_AGAIN = ["RESUME_INTERRUPTED", "STATE_STORE_UNAVAILABLE"];
/** The reason of a resumable call the server lost (ABORTED). */
export const REASON_RESUMABLE_CALL_LOST = "RESUMABLE_CALL_LOST";
/** The reason (NOT_FOUND) of a Resume of a call the server does not have (any more). */
export const REASON_RESUMABLE_CALL_NOT_FOUND = "RESUMABLE_CALL_NOT_FOUND";
// Codes of a stream that dropped rather than ended, when the status carries
// no llmrelay ErrorInfo (connect-node reports a reset connection as ABORTED).
const DROPPED = [Code.Unavailable, Code.Aborted, Code.Internal, Code.Unknown, Code.Canceled];

const MAX_RESUME_TRIES = 8; // reconnections in a row without an event in between
/** @internal The backoff between resumes in a row, in milliseconds; tests lengthen it. */
export const resumeBackoffMs = { min: 100, max: 2000 };
const MAX_REISSUES = 3;
/**
 * The timeoutMs of listModels, listModelsResponse and listTools when the
 * caller gives none, as the Go and Python clients bound theirs: the server
 * answers them from what it holds, at once, so a call still waiting after
 * this is one whose connection went silent, which must not hold its caller
 * for ever.
 */
const LIST_TIMEOUT_MS = 30_000;

/**
 * A client of one llmrelay server. Calls share one HTTP/2 connection, made
 * on demand. Safe to share across concurrent calls.
 *
 *     const relay = new Client("127.0.0.1:50051", { insecure: true });
 *     const reply = await Reply.collect(relay.generate({ model: "mock/echo", messages: [{ role: Role.USER, content: "hi" }] }));
 */
export class Client {
  /** The generated Connect client, for calls this class does not wrap. */
  readonly stub: ConnectClient<typeof LLMService>;
  /**
   * The client's transport (its connection, TLS and API key), for the
   * server's other services: the admin API's, say,
   * `createClient(KeyService, relay.transport)` with `KeyService` from
   * `@llmrelay/client/gen/llmrelay/admin/v1/admin_pb`.
   */
  readonly transport: Transport;
  private readonly retry: RetryPolicy | false;
  private readonly throttle = new Throttle();
  private readonly session: Http2SessionManager;
  private isClosed = false;

  /**
   * @param address "host:port", or a URL: "http://host:port" (plaintext), "https://host:port".
   */
  constructor(address: string, options: ClientOptions = {}) {
    let baseUrl = address;
    if (!/^https?:\/\//.test(address)) {
      baseUrl = `${options.insecure ? "http" : "https"}://${address}`;
    } else if (options.insecure && baseUrl.startsWith("https:")) {
      throw new Error("llmrelay: an https:// address and insecure both given");
    }
    if (options.tls !== undefined && baseUrl.startsWith("http:")) {
      // As the Go and Python clients: TLS options for a plaintext
      // connection are a mistake, never ignored.
      throw new Error(`llmrelay: tls options for a plaintext connection (${options.insecure ? "insecure" : "an http:// address"}) given`);
    }
    const fixed: Record<string, string> = { ...options.headers };
    if (options.apiKey) {
      fixed["authorization"] = `Bearer ${options.apiKey}`;
    }
    const headers: Interceptor = (next) => (req) => {
      for (const [k, v] of Object.entries(fixed)) {
        if (!req.header.has(k)) req.header.set(k, v);
      }
      return next(req);
    };
    this.session = new Http2SessionManager(baseUrl, undefined, options.tls);
    this.transport = createGrpcTransport({
      baseUrl,
      interceptors: [headers],
      nodeOptions: options.tls,
      sessionManager: this.session,
    });
    this.stub = createClient(LLMService, this.transport);
    this.retry = options.retry ?? defaultRetryPolicy;
  }

  /**
   * Closes the connection; calls in progress fail with CANCELLED, and are
   * not resumed nor retried, and later calls fail the same way. The process
   * may exit once every client is closed.
   */
  close(): void {
    this.isClosed = true;
    this.session.abort();
  }

  /** @internal Throws CANCELLED once the client is closed: nothing is sent after close(). */
  checkOpen(requestId = ""): void {
    if (this.isClosed) {
      throw new LLMRelayError({ code: Code.Canceled, message: "the client is closed", requestId });
    }
  }

  /**
   * Starts a Generate call and returns its events as an AsyncIterable (see
   * GenerateStream). Nothing is sent until the stream is iterated.
   */
  generate(request: GenerateRequestInit, options: GenerateOptions = {}): GenerateStream {
    const req = create(GenerateRequestSchema, request as MessageInitShape<typeof GenerateRequestSchema>);
    if (req.resumable === true && req.requestId === "") {
      req.requestId = randomUUID();
    }
    return new GenerateStream(this, req, options);
  }

  /**
   * Picks up the resumable call requestId after the event numbered
   * afterSequence (0: from its first event), for a caller that kept the
   * call's id across its own restart. The stream resumes again by itself.
   */
  resume(requestId: string, afterSequence: bigint = 0n, options: GenerateOptions = {}): GenerateStream {
    // BigInt: a plain number (JavaScript, or an event's sequence read as
    // one) would not compare with the events' sequences.
    return new GenerateStream(this, undefined, options, { requestId, afterSequence: BigInt(afterSequence) });
  }

  /**
   * Lists the models the caller may use (a provider's only, when named). A
   * provider configured without a models list accepts any model name and
   * has none here: listModelsResponse says which. `timeoutMs` is 30s unless
   * given.
   */
  async listModels(request: MessageInitShape<typeof ListModelsRequestSchema> = {}, options: CallOptions = {}): Promise<Model[]> {
    return (await this.listModelsResponse(request, options)).models;
  }

  /**
   * The whole ListModelsResponse of listModels: its `models`, and its
   * `anyModelProviders`, the providers that accept any model name (called
   * as "<provider>/<model>"), each with the API key's `models` patterns
   * that may reach it.
   */
  async listModelsResponse(request: MessageInitShape<typeof ListModelsRequestSchema> = {}, options: CallOptions = {}): Promise<ListModelsResponse> {
    const req = create(ListModelsRequestSchema, request);
    return this.unary((opts) => this.stub.listModels(req, opts), { ...options, timeoutMs: options.timeoutMs ?? LIST_TIMEOUT_MS });
  }

  /**
   * Lists the server tools the caller may offer a model
   * (`GenerateRequest.serverTools`), each with whether its MCP server answers
   * right now, and the server's MCP servers (one server's only, when named).
   * `timeoutMs` is 30s unless given, as for listModels.
   */
  async listTools(request: MessageInitShape<typeof ListToolsRequestSchema> = {}, options: CallOptions = {}): Promise<ListToolsResponse> {
    const req = create(ListToolsRequestSchema, request);
    return this.unary((opts) => this.stub.listTools(req, opts), { ...options, timeoutMs: options.timeoutMs ?? LIST_TIMEOUT_MS });
  }

  /**
   * Returns the embeddings of the request's inputs, one per input, in
   * order, with the provider, model, usage and attempts that answered.
   * Retried on UNAVAILABLE as listModels is (the recommended service
   * config, following the server's pushback); `timeoutMs` bounds it, the
   * server's deadline without it.
   */
  async embed(request: EmbedRequestInit, options: CallOptions = {}): Promise<EmbedResponse> {
    const req = create(EmbedRequestSchema, request as MessageInitShape<typeof EmbedRequestSchema>);
    return this.unary((opts) => this.stub.embed(req, opts), options);
  }

  /** Makes a unary call, retried as the recommended service config says. */
  private async unary<T>(call: (opts: ReturnType<typeof callOptions>) => Promise<T>, options: CallOptions): Promise<T> {
    const deadline = deadlineOf(options.timeoutMs);
    for (let n = 1; ; n++) {
      this.checkOpen();
      try {
        const resp = await call(callOptions(options, deadline));
        this.throttle.record(true);
        return resp;
      } catch (err) {
        const e = LLMRelayError.from(err);
        const wait = this.retryWait(e, n, options.signal);
        if (wait === undefined) throw e;
        await sleep(wait, options.signal);
      }
    }
  }

  /** @internal How long to wait before retrying call number `call` that failed before any event; undefined: do not. */
  retryWait(err: LLMRelayError, call: number, signal?: AbortSignal): number | undefined {
    if (signal?.aborted || this.retry === false) return undefined;
    // As gRPC's retry throttling: only a failure the policy would retry
    // counts against it (a rejected request, say, does not).
    if (this.retry.retryableCodes.includes(err.code)) this.throttle.record(false);
    return retryDelay(this.retry, this.throttle, err, call);
  }

  /** @internal */
  recordSuccess(): void {
    this.throttle.record(true);
  }
}

/**
 * The events of one Generate call, to iterate once with `for await`. It
 * ends after the final event; a failed call throws an LLMRelayError.
 * Leaving the loop early (break, a throw) ends the call at the server.
 *
 * - Before its first event, a call that fails with UNAVAILABLE is sent again
 *   as the recommended service config says, after the server's pushback
 *   when it gave one (it says -1, do not, when it decided against another
 *   attempt itself, so the provider is never called more than llmrelay's
 *   own plan says).
 * - A resumable call (request.resumable, or a route that makes calls
 *   resumable) survives a dropped connection: the stream picks it up again
 *   after the last event it yielded (Resume), up to 8 times in a row with a
 *   backoff from 100ms to 2s, and goes on: no event missed or repeated.
 * - With reissueLostCall, a resumable call the server lost is sent again
 *   with the same request_id, and onReissue says to discard what it showed.
 */
export class GenerateStream implements AsyncIterable<GenerateEvent> {
  /**
   * The call's request id: the request's (one is made up for a resumable
   * request without one), else the server's once known: from the headers of
   * a resumable call, from the trailer of any call once the stream ended
   * after its final event; "" until then.
   */
  requestId: string;
  /** Whether the call is known to be resumable. */
  resumable: boolean;
  /** How many times the stream picked the call up again after a drop. */
  resumes = 0;
  /** How many times the call was issued again after the server lost it. */
  reissues = 0;
  private readonly resumeListeners: ((afterSequence: bigint, cause: LLMRelayError) => void)[] = [];
  private readonly reissueListeners: ((cause: LLMRelayError) => void)[] = [];
  private started = false;

  /** @internal */
  constructor(
    private readonly client: Client,
    private readonly request: GenerateRequest | undefined,
    private readonly options: GenerateOptions,
    private readonly from?: { requestId: string; afterSequence: bigint },
  ) {
    this.requestId = from?.requestId ?? request?.requestId ?? "";
    this.resumable = from !== undefined || request?.resumable === true;
    if (options.onResume) this.resumeListeners.push(options.onResume);
    if (options.onReissue) this.reissueListeners.push(options.onReissue);
  }

  /** Adds a listener for resumes (see GenerateOptions.onResume). */
  onResume(fn: (afterSequence: bigint, cause: LLMRelayError) => void): this {
    this.resumeListeners.push(fn);
    return this;
  }

  /** Adds a listener for re-issues of a lost call (see GenerateOptions.onReissue). */
  onReissue(fn: (cause: LLMRelayError) => void): this {
    this.reissueListeners.push(fn);
    return this;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<GenerateEvent, void, undefined> {
    if (this.started) {
      throw new Error("llmrelay: a GenerateStream can be iterated only once");
    }
    this.started = true;
    const { signal } = this.options;
    const deadline = deadlineOf(this.options.timeoutMs);
    let last = this.from?.afterSequence ?? 0n;
    let received = this.from !== undefined; // a Resume continues after `last`
    let tries = 0; // reconnections since the last event
    let calls = 0; // Generate calls that failed before any event, in a row
    for (;;) {
      this.client.checkOpen(this.requestId);
      // Resume after the last event; or, before any event, Generate again
      // with the same request_id, unless only the server's headers gave
      // the call its id (a route made it resumable): the same request,
      // without that id, would start another call, so Resume it from its
      // first event.
      const resuming = received || this.request === undefined || (this.resumable && this.requestId !== "" && this.request.requestId === "");
      // Connect does not end an HTTP/2 stream whose iterator is returned
      // early: this RPC's own signal, aborted when the loop below is left
      // (a caller's break, a Reply hook that threw, a failure), ends the
      // call at the server, so that the provider stops generating.
      const rpc = new AbortController();
      let trailerId = ""; // the call's request id, as the trailer names it
      const onAbort = () => rpc.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) onAbort();
      const opts = {
        ...callOptions(this.options, deadline),
        signal: rpc.signal,
        onHeader: (h: Headers) => {
          const r = h.get(RESUMABLE_HEADER);
          if (r !== null) {
            this.resumable = r === "true";
            this.requestId ||= h.get(REQUEST_ID_HEADER) ?? "";
          } else if (!resuming) {
            this.resumable = false; // the server did not make it resumable (a Resume's headers never say)
          }
        },
        onTrailer: (t: Headers) => {
          trailerId = t.get(REQUEST_ID_HEADER) ?? "";
        },
      };
      const stream = resuming
          ? this.client.stub.resume(create(ResumeRequestSchema, { requestId: this.requestId, afterSequence: last }), opts)
          : this.client.stub.generate(this.request, opts);
      let final = false;
      try {
        for await (const ev of stream) {
          if (received && this.resumable) {
            if (ev.sequence <= last) continue; // yielded already (llmrelay never sends one twice)
            if (ev.sequence !== last + 1n) {
              throw brokenStream(Code.DataLoss, `events are missing from the stream: got ${ev.sequence} after ${last}`, this.requestId);
            }
          }
          last = ev.sequence;
          received = true;
          tries = 0;
          calls = 0;
          final ||= ev.event.case === "final";
          yield ev;
        }
        if (!final) {
          throw brokenStream(Code.Unknown, "the stream ended without a final event", this.requestId);
        }
        // llmrelay names every call in its trailer, and a call that is not
        // resumable nowhere else.
        this.requestId ||= trailerId;
        this.client.recordSuccess();
        return;
      } catch (err) {
        if (broken.has(err as object)) {
          throw err; // the stream itself was wrong: nothing to retry
        }
        const e = LLMRelayError.from(err, this.requestId);
        if (signal?.aborted || final) {
          throw e; // after the final, llmrelay sends nothing: nothing to resume
        }
        this.client.checkOpen(this.requestId); // closed: neither resumed nor retried
        if (expired(deadline)) {
          // The server ends a call at the deadline it was sent (never
          // before ours) with RST_STREAM CANCEL: when that arrives before
          // our own timer, under load, it is still the deadline.
          throw e.fromLLMRelay || e.code === Code.DeadlineExceeded ? e : deadlineExceeded(e, this.requestId);
        }
        if (this.lost(e, resuming)) {
          if (!this.options.reissueLostCall || this.request === undefined || this.reissues >= MAX_REISSUES) throw e;
          this.reissues++;
          received = false;
          last = 0n;
          tries = 0;
          // What the headers said of the lost call is learnt again.
          this.resumable = this.request.resumable === true;
          this.requestId = this.request.requestId;
          for (const fn of this.reissueListeners) fn(e);
          continue;
        }
        if (this.mayResume(e, tries)) {
          if (tries > 0) {
            const wait = Math.min(resumeBackoffMs.min * 2 ** (tries - 1), resumeBackoffMs.max);
            if (deadline !== undefined && Date.now() + wait >= deadline) {
              // The call's deadline comes before the next try: it ends there.
              await sleep(Math.max(0, deadline - Date.now()), signal);
              throw deadlineExceeded(e, this.requestId);
            }
            await sleep(wait, signal);
          }
          tries++;
          this.resumes++;
          for (const fn of this.resumeListeners) fn(last, e);
          continue;
        }
        if (!received) {
          // Failed before its first event: the service config's retry.
          calls++;
          const wait = this.client.retryWait(e, calls, signal);
          if (wait !== undefined && (deadline === undefined || Date.now() + wait < deadline)) {
            await sleep(wait, signal);
            continue;
          }
        }
        throw e;
      } finally {
        signal?.removeEventListener("abort", onAbort);
        rpc.abort();
      }
    }
  }

  /**
   * Whether e says the server lost this resumable call: RESUMABLE_CALL_LOST,
   * or RESUMABLE_CALL_NOT_FOUND in answer to the stream's own Resume after
   * a drop (the call was lost with a server that kept it in memory).
   */
  private lost(e: LLMRelayError, resuming: boolean): boolean {
    if (e.domain !== DOMAIN || this.request === undefined) return false;
    return e.reason === REASON_RESUMABLE_CALL_LOST || (e.reason === REASON_RESUMABLE_CALL_NOT_FOUND && resuming && this.resumes > 0);
  }

  /** Whether e, which ended the stream, is a drop of a resumable call that may be picked up again. */
  private mayResume(e: LLMRelayError, tries: number): boolean {
    if (!this.resumable || this.requestId === "" || tries >= MAX_RESUME_TRIES) {
      return false;
    }
    if (e.domain === DOMAIN) {
      // llmrelay's own answer: the call's outcome, or why it cannot be
      // resumed; but a server serving a Resume that shuts down, or that
      // cannot read the shared store for a moment, leaves the call running.
      return RESUME_AGAIN.includes(e.reason);
    }
    return DROPPED.includes(e.code);
  }
}

// broken holds the errors a stream raises about itself (a gap in the
// sequence, no final event): llmrelay never causes them, a proxy might.
const broken = new WeakSet<object>();

function brokenStream(code: Code, message: string, requestId: string): LLMRelayError {
  const e = new LLMRelayError({ code, message, requestId });
  broken.add(e);
  return e;
}

function deadlineExceeded(cause: LLMRelayError, requestId: string): LLMRelayError {
  return new LLMRelayError({ code: Code.DeadlineExceeded, message: `the call's deadline passed (${cause.message})`, requestId, cause });
}

function deadlineOf(timeoutMs: number | undefined): number | undefined {
  return timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
}

function expired(deadline: number | undefined): boolean {
  return deadline !== undefined && Date.now() >= deadline;
}

function callOptions(options: CallOptions, deadline: number | undefined) {
  return {
    headers: options.headers,
    signal: options.signal,
    timeoutMs: deadline === undefined ? undefined : Math.max(1, deadline - Date.now()),
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new LLMRelayError({ code: Code.Canceled, message: "the call was aborted", cause: signal.reason }));
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new LLMRelayError({ code: Code.Canceled, message: "the call was aborted", cause: signal?.reason }));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export { ConnectError };
