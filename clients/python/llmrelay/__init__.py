"""llmrelay: the Python client of llmrelay, the gRPC gateway to LLM providers.

- ``Client`` (and ``llmrelay.aio.Client`` for asyncio) dials a server (TLS by
  default; ``insecure=True`` for loopback) with llmrelay's recommended
  service config and sends its API key; ``generate`` returns a
  GenerateStream of typed events that resumes a resumable call whose
  connection dropped and, when asked, re-issues a resumable call the server
  lost.
- ``Reply`` applies the event contract: it keeps the current attempt's text,
  drops it on will_retry.discard_partial (only its own turn's, with server
  tools, whose results and progress it keeps), and holds the final event,
  the answer, and with structured output its object as plain JSON
  (``reply.object``).
- ``embed`` returns the embeddings of some texts, one vector per text.
- ``list_models`` and ``list_tools`` list what the caller may use;
  ``list_models_response`` also names the providers that accept any model
  name.
- A failed call raises ``LLMRelayError``: the status code, the ErrorInfo
  reason and metadata, the RetryInfo delay, the field violations and the
  request id.

The generated messages are in ``llmrelay.v1.llmrelay_pb2`` (also ``llmrelay.pb``).
"""

from . import aio
from ._call import (
    REASON_RESUMABLE_CALL_LOST,
    REASON_RESUMABLE_CALL_NOT_FOUND,
    RESUMABLE_HEADER,
    channel_options,
    service_config,
)
from ._client import Client, GenerateStream
from ._errors import DOMAIN, REQUEST_ID_HEADER, FieldViolation, LLMRelayError
from ._reply import ReasoningSoFar, Reply, ToolCallSoFar, TurnSoFar
from .v1 import llmrelay_pb2 as pb

__version__ = "0.1.0"
"""The package's version: the llmrelay server version it was released with."""


def user(content: str) -> pb.Message:
    """A user message."""
    return pb.Message(role=pb.ROLE_USER, content=content)


def system(content: str) -> pb.Message:
    """A system message."""
    return pb.Message(role=pb.ROLE_SYSTEM, content=content)


__all__ = [
    "Client",
    "GenerateStream",
    "Reply",
    "ReasoningSoFar",
    "ToolCallSoFar",
    "TurnSoFar",
    "LLMRelayError",
    "FieldViolation",
    "DOMAIN",
    "REQUEST_ID_HEADER",
    "RESUMABLE_HEADER",
    "REASON_RESUMABLE_CALL_LOST",
    "REASON_RESUMABLE_CALL_NOT_FOUND",
    "channel_options",
    "service_config",
    "aio",
    "pb",
    "user",
    "system",
]
