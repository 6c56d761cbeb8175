// The retry policy of llmrelay's recommended gRPC service config
// (docs/service-config.json), which Connect does not implement itself:
// gRPC's retryPolicy for calls that failed before their first event, its
// retryThrottling, and gRFC A6's server pushback.

import { Code } from "@connectrpc/connect";

import { serviceConfig } from "./gen/service-config.js";
import type { LLMRelayError } from "./errors.js";

/** The trailer with which a server tells a client when (or whether) to retry: gRFC A6. */
export const PUSHBACK_TRAILER = "grpc-retry-pushback-ms";

/** How a client retries calls that fail before their first event; the defaults are the service config's. */
export interface RetryPolicy {
  /** Calls in all, the first one included; 1 turns retries off. */
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  backoffMultiplier: number;
  /** The codes retried. */
  retryableCodes: readonly Code[];
}

const method = serviceConfig.methodConfig[0].retryPolicy;

function seconds(d: string): number {
  return Math.round(parseFloat(d.replace(/s$/, "")) * 1000);
}

/** The service config's retry policy. */
export const defaultRetryPolicy: RetryPolicy = Object.freeze({
  maxAttempts: method.maxAttempts,
  initialBackoffMs: seconds(method.initialBackoff),
  maxBackoffMs: seconds(method.maxBackoff),
  backoffMultiplier: method.backoffMultiplier,
  retryableCodes: Object.freeze(method.retryableStatusCodes.map((c) => Code[toPascal(c) as keyof typeof Code])),
});

function toPascal(c: string): string {
  return c.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, l: string) => l.toUpperCase());
}

/**
 * Throttle is gRPC's retryThrottling: a token bucket that a call failed
 * with a code the policy retries drains by 1 (other failures leave it as
 * it is) and a successful one fills by tokenRatio; retries stop while
 * it holds no more than half of maxTokens. One Throttle serves a client.
 */
export class Throttle {
  private tokens: number;
  constructor(
    private readonly maxTokens = serviceConfig.retryThrottling.maxTokens,
    private readonly tokenRatio = serviceConfig.retryThrottling.tokenRatio,
  ) {
    this.tokens = maxTokens;
  }
  /** Records a call's outcome. */
  record(ok: boolean): void {
    this.tokens = ok ? Math.min(this.maxTokens, this.tokens + this.tokenRatio) : Math.max(0, this.tokens - 1);
  }
  /** Whether a retry may go out now. */
  allows(): boolean {
    return this.tokens > this.maxTokens / 2;
  }
}

/**
 * Returns how long to wait before call number `call`+1 after call `call`
 * failed with err before its first event, or undefined not to call again:
 * the policy's codes and attempts, the server's pushback (negative: do not
 * retry; a number of milliseconds: exactly that wait), else exponential
 * backoff with gRPC's full jitter.
 */
export function retryDelay(policy: RetryPolicy, throttle: Throttle, err: LLMRelayError, call: number): number | undefined {
  if (call >= policy.maxAttempts || !policy.retryableCodes.includes(err.code) || !throttle.allows()) {
    return undefined;
  }
  const pushback = err.trailers.get(PUSHBACK_TRAILER);
  if (pushback !== null) {
    const ms = /^\d+$/.test(pushback.trim()) ? Number(pushback) : -1;
    return ms >= 0 ? ms : undefined;
  }
  const cap = Math.min(policy.initialBackoffMs * policy.backoffMultiplier ** (call - 1), policy.maxBackoffMs);
  return Math.random() * cap;
}
