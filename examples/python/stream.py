"""Streams a reply from llmrelay over gRPC with the generated gen/python code,
the way every llmrelay client should: print the text as it arrives, print a
line on each will_retry and take back what a failed attempt showed when the
server says discard_partial, and print the final message, which is the answer.

    PYTHONPATH=gen/python python3 examples/python/stream.py [text...]

It calls mock/echo on $LLMRELAY_ADDR (default 127.0.0.1:50051, plaintext),
with $LLMRELAY_API_KEY if set, and a fault plan that drops the first attempt's
connection after two deltas, so the server restarts the reply.

Needs grpcio and protobuf (Debian: python3-grpcio, python3-protobuf).
"""

import json
import os
import sys

import grpc
from google.protobuf import duration_pb2, struct_pb2

from google.rpc import error_details_pb2, status_pb2
from llmrelay.v1 import llmrelay_pb2, llmrelay_pb2_grpc


def main() -> int:
    addr = os.environ.get("LLMRELAY_ADDR", "127.0.0.1:50051")
    text = " ".join(sys.argv[1:]) or "the quick brown fox jumps over the lazy dog"
    key = os.environ.get("LLMRELAY_API_KEY")

    # The first attempt drops after two deltas; the second one runs normally.
    provider_options = struct_pb2.Struct()
    provider_options.update({"faults": [{"drop_after": 2}]})
    request = llmrelay_pb2.GenerateRequest(
        model="mock/echo",
        messages=[llmrelay_pb2.Message(role=llmrelay_pb2.ROLE_USER, content=text)],
        retry=llmrelay_pb2.RetryPolicy(initial_backoff=duration_pb2.Duration(nanos=50_000_000)),
        provider_options=provider_options,
    )
    metadata = [("authorization", f"Bearer {key}")] if key else None

    # llmrelay's recommended service config lets gRPC retry UNAVAILABLE before
    # the first event; once events flow, retries are the server's job.
    with open(os.path.join(os.path.dirname(__file__), "../../docs/service-config.json")) as f:
        options = [("grpc.service_config", f.read())]

    # insecure_channel is plaintext, for a server on loopback; use
    # grpc.secure_channel(addr, grpc.ssl_channel_credentials(), options) for TLS.
    with grpc.insecure_channel(addr, options) as channel:
        stub = llmrelay_pb2_grpc.LLMServiceStub(channel)
        line_open = False  # the current line holds streamed text
        shown = ""  # what the current attempt has put on screen
        answer = None
        try:
            for ev in stub.Generate(request, metadata=metadata, timeout=30):
                kind = ev.WhichOneof("event")
                if kind == "delta":
                    print(ev.delta.text, end="", flush=True)
                    shown += ev.delta.text
                    line_open = line_open or ev.delta.text != ""
                elif kind == "will_retry":
                    w = ev.will_retry
                    # A terminal cannot unprint: end the line, say what is
                    # dropped, and stream the next attempt on a fresh line.
                    discarded = shown if w.discard_partial else ""
                    if w.discard_partial:
                        shown = ""
                    line_open = end_line(line_open)
                    print(
                        f"will_retry: next_attempt={w.next_attempt} delay_ms={w.delay.ToMilliseconds()}"
                        f" reason={llmrelay_pb2.RetryReason.Name(w.reason)}"
                        f" discard_partial={str(w.discard_partial).lower()} discarded={json.dumps(discarded)}"
                    )
                elif kind == "final":
                    # The final message is the answer, whatever the deltas showed.
                    answer = ev.final.message.content
        except grpc.RpcError as err:
            end_line(line_open)
            report(err)
            return 1
        end_line(line_open)
        if answer is None:
            print("error: the stream ended without a final event", file=sys.stderr)
            return 1
        print(f"final: {answer}")
        return 0


def end_line(line_open: bool) -> bool:
    """Ends the line of streamed text, if one is open; returns False."""
    if line_open:
        print(flush=True)
    return False


def report(err: grpc.RpcError) -> None:
    """Prints a failed call's code, ErrorInfo reason and RetryInfo delay."""
    reason, retry_ms = "", None
    for key, value in err.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        for detail in status_pb2.Status.FromString(value).details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason = info.reason
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                retry = error_details_pb2.RetryInfo()
                detail.Unpack(retry)
                retry_ms = retry.retry_delay.ToMilliseconds()
    print(f"error: {err.code().name} {reason}: {err.details()}", file=sys.stderr)
    if retry_ms is not None:
        print(f"the server suggests calling again in {retry_ms}ms", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
