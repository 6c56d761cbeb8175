"""LLMRelayError: a failed call's gRPC status with llmrelay's details."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import grpc
from google.rpc import error_details_pb2, status_pb2

DOMAIN = "llmrelay"
"""The ErrorInfo domain of llmrelay's own errors."""

REQUEST_ID_HEADER = "llmrelay-request-id"
"""The response header (and trailer) that carries a call's request id."""

_STATUS_DETAILS_KEY = "grpc-status-details-bin"
_CODES = {c.value[0]: c for c in grpc.StatusCode}


@dataclass(frozen=True)
class FieldViolation:
    """A field of a request that broke a rule (google.rpc.BadRequest)."""

    field: str
    """The field's path, e.g. "messages[0].role"."""
    description: str
    """What is wrong with it, written for people."""
    reason: str = ""
    """The rule that failed (protovalidate's rule id), when there is one."""


@dataclass(eq=False)
class LLMRelayError(Exception):
    """A failed llmrelay call: its gRPC status with the details llmrelay
    attaches, as Python values. Switch on ``reason`` (stable, UPPER_SNAKE),
    not on ``message``."""

    code: grpc.StatusCode
    """The gRPC status code."""
    message: str
    """The status message, written for people."""
    reason: str = ""
    """The ErrorInfo reason, e.g. "PROVIDER_RATE_LIMITED"; "" when the status
    has none (an error from below llmrelay: a proxy, the connection)."""
    domain: str = ""
    """The ErrorInfo domain: "llmrelay" for llmrelay's own errors."""
    metadata: Dict[str, str] = field(default_factory=dict)
    """The ErrorInfo metadata, e.g. attempts, provider."""
    retry_delay: Optional[float] = None
    """The RetryInfo delay in seconds: how long to wait before calling
    again; None without RetryInfo."""
    field_violations: List[FieldViolation] = field(default_factory=list)
    """The BadRequest field violations: what was wrong with the request."""
    request_id: str = ""
    """The call's request id, when the server or the request named one."""
    trailers: Tuple[Tuple[str, Any], ...] = ()
    """The call's trailing metadata."""

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.reason:
            return f"{self.code.name} {self.reason}: {self.message}"
        return f"{self.code.name}: {self.message}"

    @property
    def code_name(self) -> str:
        """The gRPC name of the code, e.g. "DEADLINE_EXCEEDED"."""
        return str(self.code.name)

    @property
    def from_llmrelay(self) -> bool:
        """Whether the error is llmrelay's own answer (its ErrorInfo domain),
        not a dropped connection's or a proxy's."""
        return self.domain == DOMAIN

    @classmethod
    def from_status(cls, status: status_pb2.Status, trailers: Sequence[Tuple[str, Any]] = (), request_id: str = "") -> "LLMRelayError":
        """Returns a google.rpc.Status, such as a will_retry event's cause, as
        an LLMRelayError."""
        e = cls(code=_CODES.get(status.code, grpc.StatusCode.UNKNOWN), message=status.message, trailers=tuple(trailers))
        for any_ in status.details:
            info = error_details_pb2.ErrorInfo()
            retry = error_details_pb2.RetryInfo()
            bad = error_details_pb2.BadRequest()
            if any_.Unpack(info):
                if not e.reason:
                    e.reason, e.domain, e.metadata = info.reason, info.domain, dict(info.metadata)
            elif any_.Unpack(retry):
                e.retry_delay = retry.retry_delay.ToTimedelta().total_seconds()
            elif any_.Unpack(bad):
                e.field_violations.extend(
                    FieldViolation(v.field, v.description, getattr(v, "reason", "")) for v in bad.field_violations
                )
        e.request_id = e.metadata.get("request_id") or _get(trailers, REQUEST_ID_HEADER) or request_id
        Exception.__init__(e, str(e))
        return e

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError, request_id: str = "") -> "LLMRelayError":
        """Returns a grpc.RpcError (of grpc or grpc.aio) as an LLMRelayError,
        its status details decoded."""
        if isinstance(err, LLMRelayError):
            return err
        code, details, trailers = _parts(err)
        raw = _get(trailers, _STATUS_DETAILS_KEY)
        if isinstance(raw, bytes):
            status = status_pb2.Status.FromString(raw)
        else:
            status = status_pb2.Status(code=code.value[0], message=details or "")
        e = cls.from_status(status, trailers, request_id)
        e.__cause__ = err
        return e


def _parts(err: Any) -> Tuple[grpc.StatusCode, str, Tuple[Tuple[str, Any], ...]]:
    """The code, details and trailers of a sync or aio RpcError (aio's
    methods are plain calls on an AioRpcError, too)."""
    code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
    details = err.details() if callable(getattr(err, "details", None)) else str(err)
    md = err.trailing_metadata() if callable(getattr(err, "trailing_metadata", None)) else None
    return code or grpc.StatusCode.UNKNOWN, details or "", tuple(md or ())


def _get(md: Optional[Sequence[Tuple[str, Any]]], key: str) -> Any:
    for k, v in md or ():
        if k == key:
            return v
    return None


def header_value(md: Optional[Sequence[Tuple[str, Any]]], key: str) -> Optional[str]:
    """The first value of key in gRPC metadata, as a str; None when absent."""
    v = _get(md, key)
    if v is None:
        return None
    return v.decode() if isinstance(v, bytes) else str(v)

