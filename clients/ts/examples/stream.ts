// Streams a reply from llmrelay with @llmrelay/client, the way every client
// should show one: the text as it arrives; on a will_retry, a line saying
// what is dropped when the server says discard_partial (the next attempt
// starts over, and Reply has already dropped it); then the final message,
// which is the answer.
//
//   node stream.js [text...]
//
// It calls mock/echo on $LLMRELAY_ADDR (default 127.0.0.1:50051, plaintext),
// with $LLMRELAY_API_KEY if set, and a fault plan that drops the first
// attempt's connection after two deltas, so the server restarts the reply.

import { Client, codeName, LLMRelayError, Reply, RetryReason, Role } from "@llmrelay/client";

const addr = process.env.LLMRELAY_ADDR || "127.0.0.1:50051";
const text = process.argv.slice(2).join(" ") || "the quick brown fox jumps over the lazy dog";
const relay = new Client(addr, { insecure: true, apiKey: process.env.LLMRELAY_API_KEY });

let lineOpen = false; // the current line holds streamed text
const endLine = () => {
  if (lineOpen) process.stdout.write("\n");
  lineOpen = false;
};

try {
  const reply = await Reply.collect(
    relay.generate(
      {
        model: "mock/echo",
        messages: [{ role: Role.USER, content: text }],
        retry: { initialBackoff: { nanos: 50_000_000 } },
        // The first attempt drops after two deltas; the second one runs normally.
        providerOptions: { faults: [{ drop_after: 2 }] },
      },
      { timeoutMs: 30_000 },
    ),
    {
      onDelta: (d) => {
        process.stdout.write(d.text);
        lineOpen ||= d.text !== "";
      },
      onWillRetry: (w, discarded) => {
        // A terminal cannot unprint: end the line, say what is dropped, and
        // stream the next attempt on a fresh line.
        endLine();
        const delayMs = w.delay ? Number(w.delay.seconds) * 1000 + Math.floor(w.delay.nanos / 1e6) : 0;
        console.log(
          `will_retry: next_attempt=${w.nextAttempt} delay_ms=${delayMs} reason=RETRY_REASON_${RetryReason[w.reason]}` +
            ` discard_partial=${w.discardPartial} discarded=${JSON.stringify(discarded)}`,
        );
      },
    },
  );
  endLine();
  console.log(`final: ${reply.final.message?.content}`);
} catch (err) {
  endLine();
  const e = LLMRelayError.from(err);
  console.error(`error: ${codeName(e.code)} ${e.reason}: ${e.rawMessage}`);
  if (e.retryDelayMs !== undefined) console.error(`the server suggests calling again in ${e.retryDelayMs}ms`);
  process.exitCode = 1;
}
