// The llmrelay client helper for TypeScript: Generate that survives a
// dropped connection. When the call is resumable (request.resumable, or a
// route that makes calls resumable), a stream that fails with UNAVAILABLE
// or another error that did not come from llmrelay (a reset connection, a
// proxy that restarted) is picked up again with the Resume RPC after the
// last event received (or, before any, by sending the same Generate again,
// which llmrelay does not run twice), and the events go on where they
// stopped: none missed, none repeated. See docs/resume.md.
//
//   for await (const ev of generateResumable(client, request, { headers, timeoutMs: 30_000 })) { ... }

import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";

import { ErrorInfoSchema } from "../../gen/ts/google/rpc/error_details_pb.js";
import type { GenerateEvent, GenerateRequest, LLMService } from "../../gen/ts/llmrelay/v1/llmrelay_pb.js";
import { GenerateRequestSchema, ResumeRequestSchema } from "../../gen/ts/llmrelay/v1/llmrelay_pb.js";

/** Options of generateResumable. */
export interface ResumableOptions {
  /** Request headers, such as the authorization header. */
  headers?: HeadersInit;
  /** The deadline of the whole call, resumes included, in milliseconds. */
  timeoutMs?: number;
  /** Called when the stream dropped (cause) and the call is picked up after afterSequence. */
  onResume?: (afterSequence: bigint, cause: ConnectError) => void;
  /** Aborts the call. */
  signal?: AbortSignal;
}

// Reasons of llmrelay's after which the call runs on, to be resumed again.
const resumeAgain = ["RESUME_INTERRUPTED", "STATE_STORE_UNAVAILABLE"];

const maxTries = 8; // reconnections in a row without an event in between
const backoffMinMs = 100;
const backoffMaxMs = 2000;

/**
 * Streams the events of a Generate call, picking a resumable call up again
 * when its stream drops. A request that asks to be resumable without a
 * request_id gets one (on a copy). Errors of llmrelay's own (the call's
 * failure; NOT_FOUND when it can no longer be resumed) end the stream.
 */
export async function* generateResumable(
  client: Client<typeof LLMService>,
  request: GenerateRequest,
  options: ResumableOptions = {},
): AsyncGenerator<GenerateEvent> {
  if (request.resumable && request.requestId === "") {
    request = create(GenerateRequestSchema, { ...request, requestId: crypto.randomUUID() });
  }
  let requestId = request.requestId;
  let resumable = request.resumable === true;
  let last = 0n;
  let received = false;
  let tries = 0;
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  const callOptions = () => ({
    headers: options.headers,
    signal: options.signal,
    timeoutMs: deadline === undefined ? undefined : Math.max(1, deadline - Date.now()),
    // The response headers say whether the call is resumable (a route
    // may have made it so) and its id (the server may have chosen it).
    onHeader: (h: Headers) => {
      const r = h.get("llmrelay-resumable");
      if (r !== null) {
        resumable = r === "true";
        requestId ||= h.get("llmrelay-request-id") ?? "";
      } else if (!received) {
        resumable = false; // the server could not make it resumable
      }
    },
  });

  for (;;) {
    const stream = received
      ? client.resume(create(ResumeRequestSchema, { requestId, afterSequence: last }), callOptions())
      : client.generate(request, callOptions());
    try {
      for await (const ev of stream) {
        if (received && resumable) {
          if (ev.sequence <= last) continue; // already yielded (llmrelay never sends it twice)
          if (ev.sequence !== last + 1n) {
            throw new Error(`llmrelay: events are missing from the stream: got ${ev.sequence} after ${last}`);
          }
        }
        last = ev.sequence;
        received = true;
        tries = 0;
        yield ev;
      }
      return;
    } catch (err) {
      const e = ConnectError.from(err);
      if (!resumable || requestId === "" || tries >= maxTries || !dropped(e) || options.signal?.aborted) {
        throw err;
      }
      if (tries > 0) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(backoffMinMs * 2 ** (tries - 1), backoffMaxMs)));
      }
      tries++;
      options.onResume?.(last, e);
    }
  }
}

/** dropped reports whether e is a dropped stream rather than llmrelay's answer. */
function dropped(e: ConnectError): boolean {
  const info = e.findDetails(ErrorInfoSchema).find((d) => d.domain === "llmrelay");
  if (info !== undefined) {
    // llmrelay's own answer: the call's outcome, or why it cannot be
    // resumed; but a server serving a Resume that shuts down, or cannot
    // read the shared store for a moment, leaves the call running.
    return resumeAgain.includes(info.reason);
  }
  // connect-node reports a reset connection as ABORTED.
  return [Code.Unavailable, Code.Aborted, Code.Internal, Code.Unknown, Code.Canceled].includes(e.code);
}
