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

import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/ts/google/rpc/error_details_pb.js";
import {
  GenerateRequestSchema,
  LLMService,
  RetryReasonSchema,
  Role,
} from "../../gen/ts/llmrelay/v1/llmrelay_pb.js";

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
  try {
    const headers = key ? { authorization: `Bearer ${key}` } : undefined;
    for await (const ev of client.generate(request, { headers, timeoutMs: 30_000 })) {
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
  } finally {
    endLine();
  }
  if (answer === undefined) {
    throw new Error("the stream ended without a final event");
  }
  console.log(`final: ${answer}`);
}

main().catch((err: unknown) => {
  const e = ConnectError.from(err);
  const info = e.findDetails(ErrorInfoSchema)[0];
  console.error(`error: ${Code[e.code]} ${info?.reason ?? ""}: ${e.rawMessage}`);
  const retry = e.findDetails(RetryInfoSchema)[0];
  if (retry?.retryDelay) {
    console.error(`the server suggests calling again in ${durationMs(retry.retryDelay)}ms`);
  }
  process.exit(1);
});
