// Streams a reply from llmrelay over gRPC with the generated gen/ts code and
// @connectrpc/connect-node, the way every llmrelay client should: print the
// text as it arrives, print a line on each will_retry and take back what a
// failed attempt showed when the server says discard_partial, and print the
// final message, which is the answer.
//
//   npm ci && npm run build && npm start -- [text...]
//
// It calls mock/echo on $LLMRELAY_ADDR (default 127.0.0.1:50051, plaintext),
// with $LLMRELAY_API_KEY if set, and a fault plan that drops the first
// attempt's connection after two deltas, so the server restarts the reply.

import { create } from "@bufbuild/protobuf";
import { durationFromMs, durationMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import {
  GenerateRequestSchema,
  LLMService,
  RetryReasonSchema,
  Role,
} from "../../gen/ts/llmrelay/v1/llmrelay_pb.js";
import { reportError } from "./report.js";

async function main(): Promise<void> {
  const addr = process.env.LLMRELAY_ADDR || "127.0.0.1:50051";
  const text = process.argv.slice(2).join(" ") || "the quick brown fox jumps over the lazy dog";
  const key = process.env.LLMRELAY_API_KEY;

  // http:// is plaintext, for a server on loopback; use https:// for TLS.
  const transport = createGrpcTransport({ baseUrl: `http://${addr}` });
  const client = createClient(LLMService, transport);

  const request = create(GenerateRequestSchema, {
    model: "mock/echo",
    messages: [{ role: Role.USER, content: text }],
    retry: { initialBackoff: durationFromMs(50) },
    // The first attempt drops after two deltas; the second one runs normally.
    providerOptions: { faults: [{ drop_after: 2 }] },
  });

  // lineOpen is true while the current line holds streamed text.
  let lineOpen = false;
  const endLine = () => {
    if (lineOpen) {
      process.stdout.write("\n");
      lineOpen = false;
    }
  };
  // shown is what the current attempt has put on screen.
  let shown = "";
  let answer: string | undefined;
  const headers = key ? { authorization: `Bearer ${key}` } : undefined;
  // Connect does not retry by itself. Like the recommended service config
  // the Go and Python examples dial with (docs/service-config.json), retry
  // UNAVAILABLE before the first event, following the server's pushback.
  for (let call = 1; ; call++) {
    let received = false;
    try {
      for await (const ev of client.generate(request, { headers, timeoutMs: 30_000 })) {
        received = true;
        switch (ev.event.case) {
          case "delta":
            process.stdout.write(ev.event.value.text);
            shown += ev.event.value.text;
            lineOpen ||= ev.event.value.text !== "";
            break;
          case "willRetry": {
            const w = ev.event.value;
            // A terminal cannot unprint: end the line, say what is dropped,
            // and stream the next attempt on a fresh line.
            const discarded = w.discardPartial ? shown : "";
            if (w.discardPartial) shown = "";
            endLine();
            console.log(
              `will_retry: next_attempt=${w.nextAttempt} delay_ms=${Math.floor(w.delay ? durationMs(w.delay) : 0)}` +
                ` reason=${RetryReasonSchema.value[w.reason]?.name ?? w.reason}` +
                ` discard_partial=${w.discardPartial} discarded=${JSON.stringify(discarded)}`,
            );
            break;
          }
          case "final":
            // The final message is the answer, whatever the deltas showed.
            answer = ev.event.value.message?.content ?? "";
            break;
        }
      }
      break;
    } catch (err) {
      const wait = received ? undefined : retryWait(ConnectError.from(err), call);
      if (wait === undefined) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    } finally {
      endLine();
    }
  }
  if (answer === undefined) {
    throw new Error("the stream ended without a final event");
  }
  console.log(`final: ${answer}`);
}

// retryWait returns how long to wait before calling again after call number
// `call` failed before its first event, or undefined not to: the
// recommended service config's policy (UNAVAILABLE only, 4 calls in all,
// backoff from 250ms doubling to 2s, gRFC A6's random wait), where the
// server's grpc-retry-pushback-ms trailer has the last word: negative means
// llmrelay decided against another attempt itself, a number is the wait.
function retryWait(e: ConnectError, call: number): number | undefined {
  if (e.code !== Code.Unavailable || call >= 4) {
    return undefined;
  }
  const pushback = e.metadata.get("grpc-retry-pushback-ms");
  if (pushback !== null) {
    const ms = /^\d+$/.test(pushback) ? Number(pushback) : -1;
    return ms >= 0 ? ms : undefined;
  }
  return Math.random() * Math.min(250 * 2 ** (call - 1), 2000);
}

main().catch(reportError);
