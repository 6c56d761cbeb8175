// Streams a resumable reply from llmrelay with the TypeScript helper
// generateResumable (resumable.ts): when the connection drops in the middle
// of the reply, the helper picks the call up again after the last event it
// received, and the reply goes on where it stopped, neither repeated nor
// cut. It prints the text as it arrives, a line when it resumes, and the
// final message.
//
//   npm ci && npm run build && node dist/examples/ts/resume.js [text...]
//
// It calls mock/echo on $LLMRELAY_ADDR (default 127.0.0.1:50051, plaintext),
// with $LLMRELAY_API_KEY if set, one word every 25ms. Put something that
// drops connections between them to see it resume (scripts/test-clients.sh
// uses a proxy that cuts the first connection).

import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { GenerateRequestSchema, LLMService, Role } from "../../gen/ts/llmrelay/v1/llmrelay_pb.js";
import { generateResumable } from "./resumable.js";
import { reportError } from "./report.js";

const defaultText =
  "a resumable call keeps running on the server when the connection drops and the client picks it up again " +
  "after the last event it received so that nothing is lost and nothing is repeated";

async function main(): Promise<void> {
  const addr = process.env.LLMRELAY_ADDR || "127.0.0.1:50051";
  const text = process.argv.slice(2).join(" ") || defaultText;
  const key = process.env.LLMRELAY_API_KEY;
  const client = createClient(LLMService, createGrpcTransport({ baseUrl: `http://${addr}` }));
  const request = create(GenerateRequestSchema, {
    model: "mock/echo",
    messages: [{ role: Role.USER, content: text }],
    resumable: true,
    providerOptions: { chunk_delay_ms: 25 },
  });

  let lineOpen = false;
  let answer: string | undefined;
  const events = generateResumable(client, request, {
    headers: key ? { authorization: `Bearer ${key}` } : undefined,
    timeoutMs: 30_000,
    onResume: (after) => {
      if (lineOpen) process.stdout.write("\n");
      lineOpen = false;
      console.log(`resumed: after_sequence=${after}`);
    },
  });
  for await (const ev of events) {
    switch (ev.event.case) {
      case "delta":
        process.stdout.write(ev.event.value.text);
        lineOpen ||= ev.event.value.text !== "";
        break;
      case "final":
        answer = ev.event.value.message?.content ?? "";
        break;
    }
  }
  if (lineOpen) process.stdout.write("\n");
  if (answer === undefined) throw new Error("the stream ended without a final event");
  console.log(`final: ${answer}`);
}

main().catch(reportError);
