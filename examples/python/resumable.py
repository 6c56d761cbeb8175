"""The llmrelay client helper for Python: Generate that survives a dropped
connection.

When the call is resumable (request.resumable, or a route that makes calls
resumable), a stream that fails with UNAVAILABLE or another error that did
not come from llmrelay (a reset connection, a proxy that restarted) is
picked up again with the Resume RPC after the last event received (or,
before any, by sending the same Generate again, which llmrelay does not run
twice), and the events go on where they stopped: none missed, none
repeated. See docs/resume.md.

    for ev in generate_resumable(stub, request, metadata=..., timeout=30):
        ...
"""

import time
import uuid

import grpc

from google.rpc import error_details_pb2, status_pb2
from llmrelay.v1 import llmrelay_pb2

MAX_TRIES = 8  # reconnections in a row without an event in between
BACKOFF_MIN = 0.1
BACKOFF_MAX = 2.0

# Reasons of llmrelay's after which the call runs on, to be resumed again.
_RESUME_AGAIN = {"RESUME_INTERRUPTED", "STATE_STORE_UNAVAILABLE"}

# Codes of a stream that dropped rather than ended (when the status carries
# no llmrelay ErrorInfo).
_DROPPED = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.CANCELLED,
}


class EventsMissing(Exception):
    """A stream skipped sequence numbers, which llmrelay never does."""


def generate_resumable(stub, request, metadata=None, timeout=None, on_resume=None):
    """Yields the events of a Generate call, picking a resumable call up again
    when its stream drops.

    A request that asks to be resumable without a request_id gets one (on a
    copy). timeout bounds the whole call, resumes included. on_resume(after,
    err) is called when the stream dropped (err) and the call is picked up
    after the event numbered after. Errors of llmrelay's own (the call's
    failure; NOT_FOUND when it can no longer be resumed) are raised as the
    grpc.RpcError they are.
    """
    if request.HasField("resumable") and request.resumable and not request.request_id:
        copy = llmrelay_pb2.GenerateRequest()
        copy.CopyFrom(request)
        copy.request_id = str(uuid.uuid4())
        request = copy
    request_id = request.request_id
    resumable = request.HasField("resumable") and request.resumable
    deadline = None if timeout is None else time.monotonic() + timeout
    last, received, tries = 0, False, 0
    while True:
        remaining = None if deadline is None else max(0.001, deadline - time.monotonic())
        if received:
            call = stub.Resume(
                llmrelay_pb2.ResumeRequest(request_id=request_id, after_sequence=last),
                metadata=metadata,
                timeout=remaining,
            )
        else:
            call = stub.Generate(request, metadata=metadata, timeout=remaining)
        headers_read = received
        try:
            for ev in call:
                if not headers_read:
                    # The response headers say whether the call is resumable
                    # (a route may have made it so) and its id (the server may
                    # have chosen it).
                    headers_read = True
                    md = dict(call.initial_metadata() or ())
                    resumable = md.get("llmrelay-resumable") == "true"
                    request_id = request_id or md.get("llmrelay-request-id", "")
                if received and resumable:
                    if ev.sequence <= last:
                        continue  # already yielded (llmrelay never sends it twice)
                    if ev.sequence != last + 1:
                        raise EventsMissing(f"got event {ev.sequence} after {last}")
                last, received, tries = ev.sequence, True, 0
                yield ev
            return
        except grpc.RpcError as err:
            if not (resumable and request_id and tries < MAX_TRIES and _dropped(err)):
                raise
            if tries > 0:
                time.sleep(min(BACKOFF_MIN * 2 ** (tries - 1), BACKOFF_MAX))
            tries += 1
            if on_resume is not None:
                on_resume(last, err)


def _dropped(err):
    """Reports whether err is a dropped stream rather than llmrelay's answer."""
    for key, value in err.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        for detail in status_pb2.Status.FromString(value).details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                if info.domain == "llmrelay":
                    # llmrelay's own answer: the call's outcome, or why it cannot
                    # be resumed; but a server serving a Resume that shuts down,
                    # or cannot read the shared store for a moment, leaves the
                    # call running.
                    return info.reason in _RESUME_AGAIN
    return err.code() in _DROPPED
