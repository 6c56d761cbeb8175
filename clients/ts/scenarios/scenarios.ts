// The client scenarios (clients/scenarios.md) for @llmrelay/client, run by
// make test-clients in a fresh project where the package's tarball is
// installed: one line per scenario, "ok NAME: ..." or "FAIL NAME: ...".

import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";

import { Client, Code, LLMRelayError, Reply, RetryReason, Role } from "@llmrelay/client";
import type { GenerateEvent, WillRetry } from "@llmrelay/client";

const addr = need("LLMRELAY_ADDR");
const cutAddr = need("LLMRELAY_CUT_ADDR");
const apiKey = need("LLMRELAY_API_KEY");

const TEXT = "the quick brown fox jumps over the lazy dog";
const RESUME_TEXT =
  "a resumable call keeps running on the server when the connection drops and the client picks it up again " +
  "after the last event it received so that nothing is lost and nothing is repeated";

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const relay = new Client(addr, { insecure: true, apiKey });
const user = (content: string) => [{ role: Role.USER, content }];

class Failed extends Error {}
function check(cond: boolean, what: string): asserts cond {
  if (!cond) throw new Failed(what);
}

/** Runs fn, expecting it to throw an LLMRelayError, and returns that error. */
async function failure(fn: () => Promise<unknown>): Promise<LLMRelayError> {
  try {
    await fn();
  } catch (err) {
    check(err instanceof LLMRelayError, `threw ${String(err)}, not an LLMRelayError`);
    return err;
  }
  throw new Failed("the call succeeded");
}

// The structured scenario's schema: the mock replies with its deterministic
// instance (docs/structured-output.md), TRIP, unless a fault's output
// replaces it; TRIP_INVALID, the first attempt's reply, has days that is not
// an integer and no sights, so the server re-asks.
const TRIP_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string", enum: ["Lisbon", "Porto"] },
    days: { type: "integer", minimum: 3, maximum: 7 },
    sights: { type: "array", items: { type: "string", enum: ["Belem", "Alfama", "Sintra"] }, minItems: 2, uniqueItems: true },
  },
  required: ["city", "days", "sights"],
  additionalProperties: false,
};
const TRIP = { city: "Lisbon", days: 3, sights: ["Belem", "Alfama"] };
const TRIP_INVALID = '{"city": "Lisbon", "days": "many"}';

/**
 * Whether part is what whole looked like while it was being written: its
 * members within whole's, its items a prefix of whole's, its strings a
 * prefix, anything else equal.
 */
function within(part: unknown, whole: unknown): boolean {
  if (Array.isArray(part)) {
    return Array.isArray(whole) && part.length <= whole.length && part.every((v, i) => within(v, whole[i]));
  }
  if (part !== null && typeof part === "object") {
    if (whole === null || typeof whole !== "object" || Array.isArray(whole)) return false;
    const w = whole as Record<string, unknown>;
    return Object.entries(part).every(([k, v]) => k in w && within(v, w[k]));
  }
  if (typeof part === "string") return typeof whole === "string" && whole.startsWith(part);
  return isDeepStrictEqual(part, whole);
}

const scenarios: [string, () => Promise<string>][] = [
  [
    "stream",
    async () => {
      const events: GenerateEvent[] = [];
      const reply = new Reply();
      for await (const ev of relay.generate({ model: "mock/echo", messages: user("hello brave new world") }, { timeoutMs: 30_000 })) {
        events.push(ev);
        reply.apply(ev);
      }
      check(events.every((e, i) => e.sequence === BigInt(i + 1)), "the events are not numbered 1, 2, ...");
      const content = reply.final.message?.content;
      check(reply.text === content && content === "hello brave new world", `text ${JSON.stringify(reply.text)}, final ${JSON.stringify(content)}`);
      return `${events.length} events, text equals the final: ${JSON.stringify(content)}`;
    },
  ],
  [
    "retry",
    async () => {
      const discards: string[] = [];
      const reply = await Reply.collect(
        relay.generate(
          {
            model: "mock/echo",
            messages: user(TEXT),
            retry: { initialBackoff: { nanos: 50_000_000 } },
            providerOptions: { faults: [{ drop_after: 2 }] },
          },
          { timeoutMs: 30_000 },
        ),
        { onWillRetry: (w, discarded) => w.discardPartial && discards.push(discarded) },
      );
      check(reply.retries.length === 1 && reply.retries[0].discardPartial, `will_retry events ${reply.retries.length}`);
      check(discards.length === 1 && discards[0] === "the quick ", `discarded ${JSON.stringify(discards)}`);
      const content = reply.final.message?.content;
      check(reply.text === content && content === TEXT, `text ${JSON.stringify(reply.text)}, final ${JSON.stringify(content)}`);
      return `one will_retry, discarded ${JSON.stringify(discards[0])}, text equals the final after ${reply.final.attempts} attempts`;
    },
  ],
  [
    "resume",
    async () => {
      const cut = new Client(cutAddr, { insecure: true, apiKey });
      const stream = cut.generate(
        { model: "mock/echo", messages: user(RESUME_TEXT), resumable: true, providerOptions: { chunk_delay_ms: 25 } },
        { timeoutMs: 60_000 },
      );
      // The stream itself refuses a gap in the sequence numbers (DATA_LOSS)
      // and skips what it yielded already: the text must come out whole.
      let streamed = "";
      const reply = await Reply.collect(stream, { onDelta: (d) => (streamed += d.text) });
      check(stream.resumes >= 1, "the connection was never cut, or the stream did not resume");
      check(streamed === RESUME_TEXT, `streamed ${JSON.stringify(streamed)}, want the reply once`);
      check(reply.final.message?.content === RESUME_TEXT, `final ${JSON.stringify(reply.final.message?.content)}`);
      return `resumed ${stream.resumes} time(s); the reply streamed once, whole, and equals the final`;
    },
  ],
  [
    "field-violations",
    async () => {
      const e = await failure(() => Reply.collect(relay.generate({ model: "mock/echo", messages: [{ content: "no role" }] })));
      const fields = e.fieldViolations.map((v) => v.field);
      check(e.code === Code.InvalidArgument && e.reason === "INVALID_REQUEST", `${e.message}`);
      check(fields.includes("messages[0].role"), `violations ${JSON.stringify(e.fieldViolations)}`);
      return `${e.codeName} ${e.reason}, violations ${fields.join(", ")}`;
    },
  ],
  [
    "deadline",
    async () => {
      const start = Date.now();
      const e = await failure(() =>
        Reply.collect(
          relay.generate({ model: "mock/echo", messages: user("slow"), providerOptions: { faults: [{ first_delay_ms: 60_000 }] } }, { timeoutMs: 500 }),
        ),
      );
      check(e.code === Code.DeadlineExceeded, `${e.message}`);
      check(Date.now() - start < 30_000, "the deadline did not end the call");
      return `${e.codeName} after a 500ms deadline`;
    },
  ],
  [
    "pushback",
    async () => {
      const requestId = randomUUID();
      const e = await failure(() =>
        Reply.collect(
          relay.generate(
            { model: "mock/echo", messages: user("hi"), requestId, providerOptions: { faults: [{ status: 503, should_retry: false }] } },
            { timeoutMs: 30_000 },
          ),
        ),
      );
      check(e.code === Code.Unavailable && e.reason === "PROVIDER_RETRY_DISALLOWED", `${e.message}`);
      return `${e.codeName} ${e.reason}, not called again request_id=${requestId}`;
    },
  ],
  [
    "unauthenticated",
    async () => {
      const anonymous = new Client(addr, { insecure: true });
      const e = await failure(() => Reply.collect(anonymous.generate({ model: "mock/echo", messages: user("hi") })));
      check(e.code === Code.Unauthenticated && e.reason === "CREDENTIALS_MISSING", `${e.message}`);
      return `${e.codeName} ${e.reason}`;
    },
  ],
  [
    "server-tools",
    async () => {
      const list = await relay.listTools({}, { timeoutMs: 30_000 });
      check(
        list.tools.some((t) => t.name === "everything/echo" && t.available),
        `listTools: ${JSON.stringify(list.tools.map((t) => [t.name, t.available]))}`,
      );
      const discards: string[] = [];
      let before = -1; // the long operation's progress events before its result
      const progress = new Map<string, number>();
      const reply = await Reply.collect(
        relay.generate(
          {
            model: "mock/echo",
            messages: user("use the tools"),
            serverTools: ["everything/echo", "everything/trigger-long-running-operation"],
            retry: { initialBackoff: { nanos: 50_000_000 } },
            // Turn 1 says a few words and calls both tools; turn 2 answers
            // from their results, its first attempt (2) dropping after one
            // delta.
            providerOptions: {
              script: [
                {
                  text: "Let me ask the tools. ",
                  tool_calls: [
                    { name: "everything__echo", arguments: { message: "hello" } },
                    { name: "everything__trigger-long-running-operation", arguments: { duration: 1, steps: 2 } },
                  ],
                },
              ],
              faults: [{}, { drop_after: 1 }, {}],
            },
          },
          { timeoutMs: 60_000 },
        ),
        {
          onWillRetry: (w, discarded) => w.discardPartial && discards.push(discarded),
          onToolProgress: (p) => progress.set(p.toolCallId, (progress.get(p.toolCallId) ?? 0) + 1),
          onToolResult: (r) => {
            if (r.name === "everything/trigger-long-running-operation") before = progress.get(r.toolCallId) ?? 0;
          },
        },
      );
      const [turn1] = reply.earlierTurns;
      const results = (turn1?.toolResults ?? []).map((r) => `${r.name}: ${r.content.split(".")[0]}`).sort();
      check(
        JSON.stringify(results) === JSON.stringify(["everything/echo: Echo: hello", "everything/trigger-long-running-operation: Long running operation completed"]),
        `turn 1's tool results ${JSON.stringify(results)}`,
      );
      check(before >= 2, `${before} tool_progress events before the long operation's result, want 2 or more`);
      check(discards.length === 1 && discards[0] === "Echo: ", `discarded ${JSON.stringify(discards)}, want turn 2's first delta only`);
      check(turn1.text === "Let me ask the tools. ", `turn 1's text ${JSON.stringify(turn1.text)}`);
      const content = reply.final.message?.content ?? "";
      check(reply.turn === 2 && reply.text === content && content.startsWith("Echo: hello\n"), `text ${JSON.stringify(reply.text)}, final ${JSON.stringify(content)}`);
      check(
        reply.final.turns === 2 && reply.final.transcript.length === 4,
        `final: ${reply.final.turns} turns, ${reply.final.transcript.length} transcript messages; want 2 and 4`,
      );
      return (
        `listed everything/echo; 2 tool results, ${before} progress events before the long one's; turn 2's retry discarded ` +
        `${JSON.stringify(discards[0])} only; the text equals the final; ${reply.final.turns} turns, ${reply.final.transcript.length} messages in the transcript`
      );
    },
  ],
  [
    "structured",
    async () => {
      // partials are the current attempt's partial objects; a will_retry
      // with discard_partial voids them, and Reply drops its own.
      let partials: unknown[] = [];
      const discarded: unknown[] = [];
      const retries: WillRetry[] = [];
      let kept: unknown = "not seen";
      const reply = await Reply.collect(
        relay.generate(
          {
            model: "mock/echo",
            messages: user("plan a short trip"),
            responseFormat: { name: "trip", jsonSchema: TRIP_SCHEMA, streamPartialObjects: true },
            providerOptions: { faults: [{ output: TRIP_INVALID }] },
          },
          { timeoutMs: 30_000 },
        ),
        {
          onPartialObject: (object) => partials.push(object),
          onWillRetry: (w, _discarded, r) => {
            retries.push(w);
            if (w.discardPartial) {
              discarded.push(...partials);
              partials = [];
              kept = r.partialObject;
            }
          },
        },
      );
      const object = reply.object;
      check(
        retries.length === 1 && retries[0].discardPartial && retries[0].reason === RetryReason.INVALID_OUTPUT,
        `${retries.length} will_retry events, want one, INVALID_OUTPUT with discardPartial`,
      );
      check(kept === undefined, `reply.partialObject after the discard: ${JSON.stringify(kept)}, want undefined`);
      const last = discarded.at(-1);
      check(discarded.length > 0 && !within(last, object), `the first attempt's partial objects ${JSON.stringify(discarded)}: want the invalid one, which the final contradicts`);
      check(isDeepStrictEqual(object, TRIP), `final object ${JSON.stringify(object)}, want ${JSON.stringify(TRIP)}`);
      check(
        reply.final.attempts === 2 && reply.final.validationRetries === 1,
        `final: ${reply.final.attempts} attempts, ${reply.final.validationRetries} validation retries; want 2 and 1`,
      );
      check(partials.length >= 2 && !isDeepStrictEqual(partials[0], partials.at(-1)), `partial objects ${JSON.stringify(partials)}: want at least two different ones`);
      for (const [i, p] of partials.entries()) {
        const next = i + 1 < partials.length ? partials[i + 1] : object;
        check(within(p, next), `partial object ${JSON.stringify(p)} is not within the next, ${JSON.stringify(next)}`);
      }
      return (
        `one re-ask discarded ${discarded.length} partial object(s) ending in ${JSON.stringify(last)}; ` +
        `then ${partials.length} grew to the final object, which equals ${JSON.stringify(object)}`
      );
    },
  ],
  [
    "embed",
    async () => {
      const inputs = ["the cat sat", "a dog"];
      const resp = await relay.embed({ model: "mock/echo", inputs, dimensions: 4, providerOptions: { faults: [{ status: 503 }] } }, { timeoutMs: 30_000 });
      check(resp.embeddings.length === inputs.length, `${resp.embeddings.length} embeddings, want ${inputs.length}`);
      for (const [i, e] of resp.embeddings.entries()) {
        const norm = e.values.reduce((sum, x) => sum + x * x, 0);
        check(e.values.length === 4 && Math.abs(norm - 1) < 1e-5, `embedding ${i}: ${e.values.length} values of norm ${norm}, want 4 of norm 1`);
      }
      check(resp.provider === "mock" && resp.model === "echo" && resp.attempts === 2, `provider ${resp.provider}, model ${resp.model}, attempts ${resp.attempts}`);
      check(resp.usage?.inputTokens === 5n, `input tokens ${resp.usage?.inputTokens}`);
      // The vector of a text does not depend on the others: the order held.
      const alone = await relay.embed({ model: "mock/echo", inputs: ["a dog"], dimensions: 4 });
      check(JSON.stringify(alone.embeddings[0].values) === JSON.stringify(resp.embeddings[1].values), "embeddings[1] is not the embedding of inputs[1]");
      const e = await failure(() => relay.embed({ model: "mock/echo", inputs: ["the cat sat", ""] }));
      const fields = e.fieldViolations.map((v) => v.field);
      check(e.code === Code.InvalidArgument && e.reason === "INVALID_REQUEST" && fields.includes("inputs[1]"), `empty input: ${e.message}; violations ${fields}`);
      return `${resp.embeddings.length} vectors of 4 in order, ${resp.usage?.inputTokens} input tokens, ${resp.attempts} attempts; an empty input: ${e.codeName} ${e.reason} ${fields.join(", ")}`;
    },
  ],
  [
    "models",
    async () => {
      // mock's models, and ollama, configured without a models list, among
      // the providers that accept any model name, with the key's pattern
      // that reaches it: listModels has the models alone, listModelsResponse all.
      const ids = (await relay.listModels({}, { timeoutMs: 30_000 })).map((m) => m.id);
      check(ids.includes("mock/echo") && !ids.some((id) => id.startsWith("ollama/")), `listModels ${JSON.stringify(ids)}: want mock/echo, and none of ollama's`);
      const resp = await relay.listModelsResponse({}, { timeoutMs: 30_000 });
      const listed = resp.models.map((m) => m.id);
      check(JSON.stringify(listed) === JSON.stringify(ids), `listModelsResponse's models ${JSON.stringify(listed)}, listModels' ${JSON.stringify(ids)}`);
      const anyModel = resp.anyModelProviders.map((p) => `${p.provider} (${p.providerKind}) ${JSON.stringify(p.keyPatterns)}`);
      check(
        JSON.stringify(anyModel) === JSON.stringify(['ollama (openai) ["ollama/llama3*"]']),
        `anyModelProviders ${JSON.stringify(anyModel)}, want ollama (openai) with the key's pattern ollama/llama3*`,
      );
      return `${ids.length} models, mock/echo among them; any model name: ${anyModel[0]}`;
    },
  ],
];

let failed = 0;
for (const [name, run] of scenarios) {
  try {
    console.log(`ok ${name}: ${await run()}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
