import type { JsonValue } from "@bufbuild/protobuf";
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";

import { ConnectError } from "@connectrpc/connect";

import { GenerateStream } from "./client.js";
import type { LLMRelayError } from "./errors.js";
import { LLMRelayError as Err } from "./errors.js";
import type { Delta, Final, GenerateEvent, ToolProgress, ToolResult, WillRetry } from "./gen/llmrelay/v1/llmrelay_pb.js";

/** A tool call as the deltas built it so far. */
export interface ToolCallSoFar {
  index: number;
  id: string;
  name: string;
  /** The arguments' JSON text, whole once the call is. */
  arguments: string;
  /** The provider's signature of the call (Gemini's `thoughtSignature`), opaque; empty from most providers. */
  signature: string;
}

/** A reasoning block as the deltas built it so far. */
export interface ReasoningSoFar {
  index: number;
  text: string;
  signature: string;
  redacted: string;
  format: string;
}

/** A turn of a call with server tools that is over, as its events showed it. */
export interface TurnSoFar {
  /** The turn's number, from 1. */
  turn: number;
  /** The text of the turn's successful attempt. */
  text: string;
  refusal: string;
  reasoning: ReasoningSoFar[];
  /** The model's tool calls in the turn: server tools', and the client's own. */
  toolCalls: ToolCallSoFar[];
  /** The results of the server tools the turn called, in the order they returned. */
  toolResults: ToolResult[];
}

/** Hooks that show a reply while Reply.collect reads it. Every one is optional. */
export interface ReplyHooks {
  /** Each delta, in order, as it arrives. */
  onDelta?: (delta: Delta, reply: Reply) => void;
  /**
   * Each will_retry event. With discard_partial, `discarded` is the text the
   * failed attempt had shown, which the caller must take back off the
   * screen (Reply has already dropped it); otherwise "". With server tools
   * it concerns its own turn only: earlier turns and tool results stay.
   */
  onWillRetry?: (w: WillRetry, discarded: string, reply: Reply) => void;
  /**
   * A call with server tools moved on to its next model turn (`turn`, from
   * 2), before that turn's first event is handled: the turn before is in
   * `reply.earlierTurns`, never to be discarded.
   */
  onTurn?: (turn: number, reply: Reply) => void;
  /** Each tool_progress: a server tool the model called is running. */
  onToolProgress?: (p: ToolProgress, reply: Reply) => void;
  /** Each tool_result: a server tool returned (or failed), what the model is sent. */
  onToolResult?: (r: ToolResult, reply: Reply) => void;
  /** Each partial_object: a whole snapshot of the structured object so far. */
  onPartialObject?: (object: JsonValue, reply: Reply) => void;
  /** The stream (a GenerateStream) dropped and the resumable call is picked up again: nothing to take back. */
  onResume?: (afterSequence: bigint, cause: LLMRelayError) => void;
  /** The server lost the call and the GenerateStream issued it again (reissueLostCall): `discarded` (every turn's text) was dropped. */
  onReissue?: (cause: LLMRelayError, discarded: string) => void;
}

/**
 * Reply applies llmrelay's event contract for the caller: it keeps what the
 * current attempt has shown (text, reasoning, tool calls, the partial
 * object), drops it when a will_retry says discard_partial (the next
 * attempt starts over) or a lost call is issued again, and holds the final
 * event, whose message is the answer.
 *
 * A call with server tools runs in turns (`GenerateEvent.turn`): the fields
 * above are the current turn's, with its tool results and progress; each
 * turn that is over moves to `earlierTurns`, which a will_retry (always of
 * the current turn) never touches. The final's message is the last turn's;
 * its `transcript` holds the whole call and `turns` counts the turns.
 * With structured output, `object` is the final's object as plain JSON.
 *
 *     const reply = await Reply.collect(client.generate(request), { onDelta: (d) => process.stdout.write(d.text) });
 *     console.log(reply.final.message?.content);
 */
export class Reply {
  /** The text the current attempt has streamed. */
  text = "";
  /** The refusal the current attempt has streamed. */
  refusal = "";
  /** The current attempt's reasoning blocks, by index. */
  reasoning: ReasoningSoFar[] = [];
  /** The current attempt's tool calls, by index. */
  toolCalls: ToolCallSoFar[] = [];
  /** The latest partial_object snapshot of the current attempt. */
  partialObject: JsonValue | undefined;
  /** The attempt the last event came from. */
  attempt = 0;
  /** The will_retry events so far. */
  retries: WillRetry[] = [];
  /** The current turn, from 1 (0 before the first event). */
  turn = 0;
  /** The turns before the current one (server tools), as they ended. */
  earlierTurns: TurnSoFar[] = [];
  /** The current turn's server tool results, in the order they returned. */
  toolResults: ToolResult[] = [];
  /** The latest progress of each of the current turn's running server tools, by tool call id. */
  toolProgress = new Map<string, ToolProgress>();
  /**
   * Structured output: the final event's object (`final.object`, validated
   * against the request's schema) as plain JSON, as `partialObject` is.
   * Undefined until the final event has come, and when it has no object:
   * the call asked no `responseFormat`, or its reply stayed invalid
   * (ON_INVALID_RETURN_TEXT), or the model refused.
   */
  object: JsonValue | undefined;
  private finalEvent: Final | undefined;

  /** The final event; throws until it has arrived. */
  get final(): Final {
    if (this.finalEvent === undefined) {
      throw new Error("llmrelay: the reply has no final event yet");
    }
    return this.finalEvent;
  }

  /** Whether the final event has arrived. */
  get done(): boolean {
    return this.finalEvent !== undefined;
  }

  /** Applies one event; returns the text discarded by it ("" when none). */
  apply(ev: GenerateEvent): string {
    // A heartbeat's turn is 0 (it belongs to none), as is every event of a
    // server older than server tools.
    if (ev.turn > this.turn) {
      if (this.turn > 0) this.endTurn();
      this.turn = ev.turn;
    }
    this.attempt = ev.attempt;
    switch (ev.event.case) {
      case "delta": {
        const d = ev.event.value;
        this.text += d.text;
        this.refusal += d.refusal;
        if (d.reasoning) {
          const r = (this.reasoning[d.reasoning.index] ??= { index: d.reasoning.index, text: "", signature: "", redacted: "", format: "" });
          r.text += d.reasoning.text;
          r.signature += d.reasoning.signature;
          r.redacted += d.reasoning.redacted;
          r.format ||= d.reasoning.format;
        }
        if (d.toolCall) {
          const t = (this.toolCalls[d.toolCall.index] ??= { index: d.toolCall.index, id: "", name: "", arguments: "", signature: "" });
          t.id ||= d.toolCall.id;
          t.name ||= d.toolCall.name;
          t.arguments += d.toolCall.argumentsDelta;
          t.signature ||= d.toolCall.signature;
        }
        return "";
      }
      case "willRetry":
        this.retries.push(ev.event.value);
        return ev.event.value.discardPartial ? this.discard() : "";
      case "partialObject":
        this.partialObject = toJson(ValueSchema, ev.event.value);
        return "";
      case "toolProgress":
        this.toolProgress.set(ev.event.value.toolCallId, ev.event.value);
        return "";
      case "toolResult":
        this.toolResults.push(ev.event.value);
        this.toolProgress.delete(ev.event.value.toolCallId);
        return "";
      case "final":
        this.finalEvent = ev.event.value;
        this.object = ev.event.value.object === undefined ? undefined : toJson(ValueSchema, ev.event.value.object);
        return "";
      default:
        return ""; // heartbeats
    }
  }

  /** Moves the current turn to earlierTurns and starts the next one empty. */
  private endTurn(): void {
    const { turn, text, refusal, reasoning, toolCalls, toolResults } = this;
    this.earlierTurns.push({ turn, text, refusal, reasoning, toolCalls, toolResults });
    this.discard();
    this.toolResults = [];
    this.toolProgress = new Map();
  }

  /**
   * Drops everything the call showed, every turn's, as when a lost call is
   * issued again, and returns its text.
   */
  restart(): string {
    const text = this.earlierTurns.map((t) => t.text).join("") + this.discard();
    this.earlierTurns = [];
    this.toolResults = [];
    this.toolProgress = new Map();
    this.turn = 0;
    return text;
  }

  /** Drops what the current attempt showed and returns its text. */
  discard(): string {
    const text = this.text;
    this.text = "";
    this.refusal = "";
    this.reasoning = [];
    this.toolCalls = [];
    this.partialObject = undefined;
    return text;
  }

  /**
   * Reads a stream to its end, applying every event and calling the hooks,
   * and returns the Reply, its final event there (once it has come, a
   * failure of the stream after it is ignored, as llmrelay sends nothing
   * after it). The stream is a GenerateStream (`generate`, `resume`), or
   * any async iterable of events, such as the generated stub's
   * `relay.stub.generate(...)`; onResume and onReissue concern a
   * GenerateStream only, the one that resumes and re-issues. A failed call
   * throws its LLMRelayError.
   */
  static async collect(stream: AsyncIterable<GenerateEvent>, hooks: ReplyHooks = {}): Promise<Reply> {
    const reply = new Reply();
    if (stream instanceof GenerateStream) {
      stream.onReissue((cause) => {
        const discarded = reply.restart();
        hooks.onReissue?.(cause, discarded);
      });
      if (hooks.onResume) stream.onResume(hooks.onResume);
    }
    try {
      await Reply.read(stream, reply, hooks);
    } catch (err) {
      // Once the final has come it is the answer, whatever broke after it.
      // A GenerateStream fails with LLMRelayErrors already; the stub's
      // stream with ConnectErrors, made one here as Go's Collect does.
      if (!reply.done) throw err instanceof ConnectError ? Err.from(err) : err;
    }
    if (!reply.done) {
      const requestId = stream instanceof GenerateStream ? stream.requestId : "";
      throw new Err({ code: 2, message: "the stream ended without a final event", requestId });
    }
    return reply;
  }

  private static async read(stream: AsyncIterable<GenerateEvent>, reply: Reply, hooks: ReplyHooks): Promise<void> {
    for await (const ev of stream) {
      const before = reply.turn;
      const discarded = reply.apply(ev);
      if (before > 0 && reply.turn > before) hooks.onTurn?.(reply.turn, reply);
      switch (ev.event.case) {
        case "delta":
          hooks.onDelta?.(ev.event.value, reply);
          break;
        case "willRetry":
          hooks.onWillRetry?.(ev.event.value, discarded, reply);
          break;
        case "partialObject":
          hooks.onPartialObject?.(reply.partialObject ?? null, reply);
          break;
        case "toolProgress":
          hooks.onToolProgress?.(ev.event.value, reply);
          break;
        case "toolResult":
          hooks.onToolResult?.(ev.event.value, reply);
          break;
      }
    }
  }
}
