// Tests of what the scenarios against the real server cannot reach (yet):
// re-issuing a resumable call the server lost, the service config's retry
// with and without the server's pushback, and the reply helper's turns
// event by event. An in-process gRPC server (connect-node's, over HTTP/2)
// plays llmrelay.

import assert from "node:assert/strict";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";

import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

import { resumeBackoffMs } from "../src/client.js";
import { Client, LLMRelayError, Reply } from "../src/index.js";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "../src/gen/google/rpc/error_details_pb.js";
import type { GenerateEvent, GenerateRequest } from "../src/gen/llmrelay/v1/llmrelay_pb.js";
import { GetKeyResponseSchema, KeyService } from "../src/gen/llmrelay/admin/v1/admin_pb.js";
import { GenerateEventSchema, GenerateRequestSchema, LLMService, ListModelsResponseSchema, ListToolsResponseSchema, Role } from "../src/gen/llmrelay/v1/llmrelay_pb.js";

/** The calls the fake server received, by model. */
const calls = new Map<string, GenerateRequest[]>();
/** The Resume calls it received: "<request id> after <sequence>". */
const resumed: string[] = [];
/** The request ids of the fake/talking calls whose client went away, as the server saw it. */
const talkingGone: string[] = [];
/** The id the fake server gives the call of fake/route-resumable. */
const ROUTE_CALL_ID = "7b0e7c55-3f0c-4d8e-9a40-6a3f3c7c2f10";
/** The id of a call of fake/down-after-two, whose Resume always fails. */
const DOWN_CALL_ID = "0c6d7e4a-2b1f-4f5e-8a7d-3c2b1a0f9e8d";

function* reply(text: string): Generator<GenerateEvent> {
  const words = text.split(/(?<= )/);
  let n = 0;
  for (const w of words) {
    yield create(GenerateEventSchema, { sequence: BigInt(++n), attempt: 1, event: { case: "delta", value: { text: w } } });
  }
  yield create(GenerateEventSchema, {
    sequence: BigInt(++n),
    attempt: 1,
    event: { case: "final", value: { message: { role: Role.ASSISTANT, content: text }, attempts: 1 } },
  });
}

function llmrelayError(code: Code, reason: string, extra: ConstructorParameters<typeof ConnectError>[3] = []): ConnectError {
  return new ConnectError(`fake ${reason}`, code, undefined, [
    { desc: ErrorInfoSchema, value: { reason, domain: "llmrelay", metadata: { request_id: "from-the-server" } } },
    ...(extra ?? []),
  ]);
}

function routes(router: ConnectRouter): void {
  router.service(LLMService, {
    async *generate(req: GenerateRequest, ctx: HandlerContext) {
      const seen = calls.get(req.model) ?? [];
      seen.push(req);
      calls.set(req.model, seen);
      switch (req.model) {
        case "fake/lost": // the first call is lost after two words; the second one runs
          if (seen.length === 1) {
            yield* [...reply("lost words here")].slice(0, 2);
            throw llmrelayError(Code.Aborted, "RESUMABLE_CALL_LOST");
          }
          yield* reply("the whole reply");
          return;
        case "fake/dropped-then-not-found": // dropped after two words; its Resume finds nothing; sent again, served
          ctx.responseHeader.set("llmrelay-resumable", "true");
          if (seen.length === 1) {
            yield* [...reply("dropped words here")].slice(0, 2);
            throw new ConnectError("the connection broke", Code.Unavailable);
          }
          yield* reply("the whole reply");
          return;
        case "fake/route-resumable": // a route made it resumable, with an id of the server's; the connection drops before any event
          if (seen.length === 1) {
            ctx.responseHeader.set("llmrelay-resumable", "true");
            ctx.responseHeader.set("llmrelay-request-id", ROUTE_CALL_ID);
            throw new ConnectError("the connection broke", Code.Unavailable);
          }
          yield* reply("another call");
          return;
        case "fake/talking": // resumable: two words, then the stream stays open until the client goes away
          ctx.responseHeader.set("llmrelay-resumable", "true");
          yield* [...reply("two words")].slice(0, 2);
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          talkingGone.push(req.requestId);
          return;
        case "fake/down-after-two": // resumable, dropped after two words; its Resume finds the server down
          ctx.responseHeader.set("llmrelay-resumable", "true");
          yield* [...reply("two words and more")].slice(0, 2);
          throw new ConnectError("the connection broke", Code.Unavailable);
        case "fake/cut-after-final": // the whole reply, then the connection breaks before the status
          ctx.responseHeader.set("llmrelay-resumable", "true");
          yield* reply("the whole reply");
          throw new ConnectError("the connection broke", Code.Unavailable);
        case "fake/unavailable-once": // UNAVAILABLE without pushback, then served
          if (seen.length === 1) throw new ConnectError("a hop failed", Code.Unavailable);
          yield* reply("served");
          return;
        case "fake/pushback": // llmrelay decided against another attempt
          ctx.responseTrailer.set("grpc-retry-pushback-ms", "-1");
          throw llmrelayError(Code.Unavailable, "PROVIDER_RETRY_DISALLOWED");
        case "fake/pushback-wait": // busy: call again in 10ms
          if (seen.length === 1) {
            ctx.responseTrailer.set("grpc-retry-pushback-ms", "10");
            throw llmrelayError(Code.Unavailable, "PROVIDER_BUSY", [{ desc: RetryInfoSchema, value: { retryDelay: { nanos: 10_000_000 } } }]);
          }
          yield* reply("served");
          return;
        case "fake/tools": {
          // Turn 1 says a few words, calls a server tool, which reports
          // progress and returns; turn 2's first attempt fails after a word
          // and is retried.
          let n = 0n;
          const ev = (turn: number, attempt: number, event: MessageInitShape<typeof GenerateEventSchema>["event"]) =>
            create(GenerateEventSchema, { sequence: ++n, turn, attempt, event });
          yield ev(1, 1, { case: "delta", value: { text: "Let me ask. " } });
          yield ev(1, 1, { case: "delta", value: { toolCall: { id: "mock_1_0", name: "everything__echo", argumentsDelta: '{"message":"hello"}', signature: "sig-1" } } });
          yield ev(1, 1, { case: "toolProgress", value: { toolCallId: "mock_1_0", name: "everything/echo", progress: 1, total: 2 } });
          yield ev(0, 0, { case: "heartbeat", value: {} });
          yield ev(1, 1, { case: "toolResult", value: { toolCallId: "mock_1_0", name: "everything/echo", content: "Echo: hello", attempts: 1 } });
          yield ev(2, 2, { case: "delta", value: { text: "Echo: " } });
          yield ev(2, 2, { case: "willRetry", value: { nextAttempt: 3, discardPartial: true } });
          yield ev(2, 3, { case: "delta", value: { text: "Echo: " } });
          yield ev(2, 3, { case: "delta", value: { text: "hello" } });
          yield ev(2, 3, { case: "final", value: { message: { role: Role.ASSISTANT, content: "Echo: hello" }, attempts: 3, turns: 2 } });
          return;
        }
        case "fake/structured": {
          // A structured reply: a partial object, then the final with the validated object.
          const object = { city: "Paris", days: [1, 2], sunny: true, note: null };
          yield create(GenerateEventSchema, { sequence: 1n, turn: 1, attempt: 1, event: { case: "delta", value: { text: '{"city":"Par' } } });
          yield create(GenerateEventSchema, { sequence: 2n, turn: 1, attempt: 1, event: { case: "partialObject", value: fromJson(ValueSchema, { city: "Par" }) } });
          yield create(GenerateEventSchema, {
            sequence: 3n,
            turn: 1,
            attempt: 1,
            event: { case: "final", value: { message: { role: Role.ASSISTANT, content: JSON.stringify(object) }, object: fromJson(ValueSchema, object), attempts: 1 } },
          });
          return;
        }
        case "fake/id-in-trailer": // as llmrelay names a call that is not resumable
          ctx.responseTrailer.set("llmrelay-request-id", req.requestId || "made-up-by-the-server");
          yield* reply("served");
          return;
        case "fake/invalid":
          throw llmrelayError(Code.InvalidArgument, "INVALID_REQUEST", [
            { desc: BadRequestSchema, value: { fieldViolations: [{ field: "messages[0].role", description: "must be set", reason: "role.defined" }] } },
          ]);
        default:
          throw new ConnectError(`no such fake model ${req.model}`, Code.NotFound);
      }
    },
    listTools(req, ctx) {
      listTimeouts.push(ctx.timeoutMs());
      calls.set("listTools", [...(calls.get("listTools") ?? []), create(GenerateRequestSchema, { model: req.server })]);
      if ((calls.get("listTools") ?? []).length === 1) throw new ConnectError("a hop failed", Code.Unavailable);
      return create(ListToolsResponseSchema, { tools: [{ name: "everything/echo", server: "everything", available: true }], servers: [{ name: "everything", available: true, tools: 1 }] });
    },
    // mock's models, and openai, which accepts any model name, with the key's patterns that reach it.
    listModels(_req, ctx) {
      listTimeouts.push(ctx.timeoutMs());
      return create(ListModelsResponseSchema, {
        models: [{ id: "mock/echo", provider: "mock", providerKind: "mock", name: "echo" }],
        anyModelProviders: [{ provider: "openai", providerKind: "openai", keyPatterns: ["openai/gpt-4o*"] }],
      });
    },
    async *resume(req) {
      resumed.push(`${req.requestId} after ${req.afterSequence}`);
      if (req.requestId === DOWN_CALL_ID) throw new ConnectError("connection refused", Code.Unavailable);
      if (req.requestId === ROUTE_CALL_ID) {
        yield* reply("the call itself");
        return;
      }
      throw llmrelayError(Code.NotFound, "RESUMABLE_CALL_NOT_FOUND");
    },
  });
}

/** The deadlines (ms left, as the fake server received them) of the listing calls. */
const listTimeouts: (number | undefined)[] = [];

/** The authorization headers the fake admin API's GetKey received. */
const adminAuth: string[] = [];

function adminRoutes(router: ConnectRouter): void {
  router.service(KeyService, {
    getKey(req, ctx) {
      adminAuth.push(ctx.requestHeader.get("authorization") ?? "");
      return create(GetKeyResponseSchema, { key: { name: req.name, scopes: ["admin"] } });
    },
  });
}

let server: http2.Http2Server;
let relay: Client;

before(async () => {
  server = http2.createServer(connectNodeAdapter({ routes: (router) => (routes(router), adminRoutes(router)) }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  relay = new Client(`127.0.0.1:${(server.address() as AddressInfo).port}`, { insecure: true, apiKey: "k" });
});

after(() => {
  relay.close();
  server.close();
});

const ask = (model: string) => ({ model, messages: [{ role: Role.USER, content: "hi" }], resumable: true });

describe("a resumable call the server lost", () => {
  test("with reissueLostCall, is sent again with the same request_id, and Reply drops what it showed", async () => {
    calls.delete("fake/lost");
    const discarded: string[] = [];
    const stream = relay.generate(ask("fake/lost"), { reissueLostCall: true, timeoutMs: 10_000 });
    const r = await Reply.collect(stream, { onReissue: (cause, text) => discarded.push(`${cause.reason}: ${text}`) });
    assert.equal(r.text, "the whole reply");
    assert.equal(r.final.message?.content, "the whole reply");
    assert.deepEqual(discarded, ["RESUMABLE_CALL_LOST: lost words "]);
    assert.equal(stream.reissues, 1);
    const sent = calls.get("fake/lost") ?? [];
    assert.equal(sent.length, 2);
    assert.ok(sent[0].requestId !== "" && sent[0].requestId === sent[1].requestId, "the same request_id both times");
  });

  test("found missing by the stream's own Resume after a drop, is sent again when asked", async () => {
    calls.delete("fake/dropped-then-not-found");
    const stream = relay.generate(ask("fake/dropped-then-not-found"), { reissueLostCall: true, timeoutMs: 10_000 });
    const r = await Reply.collect(stream);
    assert.equal(r.text, "the whole reply");
    assert.deepEqual([stream.resumes, stream.reissues], [1, 1]);
    assert.equal(calls.get("fake/dropped-then-not-found")?.length, 2);
  });

  test("made resumable by the server, dropped before any event, is resumed by the id its headers gave, not run again", async () => {
    calls.delete("fake/route-resumable");
    resumed.length = 0;
    const stream = relay.generate({ ...ask("fake/route-resumable"), resumable: undefined }, { timeoutMs: 10_000 });
    const r = await Reply.collect(stream);
    assert.equal(r.final.message?.content, "the call itself");
    assert.deepEqual([stream.requestId, stream.resumes], [ROUTE_CALL_ID, 1]);
    assert.deepEqual(resumed, [`${ROUTE_CALL_ID} after 0`]);
    assert.equal(calls.get("fake/route-resumable")?.length, 1, "one Generate: the call was not started twice");
  });

  test("without it, ends with the typed error and is not sent again", async () => {
    calls.delete("fake/lost");
    await assert.rejects(Reply.collect(relay.generate(ask("fake/lost"))), (e: unknown) => {
      assert.ok(e instanceof LLMRelayError);
      assert.equal(e.code, Code.Aborted);
      assert.equal(e.reason, "RESUMABLE_CALL_LOST");
      assert.equal(e.requestId, "from-the-server");
      return true;
    });
    assert.equal(calls.get("fake/lost")?.length, 1);
  });
});

describe("the service config's retry before the first event", () => {
  test("retries UNAVAILABLE without pushback", async () => {
    calls.delete("fake/unavailable-once");
    const r = await Reply.collect(relay.generate({ ...ask("fake/unavailable-once"), resumable: false }, { timeoutMs: 10_000 }));
    assert.equal(r.final.message?.content, "served");
    assert.equal(calls.get("fake/unavailable-once")?.length, 2);
  });

  test("follows pushback -1: one call", async () => {
    calls.delete("fake/pushback");
    await assert.rejects(Reply.collect(relay.generate({ ...ask("fake/pushback"), resumable: false })), /PROVIDER_RETRY_DISALLOWED/);
    assert.equal(calls.get("fake/pushback")?.length, 1);
  });

  test("calls again after a pushback delay", async () => {
    calls.delete("fake/pushback-wait");
    const r = await Reply.collect(relay.generate({ ...ask("fake/pushback-wait"), resumable: false }, { timeoutMs: 10_000 }));
    assert.equal(r.final.message?.content, "served");
    assert.equal(calls.get("fake/pushback-wait")?.length, 2);
  });

  test("is not throttled by failures it would not retry (as gRPC's retry throttling)", async () => {
    calls.delete("fake/unavailable-once");
    const own = new Client(`127.0.0.1:${(server.address() as AddressInfo).port}`, { insecure: true });
    for (let i = 0; i < 8; i++) {
      await assert.rejects(Reply.collect(own.generate({ ...ask("fake/invalid"), resumable: false })), /INVALID_ARGUMENT/);
    }
    const r = await Reply.collect(own.generate({ ...ask("fake/unavailable-once"), resumable: false }, { timeoutMs: 10_000 }));
    assert.equal(r.final.message?.content, "served");
    assert.equal(calls.get("fake/unavailable-once")?.length, 2);
    own.close();
  });

  test("is off with retry: false", async () => {
    calls.delete("fake/unavailable-once");
    const once = new Client(`127.0.0.1:${(server.address() as AddressInfo).port}`, { insecure: true, retry: false });
    await assert.rejects(Reply.collect(once.generate({ ...ask("fake/unavailable-once"), resumable: false })), /UNAVAILABLE/);
    assert.equal(calls.get("fake/unavailable-once")?.length, 1);
    once.close();
  });
});

test("close() ends a resumable call in progress with CANCELLED, never resumed; later calls fail the same way", async () => {
  calls.delete("fake/talking");
  const own = new Client(`127.0.0.1:${(server.address() as AddressInfo).port}`, { insecure: true });
  const stream = own.generate(ask("fake/talking"), { timeoutMs: 10_000 });
  const cancelled = (e: unknown) => e instanceof LLMRelayError && e.code === Code.Canceled;
  await assert.rejects(Reply.collect(stream, { onDelta: (d) => d.text === "words" && own.close() }), cancelled);
  assert.equal(stream.resumes, 0);
  await assert.rejects(Reply.collect(own.generate(ask("fake/talking"))), cancelled);
  await assert.rejects(own.listTools(), cancelled);
  await assert.rejects(own.listModelsResponse(), cancelled);
  assert.equal(calls.get("fake/talking")?.length, 1);
});

describe("leaving a stream early ends the call at the server", () => {
  /** Waits (up to 5s) for the server to see the client of call `id` go away. */
  async function serverSawGone(id: string): Promise<void> {
    for (let i = 0; i < 100 && !talkingGone.includes(id); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(talkingGone.includes(id), "the call still runs at the server: the provider would generate to the end");
  }

  test("a for await loop left with break", async () => {
    const stream = relay.generate({ ...ask("fake/talking"), resumable: false, requestId: "b7c1f1a4-0d53-4c4e-9b3f-0a1e2d3c4b01" });
    for await (const ev of stream) {
      assert.equal(ev.sequence, 1n);
      break;
    }
    await serverSawGone(stream.requestId);
  });

  test("Reply.collect whose hook threw", async () => {
    const stream = relay.generate({ ...ask("fake/talking"), resumable: false, requestId: "b7c1f1a4-0d53-4c4e-9b3f-0a1e2d3c4b02" });
    await assert.rejects(Reply.collect(stream, { onDelta: () => { throw new Error("the screen is gone"); } }), /the screen is gone/);
    await serverSawGone(stream.requestId);
  });
});

test("the admin API's stubs go over the client's transport, with its API key", async () => {
  const resp = await createClient(KeyService, relay.transport).getKey({ name: "ops" }, { timeoutMs: 10_000 });
  assert.deepEqual([resp.key?.name, resp.key?.scopes], ["ops", ["admin"]]);
  assert.deepEqual(adminAuth, ["Bearer k"]);
});

test("a typed error carries the reason, the retry delay and the field violations", async () => {
  const e = await Reply.collect(relay.generate({ ...ask("fake/invalid"), resumable: false })).then(
    () => assert.fail("the call succeeded"),
    (err: unknown) => err as LLMRelayError,
  );
  assert.equal(e.codeName, "INVALID_ARGUMENT");
  assert.equal(e.reason, "INVALID_REQUEST");
  assert.ok(e.fromLLMRelay);
  assert.deepEqual(e.fieldViolations, [{ field: "messages[0].role", description: "must be set", reason: "role.defined" }]);
  assert.equal(e.message, "INVALID_ARGUMENT INVALID_REQUEST: fake INVALID_REQUEST");
});

// The deadline leaves a loaded machine ample time for the call's two words,
// its drop and the Resume, which all come before it (with 1s, a slow start
// used it up before the drop: no resume, and the test failed).
test("a resume backoff longer than the time left ends the call at its deadline, not after the backoff", async () => {
  const saved = { ...resumeBackoffMs };
  Object.assign(resumeBackoffMs, { min: 60_000, max: 60_000 });
  try {
    const started = Date.now();
    const stream = relay.generate({ ...ask("fake/down-after-two"), requestId: DOWN_CALL_ID }, { timeoutMs: 5000 });
    await assert.rejects(Reply.collect(stream), (e: unknown) => e instanceof LLMRelayError && e.code === Code.DeadlineExceeded);
    assert.equal(stream.resumes, 1); // at once; the next one would come after the deadline
    assert.ok(Date.now() - started < 30_000, "ended after the 60s backoff, not at the 5s deadline");
  } finally {
    Object.assign(resumeBackoffMs, saved);
  }
});

test("Reply.collect returns the final even if the stream breaks after it, which is not resumed (as Go's Collect)", async () => {
  resumed.length = 0;
  const stream = relay.generate(ask("fake/cut-after-final"), { timeoutMs: 10_000 });
  const r = await Reply.collect(stream);
  assert.equal(r.final.message?.content, "the whole reply");
  assert.deepEqual([stream.resumes, resumed], [0, []]);
});

test("Reply.object is the final's structured object as plain JSON; undefined without one", async () => {
  const partials: unknown[] = [];
  const r = await Reply.collect(relay.generate({ ...ask("fake/structured"), resumable: false }, { timeoutMs: 10_000 }), {
    onPartialObject: (o, reply) => partials.push([o, reply.object]),
  });
  assert.deepEqual(partials, [[{ city: "Par" }, undefined]]);
  assert.deepEqual(r.object, { city: "Paris", days: [1, 2], sunny: true, note: null });
  assert.deepEqual(r.object, JSON.parse(r.final.message?.content ?? ""));
  const plain = await Reply.collect(relay.generate({ ...ask("fake/id-in-trailer"), resumable: false }, { timeoutMs: 10_000 }));
  assert.equal(plain.object, undefined);
});

describe("Reply.collect takes any stream of events, as Go's Collect and Python's", () => {
  test("the generated stub's own stream, with the hooks and the turns", async () => {
    const seen: string[] = [];
    const r = await Reply.collect(relay.stub.generate({ ...ask("fake/tools"), resumable: false }, { timeoutMs: 10_000 }), {
      onDelta: (d) => seen.push(`delta ${JSON.stringify(d.text)}`),
      onWillRetry: (_w, discarded) => seen.push(`discard ${JSON.stringify(discarded)}`),
    });
    assert.deepEqual(seen.filter((s) => s.startsWith("discard")), ['discard "Echo: "']);
    assert.deepEqual([r.text, r.final.message?.content, r.earlierTurns.map((t) => t.text)], ["Echo: hello", "Echo: hello", ["Let me ask. "]]);
  });

  test("the stub's stream that fails: the typed error", async () => {
    const err = await Reply.collect(relay.stub.generate(ask("fake/invalid"), { timeoutMs: 10_000 })).catch((e: unknown) => e);
    assert.ok(err instanceof LLMRelayError, `got ${String(err)}`);
    assert.deepEqual([err.codeName, err.reason, err.fieldViolations.map((v) => v.field)], ["INVALID_ARGUMENT", "INVALID_REQUEST", ["messages[0].role"]]);
  });

  test("events of the caller's own, without a final: the typed error", async () => {
    async function* events() {
      yield* [...reply("cut short")].slice(0, 2);
    }
    const err = await Reply.collect(events()).catch((e: unknown) => e);
    assert.ok(err instanceof LLMRelayError, `got ${String(err)}`);
    assert.deepEqual([err.codeName, err.requestId], ["UNKNOWN", ""]);
  });
});

test("a completed call that named no request id has the server's, from the trailer", async () => {
  let stream = relay.generate({ ...ask("fake/id-in-trailer"), resumable: false }, { timeoutMs: 10_000 });
  await Reply.collect(stream);
  assert.equal(stream.requestId, "made-up-by-the-server");
  stream = relay.generate({ ...ask("fake/id-in-trailer"), resumable: false }, { timeoutMs: 10_000 });
  for await (const _ of stream);
  assert.equal(stream.requestId, "made-up-by-the-server");
  const own = "5d1b8a4e-0c7e-4f0a-9e57-2b6f0d3c9a11";
  stream = relay.generate({ ...ask("fake/id-in-trailer"), resumable: false, requestId: own }, { timeoutMs: 10_000 });
  await Reply.collect(stream);
  assert.equal(stream.requestId, own);
});

test("resume takes the sequence as a number too (JavaScript)", async () => {
  const r = await Reply.collect(relay.resume(ROUTE_CALL_ID, 2 as unknown as bigint, { timeoutMs: 10_000 }));
  assert.equal(r.text, "itself");
  assert.equal(r.final.message?.content, "the call itself");
});

test("contradictory options are refused, never ignored", () => {
  assert.throws(() => new Client("127.0.0.1:1", { insecure: true, tls: { ca: "x" } }), /tls options for a plaintext connection \(insecure\)/);
  assert.throws(() => new Client("http://127.0.0.1:1", { tls: {} }), /tls options for a plaintext connection \(an http:\/\/ address\)/);
  assert.throws(() => new Client("https://127.0.0.1:1", { insecure: true }), /an https:\/\/ address and insecure/);
  new Client("127.0.0.1:1", { tls: {} }).close();
});

test("codeName is gRPC's name of the code, as in every llmrelay client", () => {
  const names = [Code.Canceled, Code.DeadlineExceeded, Code.Unavailable, Code.DataLoss].map((code) => new LLMRelayError({ code, message: "" }).codeName);
  assert.deepEqual(names, ["CANCELLED", "DEADLINE_EXCEEDED", "UNAVAILABLE", "DATA_LOSS"]);
});

describe("server tools", () => {
  test("Reply keeps each turn apart: a will_retry discards only its own turn's text; tool events are kept", async () => {
    const seen: string[] = [];
    const r = await Reply.collect(relay.generate({ ...ask("fake/tools"), resumable: false }), {
      onTurn: (turn, reply) => seen.push(`turn ${turn} after ${JSON.stringify(reply.earlierTurns.at(-1)?.text)}`),
      onToolProgress: (p) => seen.push(`progress ${p.toolCallId} ${p.progress}/${p.total}`),
      onToolResult: (res) => seen.push(`result ${res.toolCallId} ${res.content}`),
      onWillRetry: (_w, discarded) => seen.push(`discard ${JSON.stringify(discarded)}`),
    });
    assert.deepEqual(seen, ["progress mock_1_0 1/2", "result mock_1_0 Echo: hello", 'turn 2 after "Let me ask. "', 'discard "Echo: "']);
    assert.equal(r.turn, 2);
    assert.equal(r.text, "Echo: hello");
    assert.equal(r.text, r.final.message?.content);
    assert.equal(r.earlierTurns.length, 1);
    const [t1] = r.earlierTurns;
    assert.deepEqual([t1.turn, t1.text, t1.toolCalls.map((c) => `${c.id} ${c.name} ${c.arguments} ${c.signature}`)], [1, "Let me ask. ", ['mock_1_0 everything__echo {"message":"hello"} sig-1']]);
    assert.deepEqual(t1.toolResults.map((res) => res.content), ["Echo: hello"]);
    assert.deepEqual([r.toolResults, r.toolProgress.size, r.final.turns], [[], 0, 2]);
  });

  test("listTools lists the tools, retried on UNAVAILABLE as the service config says", async () => {
    calls.delete("listTools");
    const resp = await relay.listTools({ server: "everything" }, { timeoutMs: 10_000 });
    assert.deepEqual(resp.tools.map((t) => [t.name, t.available]), [["everything/echo", true]]);
    assert.deepEqual(resp.servers.map((s) => s.name), ["everything"]);
    assert.deepEqual(calls.get("listTools")?.map((c) => c.model), ["everything", "everything"]);
  });

  test("the listings are bounded (30s) unless the caller says otherwise, as in Go and Python", async () => {
    calls.set("listTools", [create(GenerateRequestSchema)]); // its first call fails: not this one
    listTimeouts.length = 0;
    await relay.listModels();
    await relay.listModelsResponse();
    await relay.listTools();
    await relay.listModels({}, { timeoutMs: 120_000 });
    const [models, response, tools, longer] = listTimeouts;
    for (const left of [models, response, tools]) {
      assert.ok(left !== undefined && left > 0 && left <= 30_000, `the call's deadline: ${left}ms left, want at most 30s`);
    }
    assert.ok(longer !== undefined && longer > 30_000, `a timeoutMs of the caller's: ${longer}ms left, want it kept`);
  });

  test("listModels returns the models alone; listModelsResponse also the providers that accept any model name", async () => {
    assert.deepEqual((await relay.listModels()).map((m) => m.id), ["mock/echo"]);
    const resp = await relay.listModelsResponse({}, { timeoutMs: 10_000 });
    assert.deepEqual(resp.models.map((m) => m.id), ["mock/echo"]);
    assert.deepEqual(resp.anyModelProviders.map((p) => [p.provider, p.providerKind, p.keyPatterns]), [["openai", "openai", ["openai/gpt-4o*"]]]);
  });
});
