"""Reply: llmrelay's event contract, applied for the caller."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterable, Callable, Dict, Iterable, List, Optional

import grpc
from google.protobuf import json_format

from ._call import StreamBase
from ._errors import LLMRelayError
from .v1 import llmrelay_pb2


@dataclass
class ToolCallSoFar:
    """A tool call as the deltas built it so far."""

    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""
    """The arguments' JSON text, whole once the call is."""
    signature: str = ""
    """The provider's signature of the call (Gemini's ``thoughtSignature``),
    opaque; empty from most providers."""


@dataclass
class ReasoningSoFar:
    """A reasoning block as the deltas built it so far."""

    index: int
    text: str = ""
    signature: str = ""
    redacted: str = ""
    format: str = ""


@dataclass
class TurnSoFar:
    """A turn of a call with server tools that is over, as its events showed it."""

    turn: int
    """The turn's number, from 1."""
    text: str = ""
    """The text of the turn's successful attempt."""
    refusal: str = ""
    reasoning: List[ReasoningSoFar] = field(default_factory=list)
    tool_calls: List[ToolCallSoFar] = field(default_factory=list)
    """The model's tool calls in the turn: server tools', and the client's own."""
    tool_results: List[llmrelay_pb2.ToolResult] = field(default_factory=list)
    """The results of the server tools the turn called, in the order they returned."""


OnDelta = Callable[[llmrelay_pb2.Delta, "Reply"], None]
OnWillRetry = Callable[[llmrelay_pb2.WillRetry, str, "Reply"], None]
OnPartialObject = Callable[[Any, "Reply"], None]
OnReissued = Callable[[LLMRelayError, str], None]
OnTurn = Callable[[int, "Reply"], None]
OnToolProgress = Callable[[llmrelay_pb2.ToolProgress, "Reply"], None]
OnToolResult = Callable[[llmrelay_pb2.ToolResult, "Reply"], None]


@dataclass
class Reply:
    """Applies llmrelay's event contract for the caller: keeps what the
    current attempt has shown (text, reasoning, tool calls, the partial
    object), drops it when a will_retry says discard_partial (the next
    attempt starts over) or a lost call is issued again, and holds the
    final event, whose message is the answer.

    A call with server tools runs in turns (``GenerateEvent.turn``): the
    fields are the current turn's, with its tool results and progress; each
    turn that is over moves to ``earlier_turns``, which a will_retry (always
    of the current turn) never touches. The final's message is the last
    turn's; its ``transcript`` holds the whole call and ``turns`` counts
    the turns. With structured output, ``object`` is the final's object as
    plain JSON values.

    >>> reply = Reply.collect(relay.generate(...), on_delta=lambda d, r: print(d.text, end=""))
    >>> reply.final.message.content
    """

    text: str = ""
    """The text the current attempt has streamed."""
    refusal: str = ""
    """The refusal the current attempt has streamed."""
    reasoning: List[ReasoningSoFar] = field(default_factory=list)
    """The current attempt's reasoning blocks, by index."""
    tool_calls: List[ToolCallSoFar] = field(default_factory=list)
    """The current attempt's tool calls, by index."""
    partial_object: Any = None
    """The latest partial_object snapshot of the current attempt, as JSON values."""
    attempt: int = 0
    """The attempt the last event came from."""
    retries: List[llmrelay_pb2.WillRetry] = field(default_factory=list)
    """The will_retry events so far."""
    turn: int = 0
    """The current turn, from 1 (0 before the first event)."""
    earlier_turns: List[TurnSoFar] = field(default_factory=list)
    """The turns before the current one (server tools), as they ended."""
    tool_results: List[llmrelay_pb2.ToolResult] = field(default_factory=list)
    """The current turn's server tool results, in the order they returned."""
    tool_progress: Dict[str, llmrelay_pb2.ToolProgress] = field(default_factory=dict)
    """The latest progress of each of the current turn's running server tools, by tool call id."""
    _final: Optional[llmrelay_pb2.Final] = None
    _object: Any = None

    @property
    def final(self) -> llmrelay_pb2.Final:
        """The final event; raises until it has arrived."""
        if self._final is None:
            raise ValueError("llmrelay: the reply has no final event yet")
        return self._final

    @property
    def object(self) -> Any:
        """Structured output: the final event's object (``final.object``,
        validated against the request's schema) as plain JSON values (dicts,
        lists, str, float, bool, None), as ``partial_object`` is. None until
        the final event has come, and when it has no object: the call asked
        no ``response_format``, or its reply stayed invalid
        (ON_INVALID_RETURN_TEXT), or the model refused. (An object that is
        JSON ``null`` is None too: ``final.HasField("object")`` tells.)"""
        return self._object

    @property
    def done(self) -> bool:
        """Whether the final event has arrived."""
        return self._final is not None

    def apply(self, ev: llmrelay_pb2.GenerateEvent) -> str:
        """Applies one event; returns the text it discarded ("" when none)."""
        # A heartbeat's turn is 0 (it belongs to none), as is every event of
        # a server older than server tools.
        if ev.turn > self.turn:
            if self.turn > 0:
                self._end_turn()
            self.turn = ev.turn
        self.attempt = ev.attempt
        kind = ev.WhichOneof("event")
        if kind == "delta":
            d = ev.delta
            self.text += d.text
            self.refusal += d.refusal
            if d.HasField("reasoning"):
                r = _at(self.reasoning, d.reasoning.index, ReasoningSoFar)
                r.text += d.reasoning.text
                r.signature += d.reasoning.signature
                r.redacted += d.reasoning.redacted
                r.format = r.format or d.reasoning.format
            if d.HasField("tool_call"):
                t = _at(self.tool_calls, d.tool_call.index, ToolCallSoFar)
                t.id = t.id or d.tool_call.id
                t.name = t.name or d.tool_call.name
                t.arguments += d.tool_call.arguments_delta
                t.signature = t.signature or d.tool_call.signature
        elif kind == "will_retry":
            self.retries.append(ev.will_retry)
            if ev.will_retry.discard_partial:
                return self.discard()
        elif kind == "partial_object":
            self.partial_object = json_format.MessageToDict(ev.partial_object)
        elif kind == "tool_progress":
            self.tool_progress[ev.tool_progress.tool_call_id] = ev.tool_progress
        elif kind == "tool_result":
            self.tool_results.append(ev.tool_result)
            self.tool_progress.pop(ev.tool_result.tool_call_id, None)
        elif kind == "final":
            self._final = ev.final
            if ev.final.HasField("object"):
                self._object = json_format.MessageToDict(ev.final.object)
        return ""

    def _end_turn(self) -> None:
        """Moves the current turn to earlier_turns and starts the next one empty."""
        self.earlier_turns.append(TurnSoFar(self.turn, self.text, self.refusal, self.reasoning, self.tool_calls, self.tool_results))
        self.discard()
        self.tool_results, self.tool_progress = [], {}

    def restart(self) -> str:
        """Drops everything the call showed, every turn's, as when a lost call
        is issued again, and returns its text."""
        text = "".join(t.text for t in self.earlier_turns) + self.discard()
        self.earlier_turns, self.tool_results, self.tool_progress, self.turn = [], [], {}, 0
        return text

    def discard(self) -> str:
        """Drops what the current attempt showed and returns its text."""
        text = self.text
        self.text, self.refusal, self.reasoning, self.tool_calls, self.partial_object = "", "", [], [], None
        return text

    @classmethod
    def collect(
        cls,
        stream: Iterable[llmrelay_pb2.GenerateEvent],
        *,
        on_delta: Optional[OnDelta] = None,
        on_will_retry: Optional[OnWillRetry] = None,
        on_partial_object: Optional[OnPartialObject] = None,
        on_reissue: Optional[OnReissued] = None,
        on_turn: Optional[OnTurn] = None,
        on_tool_progress: Optional[OnToolProgress] = None,
        on_tool_result: Optional[OnToolResult] = None,
    ) -> "Reply":
        """Reads a stream (llmrelay.GenerateStream, or any iterable of
        events) to its end, applying every event and calling the hooks, and
        returns the Reply with its final event (once it has come, a failure
        of the stream after it is ignored, as llmrelay sends nothing after
        it). on_will_retry gets the text
        discarded ("" unless discard_partial; with server tools, only its own
        turn's); on_reissue(cause, discarded) hears of a lost call issued
        again; on_turn(turn, reply) of a call with server tools moving on to
        its next turn (from 2), before that turn's first event;
        on_tool_progress and on_tool_result get the server tools' events. A
        failed call raises LLMRelayError. A GenerateStream's call is ended
        when collect returns or raises (a hook that raised, say), as
        leaving a ``with`` block does."""
        reply = cls()
        hooks = _Hooks(on_delta, on_will_retry, on_partial_object, on_turn, on_tool_progress, on_tool_result)
        _listen(stream, reply, on_reissue)
        try:
            for ev in stream:
                reply._apply(ev, hooks)
        except LLMRelayError:
            if not reply.done:
                raise  # else the final is the answer, whatever broke after it
        finally:
            _close(stream)
        return reply._ended(stream)

    @classmethod
    async def acollect(
        cls,
        stream: AsyncIterable[llmrelay_pb2.GenerateEvent],
        *,
        on_delta: Optional[OnDelta] = None,
        on_will_retry: Optional[OnWillRetry] = None,
        on_partial_object: Optional[OnPartialObject] = None,
        on_reissue: Optional[OnReissued] = None,
        on_turn: Optional[OnTurn] = None,
        on_tool_progress: Optional[OnToolProgress] = None,
        on_tool_result: Optional[OnToolResult] = None,
    ) -> "Reply":
        """Reply.collect for an llmrelay.aio.GenerateStream (or any async
        iterable of events)."""
        reply = cls()
        hooks = _Hooks(on_delta, on_will_retry, on_partial_object, on_turn, on_tool_progress, on_tool_result)
        _listen(stream, reply, on_reissue)
        try:
            async for ev in stream:
                reply._apply(ev, hooks)
        except LLMRelayError:
            if not reply.done:
                raise  # else the final is the answer, whatever broke after it
        finally:
            _close(stream)
        return reply._ended(stream)

    def _apply(self, ev: llmrelay_pb2.GenerateEvent, hooks: "_Hooks") -> None:
        """Applies ev and calls the hooks it concerns."""
        before = self.turn
        discarded = self.apply(ev)
        if before > 0 and self.turn > before and hooks.on_turn:
            hooks.on_turn(self.turn, self)
        kind = ev.WhichOneof("event")
        if kind == "delta" and hooks.on_delta:
            hooks.on_delta(ev.delta, self)
        elif kind == "will_retry" and hooks.on_will_retry:
            hooks.on_will_retry(ev.will_retry, discarded, self)
        elif kind == "partial_object" and hooks.on_partial_object:
            hooks.on_partial_object(self.partial_object, self)
        elif kind == "tool_progress" and hooks.on_tool_progress:
            hooks.on_tool_progress(ev.tool_progress, self)
        elif kind == "tool_result" and hooks.on_tool_result:
            hooks.on_tool_result(ev.tool_result, self)

    def _ended(self, stream: Any) -> "Reply":
        if not self.done:
            raise LLMRelayError(grpc.StatusCode.UNKNOWN, "the stream ended without a final event", request_id=getattr(stream, "request_id", ""))
        return self


@dataclass
class _Hooks:
    """The hooks of one collect."""

    on_delta: Optional[OnDelta]
    on_will_retry: Optional[OnWillRetry]
    on_partial_object: Optional[OnPartialObject]
    on_turn: Optional[OnTurn]
    on_tool_progress: Optional[OnToolProgress]
    on_tool_result: Optional[OnToolResult]


def _listen(stream: Any, reply: Reply, on_reissue: Optional[OnReissued]) -> None:
    """Has a GenerateStream tell the reply when its lost call is issued again."""
    add: Optional[Callable[[Callable[[LLMRelayError], None]], None]] = getattr(stream, "on_reissue", None)
    if add is not None:

        def reissued(cause: LLMRelayError) -> None:
            discarded = reply.restart()
            if on_reissue:
                on_reissue(cause, discarded)

        add(reissued)


def _close(stream: Any) -> None:
    """Ends the call of a GenerateStream that collect leaves (a hook raised,
    say) before its end, as Go's Collect does: a stream left unread would
    keep the provider generating, and billing, to the end."""
    if isinstance(stream, StreamBase):
        stream.close()


def _at(items: List[Any], index: int, make: Callable[[int], Any]) -> Any:
    while len(items) <= index:
        items.append(make(len(items)))
    return items[index]
