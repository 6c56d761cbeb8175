import { anyUnpack, durationMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

import type { BadRequest_FieldViolation } from "./gen/google/rpc/error_details_pb.js";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import type { Status } from "./gen/google/rpc/status_pb.js";

/** The ErrorInfo domain of llmrelay's own errors. */
export const DOMAIN = "llmrelay";

/** The response header and trailer that carry a call's request id. */
export const REQUEST_ID_HEADER = "llmrelay-request-id";

/** A field of a request that broke a rule: google.rpc.BadRequest's violation. */
export interface FieldViolation {
  /** The field's path, e.g. "messages[0].content". */
  field: string;
  /** What is wrong with it, written for people. */
  description: string;
  /** The rule that failed (protovalidate's rule id), when there is one. */
  reason: string;
}

/**
 * A failed llmrelay call: its gRPC status with the details llmrelay attaches,
 * as plain values. Switch on `reason` (stable, UPPER_SNAKE), not on `message`.
 */
export class LLMRelayError extends Error {
  override name = "LLMRelayError";
  /** The gRPC status code (the numbers of `Code` are gRPC's). */
  readonly code: Code;
  /** The status message, written for people. */
  readonly rawMessage: string;
  /** The ErrorInfo reason, e.g. "PROVIDER_RATE_LIMITED"; "" when the status has none (an error from below llmrelay). */
  readonly reason: string;
  /** The ErrorInfo domain: "llmrelay" for llmrelay's own errors. */
  readonly domain: string;
  /** The ErrorInfo metadata, e.g. attempts, provider. */
  readonly metadata: Readonly<Record<string, string>>;
  /** The RetryInfo delay in milliseconds: how long to wait before calling again; undefined without RetryInfo. */
  readonly retryDelayMs: number | undefined;
  /** The BadRequest field violations: what was wrong with the request. */
  readonly fieldViolations: readonly FieldViolation[];
  /** The call's request id, when the server or the request named one. */
  readonly requestId: string;
  /** The response trailers (and headers) of the failed call. */
  readonly trailers: Headers;

  constructor(init: {
    code: Code;
    message: string;
    reason?: string;
    domain?: string;
    metadata?: Record<string, string>;
    retryDelayMs?: number;
    fieldViolations?: FieldViolation[];
    requestId?: string;
    trailers?: Headers;
    cause?: unknown;
  }) {
    const name = codeName(init.code);
    super(init.reason ? `${name} ${init.reason}: ${init.message}` : `${name}: ${init.message}`, { cause: init.cause });
    this.code = init.code;
    this.rawMessage = init.message;
    this.reason = init.reason ?? "";
    this.domain = init.domain ?? "";
    this.metadata = init.metadata ?? {};
    this.retryDelayMs = init.retryDelayMs;
    this.fieldViolations = init.fieldViolations ?? [];
    this.requestId = init.requestId ?? this.metadata["request_id"] ?? "";
    this.trailers = init.trailers ?? new Headers();
  }

  /** The gRPC name of the code, e.g. "DEADLINE_EXCEEDED". */
  get codeName(): string {
    return codeName(this.code);
  }

  /** Whether the error is llmrelay's own answer (its ErrorInfo domain), not a dropped connection or a proxy's. */
  get fromLLMRelay(): boolean {
    return this.domain === DOMAIN;
  }

  /**
   * Returns any error of a call as an LLMRelayError: one as it is, a
   * ConnectError with its details decoded, anything else as UNKNOWN (or
   * CANCELLED for an abort).
   */
  static from(err: unknown, requestId = ""): LLMRelayError {
    if (err instanceof LLMRelayError) {
      return err;
    }
    const e = ConnectError.from(err);
    const info = e.findDetails(ErrorInfoSchema)[0];
    const retry = e.findDetails(RetryInfoSchema)[0];
    const violations = e.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations.map(violation));
    return new LLMRelayError({
      code: e.code,
      message: e.rawMessage,
      reason: info?.reason,
      domain: info?.domain,
      metadata: info ? { ...info.metadata } : undefined,
      retryDelayMs: retry?.retryDelay ? durationMs(retry.retryDelay) : undefined,
      fieldViolations: violations,
      requestId: info?.metadata["request_id"] || e.metadata.get(REQUEST_ID_HEADER) || requestId,
      trailers: e.metadata,
      cause: err,
    });
  }

  /** Returns a google.rpc.Status, such as a will_retry event's cause, as an LLMRelayError. */
  static fromStatus(s: Status): LLMRelayError {
    const info = s.details.map((d) => anyUnpack(d, ErrorInfoSchema)).find((d) => d !== undefined);
    const retry = s.details.map((d) => anyUnpack(d, RetryInfoSchema)).find((d) => d !== undefined);
    const bad = s.details.map((d) => anyUnpack(d, BadRequestSchema)).filter((d) => d !== undefined);
    return new LLMRelayError({
      code: s.code as Code,
      message: s.message,
      reason: info?.reason,
      domain: info?.domain,
      metadata: info ? { ...info.metadata } : undefined,
      retryDelayMs: retry?.retryDelay ? durationMs(retry.retryDelay) : undefined,
      fieldViolations: bad.flatMap((b) => b.fieldViolations.map(violation)),
    });
  }
}

function violation(v: BadRequest_FieldViolation): FieldViolation {
  return { field: v.field, description: v.description, reason: v.reason };
}

/** The gRPC name of a code: "UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED". */
export function codeName(code: Code): string {
  if ((code as number) === 0) {
    return "OK";
  }
  if (code === Code.Canceled) {
    return "CANCELLED"; // gRPC's spelling; Connect's enum has "Canceled"
  }
  const name = Code[code];
  return name === undefined ? `CODE_${code}` : name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

export { Code };
