"""Streams a resumable reply from llmrelay with the Python helper
generate_resumable (resumable.py): when the connection drops in the middle
of the reply, the helper picks the call up again after the last event it
received, and the reply goes on where it stopped, neither repeated nor cut.
It prints the text as it arrives, a line when it resumes, and the final
message.

    PYTHONPATH=gen/python python3 examples/python/resume.py [text...]

It calls mock/echo on $LLMRELAY_ADDR (default 127.0.0.1:50051, plaintext),
with $LLMRELAY_API_KEY if set, one word every 25ms. Put something that drops
connections between them to see it resume (scripts/test-clients.sh uses a
proxy that cuts the first connection).

Needs grpcio and protobuf (Debian: python3-grpcio, python3-protobuf).
"""

import os
import sys

import grpc
from google.protobuf import struct_pb2

from llmrelay.v1 import llmrelay_pb2, llmrelay_pb2_grpc
from resumable import generate_resumable
from stream import end_line, report

DEFAULT_TEXT = (
    "a resumable call keeps running on the server when the connection drops and the client picks it up again "
    "after the last event it received so that nothing is lost and nothing is repeated"
)


def main() -> int:
    addr = os.environ.get("LLMRELAY_ADDR", "127.0.0.1:50051")
    text = " ".join(sys.argv[1:]) or DEFAULT_TEXT
    key = os.environ.get("LLMRELAY_API_KEY")
    provider_options = struct_pb2.Struct()
    provider_options.update({"chunk_delay_ms": 25})
    request = llmrelay_pb2.GenerateRequest(
        model="mock/echo",
        messages=[llmrelay_pb2.Message(role=llmrelay_pb2.ROLE_USER, content=text)],
        resumable=True,
        provider_options=provider_options,
    )
    metadata = [("authorization", f"Bearer {key}")] if key else None
    state = {"line_open": False}

    def on_resume(after, _err):
        state["line_open"] = end_line(state["line_open"])
        print(f"resumed: after_sequence={after}", flush=True)

    with grpc.insecure_channel(addr) as channel:
        stub = llmrelay_pb2_grpc.LLMServiceStub(channel)
        answer = None
        try:
            for ev in generate_resumable(stub, request, metadata=metadata, timeout=30, on_resume=on_resume):
                kind = ev.WhichOneof("event")
                if kind == "delta":
                    print(ev.delta.text, end="", flush=True)
                    state["line_open"] = state["line_open"] or ev.delta.text != ""
                elif kind == "final":
                    answer = ev.final.message.content
        except grpc.RpcError as err:
            end_line(state["line_open"])
            report(err)
            return 1
        end_line(state["line_open"])
        if answer is None:
            print("error: the stream ended without a final event", file=sys.stderr)
            return 1
        print(f"final: {answer}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
