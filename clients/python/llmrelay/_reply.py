"""Reply: llmrelay's event contract, applied for the caller."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterable, Callable, Iterable, List, Optional

import grpc
from google.protobuf import json_format

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


@dataclass
class ReasoningSoFar:
    """A reasoning block as the deltas built it so far."""

    index: int
    text: str = ""
    signature: str = ""
    redacted: str = ""
    format: str = ""


OnDelta = Callable[[llmrelay_pb2.Delta, "Reply"], None]
OnWillRetry = Callable[[llmrelay_pb2.WillRetry, str, "Reply"], None]
OnPartialObject = Callable[[Any, "Reply"], None]
OnReissued = Callable[[LLMRelayError, str], None]


@dataclass
class Reply:
    """Applies llmrelay's event contract for the caller: keeps what the
    current attempt has shown (text, reasoning, tool calls, the partial
    object), drops it when a will_retry says discard_partial (the next
    attempt starts over) or a lost call is issued again, and holds the
    final event, whose message is the answer.

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
    _final: Optional[llmrelay_pb2.Final] = None

    @property
    def final(self) -> llmrelay_pb2.Final:
        """The final event; raises until it has arrived."""
        if self._final is None:
            raise ValueError("llmrelay: the reply has no final event yet")
        return self._final

    @property
    def done(self) -> bool:
        """Whether the final event has arrived."""
        return self._final is not None

    def apply(self, ev: llmrelay_pb2.GenerateEvent) -> str:
        """Applies one event; returns the text it discarded ("" when none)."""
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
        elif kind == "will_retry":
            self.retries.append(ev.will_retry)
            if ev.will_retry.discard_partial:
                return self.discard()
        elif kind == "partial_object":
            self.partial_object = json_format.MessageToDict(ev.partial_object)
        elif kind == "final":
            self._final = ev.final
        return ""

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
    ) -> "Reply":
        """Reads a stream (llmrelay.GenerateStream, or any iterable of
        events) to its end, applying every event and calling the hooks, and
        returns the Reply with its final event. on_will_retry gets the text
        discarded ("" unless discard_partial); on_reissue(cause, discarded)
        hears of a lost call issued again. A failed call raises LLMRelayError."""
        reply = cls()
        _listen(stream, reply, on_reissue)
        for ev in stream:
            reply._hooks(ev, reply.apply(ev), on_delta, on_will_retry, on_partial_object)
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
    ) -> "Reply":
        """Reply.collect for an llmrelay.aio.GenerateStream (or any async
        iterable of events)."""
        reply = cls()
        _listen(stream, reply, on_reissue)
        async for ev in stream:
            reply._hooks(ev, reply.apply(ev), on_delta, on_will_retry, on_partial_object)
        return reply._ended(stream)

    def _hooks(
        self,
        ev: llmrelay_pb2.GenerateEvent,
        discarded: str,
        on_delta: Optional[OnDelta],
        on_will_retry: Optional[OnWillRetry],
        on_partial_object: Optional[OnPartialObject],
    ) -> None:
        kind = ev.WhichOneof("event")
        if kind == "delta" and on_delta:
            on_delta(ev.delta, self)
        elif kind == "will_retry" and on_will_retry:
            on_will_retry(ev.will_retry, discarded, self)
        elif kind == "partial_object" and on_partial_object:
            on_partial_object(self.partial_object, self)

    def _ended(self, stream: Any) -> "Reply":
        if not self.done:
            raise LLMRelayError(grpc.StatusCode.UNKNOWN, "the stream ended without a final event", request_id=getattr(stream, "request_id", ""))
        return self


def _listen(stream: Any, reply: Reply, on_reissue: Optional[OnReissued]) -> None:
    """Has a GenerateStream tell the reply when its lost call is issued again."""
    add: Optional[Callable[[Callable[[LLMRelayError], None]], None]] = getattr(stream, "on_reissue", None)
    if add is not None:

        def reissued(cause: LLMRelayError) -> None:
            discarded = reply.discard()
            if on_reissue:
                on_reissue(cause, discarded)

        add(reissued)




def _at(items: List[Any], index: int, make: Callable[[int], Any]) -> Any:
    while len(items) <= index:
        items.append(make(len(items)))
    return items[index]
