"""What the sync and the asyncio clients share: the channel's options and a
Generate call's state (which RPC to send next, which events to yield, what
to do after a failure). Their loops only do the I/O."""

from __future__ import annotations

import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import grpc

from ._errors import DOMAIN, REQUEST_ID_HEADER, LLMRelayError, header_value
from .v1 import llmrelay_pb2

RESUMABLE_HEADER = "llmrelay-resumable"
"""The response header that says whether a call is resumable ("true"/"false")."""

REASON_RESUMABLE_CALL_LOST = "RESUMABLE_CALL_LOST"
"""The reason (code ABORTED) of a resumable call the server lost."""

REASON_RESUMABLE_CALL_NOT_FOUND = "RESUMABLE_CALL_NOT_FOUND"
"""The reason (NOT_FOUND) of a Resume of a call the server does not have (any more)."""

# Reasons of llmrelay's after which a resumable call runs on, to be resumed again.
_RESUME_AGAIN = {"RESUME_INTERRUPTED", "STATE_STORE_UNAVAILABLE"}
# Codes of a stream that dropped rather than ended, when the status carries no
# llmrelay ErrorInfo (a reset connection, a proxy's RST_STREAM).
_DROPPED = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.CANCELLED,
}
MAX_RESUME_TRIES = 8  # reconnections in a row without an event in between
RESUME_BACKOFF_MIN = 0.1
RESUME_BACKOFF_MAX = 2.0
MAX_REISSUES = 3

Metadata = Sequence[Tuple[str, Union[str, bytes]]]
OnResume = Callable[[int, LLMRelayError], None]
OnReissue = Callable[[LLMRelayError], None]


def service_config() -> str:
    """llmrelay's recommended gRPC service config (docs/service-config.json):
    gRPC retries UNAVAILABLE on ListModels, ListTools and Embed, and on
    Generate and Resume before their first event, following the server's pushback."""
    return resources.files(__package__).joinpath("service_config.json").read_text()


def channel_options(extra: Sequence[Tuple[str, Any]] = ()) -> List[Tuple[str, Any]]:
    """The channel options every client dials with: the service config, with
    retries on (grpc core then honours grpc-retry-pushback-ms)."""
    return [("grpc.service_config", service_config()), ("grpc.enable_retries", 1), *extra]


def with_request_id(request: llmrelay_pb2.GenerateRequest) -> llmrelay_pb2.GenerateRequest:
    """A resumable request without a request_id gets one, on a copy, so that
    the call can be found again."""
    if request.HasField("resumable") and request.resumable and not request.request_id:
        copy = llmrelay_pb2.GenerateRequest()
        copy.CopyFrom(request)
        copy.request_id = str(uuid.uuid4())
        return copy
    return request


@dataclass
class Retry:
    """What to do after a failure: wait `delay` seconds, then send again."""

    delay: float
    resumed: bool  # True: a resume; False: a re-issue of a lost call
    expires: bool = False  # the deadline comes first: after `delay`, the call ends DEADLINE_EXCEEDED


class CallState:
    """One Generate call's state across its streams: a resumable call's
    resumes and a lost call's re-issues. Not safe for concurrent use."""

    def __init__(
        self,
        request: Optional[llmrelay_pb2.GenerateRequest],
        timeout: Optional[float],
        reissue_lost_call: bool,
        request_id: str = "",
        after_sequence: int = 0,
    ) -> None:
        self.request = request
        self.request_id = request.request_id if request is not None else request_id
        self.resumable = request is None or (request.HasField("resumable") and request.resumable)
        self.reissue_lost_call = reissue_lost_call
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.last = after_sequence
        self.received = request is None  # a Resume continues after `last`
        self.final = False
        self.tries = 0
        self.resumes = 0
        self.reissues = 0
        self.headers_read = False
        self.resuming = False  # the current stream is a Resume

    def next_rpc(self) -> Tuple[str, Any]:
        """The RPC to send now and its request: ("Generate", GenerateRequest)
        or ("Resume", ResumeRequest). Before any event, the request again,
        with its request_id, which the server does not run twice; but a call
        whose id only the server's headers gave (a route made it resumable)
        is resumed from its first event, since the request without that id
        would start another call."""
        self.headers_read = False
        self.resuming = (
            self.received
            or self.request is None
            or (not self.request.request_id and self.resumable and bool(self.request_id))
        )
        if self.resuming:
            return "Resume", llmrelay_pb2.ResumeRequest(request_id=self.request_id, after_sequence=self.last)
        return "Generate", self.request

    def timeout(self) -> Optional[float]:
        """The time left until the call's deadline, for the next RPC."""
        if self.deadline is None:
            return None
        return max(0.001, self.deadline - time.monotonic())

    def headers(self, md: Optional[Metadata]) -> None:
        """Learns from the response headers, once per stream, whether the call
        is resumable and its id (a route may have made it so, the server may
        have chosen the id, or its store may have left it an ordinary call)."""
        if self.headers_read:
            return
        self.headers_read = True
        resumable = header_value(md, RESUMABLE_HEADER)
        if resumable is not None:
            self.resumable = resumable == "true"
            if not self.request_id:
                self.request_id = header_value(md, REQUEST_ID_HEADER) or ""
        elif not self.received and self.request is not None:
            self.resumable = False

    def failed_headers(self, md: Optional[Metadata]) -> None:
        """Learns from the response headers of a stream that failed before its
        first event, when it had some: a call with a heartbeat gets them at
        once, and they may say that it is resumable and give its id."""
        if not self.headers_read and header_value(md, RESUMABLE_HEADER) is not None:
            self.headers(md)

    def event(self, ev: llmrelay_pb2.GenerateEvent) -> bool:
        """Whether to yield ev: False for an event a resumed stream sent
        again. Raises DATA_LOSS when events are missing."""
        if self.received and self.resumable:
            if ev.sequence <= self.last:
                return False
            if ev.sequence != self.last + 1:
                raise LLMRelayError(
                    grpc.StatusCode.DATA_LOSS,
                    f"events are missing from the stream: got {ev.sequence} after {self.last}",
                    request_id=self.request_id,
                )
        self.last, self.received, self.tries = ev.sequence, True, 0
        if ev.WhichOneof("event") == "final":
            self.final = True
        return True

    def ended(self, trailers: Optional[Metadata]) -> None:
        """The stream ended cleanly: raises when it had no final event; else
        learns the call's request id from its trailers when neither the
        request nor the headers gave it (llmrelay names every call there,
        and a call that is not resumable nowhere else)."""
        if not self.final:
            raise LLMRelayError(grpc.StatusCode.UNKNOWN, "the stream ended without a final event", request_id=self.request_id)
        if not self.request_id:
            self.request_id = header_value(trailers, REQUEST_ID_HEADER) or ""

    def failed(self, e: LLMRelayError) -> Retry:
        """Decides after a failed stream: a Retry, or raises e."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            # The server ends a call at the deadline it was sent (never
            # before ours) with RST_STREAM CANCEL: when that arrives before
            # our own timer, under load, it is still the deadline.
            if e.from_llmrelay or e.code == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise e
            raise self.expired(e)
        if self._lost(e):
            if not self.reissue_lost_call or self.request is None or self.reissues >= MAX_REISSUES:
                raise e
            self.reissues += 1
            self.received, self.last, self.tries, self.final = False, 0, 0, False
            # What the headers said of the lost call is learnt again.
            self.resumable = self.request.HasField("resumable") and self.request.resumable
            self.request_id = self.request.request_id
            return Retry(0.0, resumed=False)
        if not self._may_resume(e):
            raise e
        delay = 0.0 if self.tries == 0 else min(RESUME_BACKOFF_MIN * 2 ** (self.tries - 1), RESUME_BACKOFF_MAX)
        if self.deadline is not None and time.monotonic() + delay >= self.deadline:
            # The call's deadline comes before the next try: it ends there.
            return Retry(max(0.0, self.deadline - time.monotonic()), resumed=True, expires=True)
        self.tries += 1
        self.resumes += 1
        return Retry(delay, resumed=True)

    def expired(self, cause: LLMRelayError) -> LLMRelayError:
        """The error of a call whose deadline passed: DEADLINE_EXCEEDED, its
        cause (the failure it came with, or the drop it waited to resume
        after) as __cause__."""
        e = LLMRelayError(grpc.StatusCode.DEADLINE_EXCEEDED, f"the call's deadline passed ({cause})", request_id=self.request_id)
        e.__cause__ = cause
        return e

    def _lost(self, e: LLMRelayError) -> bool:
        """Whether e says the server lost this resumable call:
        RESUMABLE_CALL_LOST, or RESUMABLE_CALL_NOT_FOUND in answer to the
        stream's own Resume after a drop (the call was lost with a server
        that kept it in memory)."""
        if e.domain != DOMAIN or self.request is None:
            return False
        return e.reason == REASON_RESUMABLE_CALL_LOST or (
            e.reason == REASON_RESUMABLE_CALL_NOT_FOUND and self.resuming and self.resumes > 0
        )

    def _may_resume(self, e: LLMRelayError) -> bool:
        if not self.resumable or not self.request_id or self.final or self.tries >= MAX_RESUME_TRIES:
            return False
        if e.domain == DOMAIN:
            # llmrelay's own answer: the call's outcome, or why it cannot be
            # resumed; but a server serving a Resume that shuts down, or that
            # cannot read the shared store for a moment, leaves the call running.
            return e.reason in _RESUME_AGAIN
        return e.code in _DROPPED


def auth_metadata(api_key: Optional[str], extra: Optional[Metadata]) -> List[Tuple[str, Union[str, bytes]]]:
    md: List[Tuple[str, Union[str, bytes]]] = list(extra or ())
    if api_key:
        md.append(("authorization", f"Bearer {api_key}"))
    return md


class StreamBase:
    """What the sync and the asyncio GenerateStream share: the call's state
    as properties, the listeners, cancel()."""

    def __init__(self, state: CallState, metadata: Metadata, on_resume: Optional[OnResume], on_reissue: Optional[OnReissue]) -> None:
        self._state = state
        self._metadata = metadata
        self._on_resume: List[OnResume] = [on_resume] if on_resume else []
        self._on_reissue: List[OnReissue] = [on_reissue] if on_reissue else []
        self._rpc: Any = None
        self._cancelled = ""  # why the call was ended, once it was: cancel() or the client's close()
        self._expired: Optional[LLMRelayError] = None  # its deadline passed while it waited to resume

    @property
    def request_id(self) -> str:
        """The call's request id: the request's (one is made up for a
        resumable request without one), else the server's once known: from
        the headers of a resumable call, from the trailers of any call once
        the stream ended after its final event; "" until then."""
        return self._state.request_id

    @property
    def resumable(self) -> bool:
        """Whether the call is known to be resumable."""
        return self._state.resumable

    @property
    def resumes(self) -> int:
        """How many times the stream picked the call up again after a drop."""
        return self._state.resumes

    @property
    def reissues(self) -> int:
        """How many times the call was issued again after the server lost it."""
        return self._state.reissues

    def on_resume(self, fn: OnResume) -> None:
        """Adds a listener for resumes."""
        self._on_resume.append(fn)

    def on_reissue(self, fn: OnReissue) -> None:
        """Adds a listener for re-issues of a lost call."""
        self._on_reissue.append(fn)

    def cancel(self) -> None:
        """Ends the call: iterating the stream raises CANCELLED, also when it
        has not started yet or is about to pick a dropped call up again."""
        self._end("the call was cancelled")

    def close(self) -> None:
        """Ends the call (cancel()) unless its final event came: what
        leaving a ``with`` block does."""
        if not self._state.final:
            self.cancel()

    def _end(self, why: str) -> None:
        self._cancelled = self._cancelled or why
        if self._rpc is not None:
            self._rpc.cancel()

    def _started(self, rpc: Any) -> None:
        """Keeps rpc as the call's current stream (cancel() ends it), and
        ends it at once when the call was cancelled meanwhile."""
        self._rpc = rpc
        if self._cancelled:
            rpc.cancel()

    def _check_cancelled(self) -> None:
        """Raises CANCELLED when cancel() was called, DEADLINE_EXCEEDED when
        the deadline passed while the call waited to resume: no RPC is sent
        after either."""
        if self._expired is not None:
            raise self._expired
        if self._cancelled:
            raise LLMRelayError(grpc.StatusCode.CANCELLED, self._cancelled, request_id=self._state.request_id)

    def _failed(self, err: grpc.RpcError) -> Retry:
        """Decides after a failed stream (see CallState.failed), telling the
        listeners of a resume or a re-issue; raises the call's error."""
        e = LLMRelayError.from_rpc_error(err, self._state.request_id)
        if self._cancelled:
            raise e from None
        retry = self._state.failed(e)
        if retry.expires:
            self._expired = self._state.expired(e)
        elif retry.resumed:
            for on_resume in self._on_resume:
                on_resume(self._state.last, e)
        else:
            for on_reissue in self._on_reissue:
                on_reissue(e)
        return retry


class Streams:
    """The streams of one client, so that closing the client ends them: a
    grpc.aio channel's close does not end a stream being read, and no
    stream of a closed client resumes or sends anything."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: "weakref.WeakSet[StreamBase]" = weakref.WeakSet()
        self._closed = False

    def add(self, stream: StreamBase) -> None:
        """Keeps stream, or ends it at once when the client is closed."""
        with self._lock:
            if not self._closed:
                self._streams.add(stream)
                return
        stream._end("the client is closed")

    def check_open(self) -> None:
        """Raises CANCELLED once the client is closed (grpc would raise
        ValueError, or grpc.aio UsageError, for a call on a closed channel)."""
        if self._closed:
            raise LLMRelayError(grpc.StatusCode.CANCELLED, "the client is closed")

    def close(self) -> None:
        """Ends every stream of the client, and those it makes later."""
        with self._lock:
            self._closed = True
            streams = list(self._streams)
        for stream in streams:
            stream._end("the client is closed")
