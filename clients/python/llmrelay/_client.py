"""The synchronous client."""

from __future__ import annotations

import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import grpc
from google.protobuf import struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from ._call import CallState, Metadata, OnReissue, OnResume, StreamBase, Streams, auth_metadata, channel_options, with_request_id
from ._errors import LLMRelayError
from .v1 import llmrelay_pb2, llmrelay_pb2_grpc


def credentials(insecure: bool, root_certificates: Optional[bytes]) -> Optional[grpc.ChannelCredentials]:
    """The channel's credentials: None for plaintext."""
    if insecure:
        if root_certificates is not None:
            raise ValueError("llmrelay: root_certificates and insecure both given")
        return None
    return grpc.ssl_channel_credentials(root_certificates=root_certificates)


def _with_structs(descriptor: Descriptor, fields: Mapping[str, Any]) -> Dict[str, Any]:
    """fields of a message of descriptor with every dict given for a
    google.protobuf.Struct field (``provider_options``,
    ``response_format.json_schema``, ``tools[].parameters``) made a Struct,
    which the generated constructors do not take from a plain dict, also
    inside the dicts given for other message fields."""
    out = dict(fields)
    for name, value in fields.items():
        field = descriptor.fields_by_name.get(name)
        kind = field.message_type if field is not None else None
        if kind is None or kind.GetOptions().map_entry or value is None:
            continue
        if field.label == FieldDescriptor.LABEL_REPEATED:
            out[name] = [_message_init(kind, v) for v in value]
        else:
            out[name] = _message_init(kind, value)
    return out


def _message_init(kind: Descriptor, value: Any) -> Any:
    """value, given for a message field of type kind, as its constructor
    takes it: a dict for a Struct made one, another dict with its Structs
    made so; anything else (a message, None) as it is."""
    if not isinstance(value, Mapping):
        return value
    if kind.full_name == struct_pb2.Struct.DESCRIPTOR.full_name:
        struct = struct_pb2.Struct()
        struct.update(value)
        return struct
    return _with_structs(kind, value)


def build_request(request: Optional[llmrelay_pb2.GenerateRequest], fields: Dict[str, Any]) -> llmrelay_pb2.GenerateRequest:
    """The request: as given, or built from keyword fields (messages may
    be dicts, JSON Schemas and ``provider_options`` too)."""
    if request is not None and fields:
        raise TypeError("llmrelay: pass a GenerateRequest or its fields, not both")
    if request is None:
        request = llmrelay_pb2.GenerateRequest(**_with_structs(llmrelay_pb2.GenerateRequest.DESCRIPTOR, fields))
    return with_request_id(request)


def build_embed_request(request: Optional[llmrelay_pb2.EmbedRequest], fields: Dict[str, Any]) -> llmrelay_pb2.EmbedRequest:
    """An EmbedRequest: as given, or built from keyword fields
    (``provider_options`` may be a dict)."""
    if request is not None and fields:
        raise TypeError("llmrelay: pass an EmbedRequest or its fields, not both")
    if request is None:
        request = llmrelay_pb2.EmbedRequest(**_with_structs(llmrelay_pb2.EmbedRequest.DESCRIPTOR, fields))
    return request


class Client:
    """A client of one llmrelay server, over one gRPC channel (TLS by
    default; ``insecure=True`` for plaintext, as for a server on loopback).
    Safe to share between threads. Close it, or use it as a context manager.

    The channel carries llmrelay's recommended service config: gRPC retries
    a call that failed with UNAVAILABLE before its first event, and follows
    the server's pushback (``grpc-retry-pushback-ms``), so that the client
    never multiplies the server's own retries.

    >>> with llmrelay.Client("127.0.0.1:50051", insecure=True) as relay:
    ...     reply = llmrelay.Reply.collect(relay.generate(model="mock/echo", messages=[llmrelay.user("hi")]))
    """

    def __init__(
        self,
        address: str,
        *,
        api_key: Optional[str] = None,
        insecure: bool = False,
        root_certificates: Optional[bytes] = None,
        metadata: Optional[Metadata] = None,
        options: Sequence[Tuple[str, Any]] = (),
    ) -> None:
        creds = credentials(insecure, root_certificates)
        opts = channel_options(options)
        self._channel = grpc.insecure_channel(address, opts) if creds is None else grpc.secure_channel(address, creds, opts)
        self.stub = llmrelay_pb2_grpc.LLMServiceStub(self._channel)
        """The generated stub, for calls this class does not wrap."""
        self._metadata = auth_metadata(api_key, metadata)
        self._streams = Streams()

    @property
    def channel(self) -> grpc.Channel:
        """The client's channel (llmrelay's service config, its TLS), for the
        server's other services: the admin API's stubs, called with
        ``metadata=relay.metadata``::

            from llmrelay.admin.v1 import admin_pb2, admin_pb2_grpc
            keys = admin_pb2_grpc.KeyServiceStub(relay.channel)
            keys.ListKeys(admin_pb2.ListKeysRequest(), metadata=relay.metadata, timeout=30)
        """
        return self._channel

    @property
    def metadata(self) -> List[Tuple[str, Union[str, bytes]]]:
        """The metadata every call of the client sends: the client's own and
        the API key's ``authorization``."""
        return list(self._metadata)

    def close(self) -> None:
        """Closes the channel; calls in progress end with CANCELLED, and are
        not resumed, and later ones fail so."""
        self._streams.close()
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def generate(
        self,
        request: Optional[llmrelay_pb2.GenerateRequest] = None,
        *,
        timeout: Optional[float] = None,
        reissue_lost_call: bool = False,
        on_resume: Optional[OnResume] = None,
        on_reissue: Optional[OnReissue] = None,
        metadata: Optional[Metadata] = None,
        **fields: Any,
    ) -> "GenerateStream":
        """Starts a Generate call and returns its events (a GenerateStream,
        to iterate once). ``request`` is a GenerateRequest, or pass its
        fields as keywords. ``timeout`` (seconds) bounds the whole call,
        resumes included.

        A resumable call (``resumable=True``, or a route that makes calls
        resumable) survives a dropped connection: the stream picks it up
        again after the last event it yielded, up to 8 times in a row with a
        backoff from 0.1s to 2s, and goes on: no event missed or repeated;
        ``on_resume(after_sequence, cause)`` hears of it.

        ``reissue_lost_call=True`` sends a resumable call the server lost
        (ABORTED, RESUMABLE_CALL_LOST: its replica crashed, or a drain could
        not keep it; or RESUMABLE_CALL_NOT_FOUND in answer to the stream's
        own Resume after a drop) again with the same request_id, up to 3 times; what it showed must be
        discarded, as for will_retry.discard_partial: Reply does it, and
        ``on_reissue(cause)`` tells a reader of the raw stream. Off by
        default: the lost call may have had effects the caller must weigh.
        """
        req = build_request(request, fields)
        state = CallState(req, timeout, reissue_lost_call)
        stream = GenerateStream(self.stub, state, [*self._metadata, *(metadata or ())], on_resume, on_reissue)
        self._streams.add(stream)
        return stream

    def resume(
        self,
        request_id: str,
        after_sequence: int = 0,
        *,
        timeout: Optional[float] = None,
        on_resume: Optional[OnResume] = None,
        metadata: Optional[Metadata] = None,
    ) -> "GenerateStream":
        """Picks up the resumable call request_id after the event numbered
        after_sequence (0: from its first event), for a caller that kept the
        call's id across its own restart. It resumes again by itself."""
        state = CallState(None, timeout, False, request_id=request_id, after_sequence=after_sequence)
        stream = GenerateStream(self.stub, state, [*self._metadata, *(metadata or ())], on_resume, None)
        self._streams.add(stream)
        return stream

    def list_models(self, provider: str = "", *, timeout: Optional[float] = 30.0, metadata: Optional[Metadata] = None) -> List[llmrelay_pb2.Model]:
        """Lists the models the caller may use (a provider's only, when
        named). A provider configured without a models list accepts any
        model name and has none here: list_models_response says which.
        ``timeout`` (seconds) is 30 unless given (None: no bound), as for
        every listing here and in the Go and TypeScript clients: the server
        answers at once, so a listing still waiting then is one whose
        connection went silent."""
        return list(self.list_models_response(provider, timeout=timeout, metadata=metadata).models)

    def list_models_response(
        self, provider: str = "", *, timeout: Optional[float] = 30.0, metadata: Optional[Metadata] = None
    ) -> llmrelay_pb2.ListModelsResponse:
        """The whole ListModelsResponse of list_models: its ``models``, and
        its ``any_model_providers``, the providers that accept any model
        name (called as "<provider>/<model>"), each with the API key's
        ``models`` patterns that may reach it."""
        self._streams.check_open()
        try:
            resp: llmrelay_pb2.ListModelsResponse = self.stub.ListModels(
                llmrelay_pb2.ListModelsRequest(provider=provider), timeout=timeout, metadata=[*self._metadata, *(metadata or ())]
            )
        except grpc.RpcError as err:
            raise LLMRelayError.from_rpc_error(err) from None
        return resp

    def list_tools(
        self, server: str = "", *, timeout: Optional[float] = 30.0, metadata: Optional[Metadata] = None
    ) -> llmrelay_pb2.ListToolsResponse:
        """Lists the server tools the caller may offer a model
        (GenerateRequest.server_tools), each with whether its MCP server
        answers right now, and the server's MCP servers (one server's only,
        when named)."""
        self._streams.check_open()
        try:
            resp: llmrelay_pb2.ListToolsResponse = self.stub.ListTools(
                llmrelay_pb2.ListToolsRequest(server=server), timeout=timeout, metadata=[*self._metadata, *(metadata or ())]
            )
        except grpc.RpcError as err:
            raise LLMRelayError.from_rpc_error(err) from None
        return resp

    def embed(
        self,
        request: Optional[llmrelay_pb2.EmbedRequest] = None,
        *,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
        **fields: Any,
    ) -> llmrelay_pb2.EmbedResponse:
        """Returns the embeddings of the request's inputs, one per input, in
        order, with the provider, model, usage and attempts that answered.
        ``request`` is an EmbedRequest, or pass its fields as keywords
        (``model="mock/echo", inputs=["the cat sat"], dimensions=4``).
        ``timeout`` (seconds) bounds the call; without it, the server's
        deadline. gRPC retries UNAVAILABLE as the service config says. A
        response holds 4 bytes a value and gRPC receives 4 MiB by default:
        for more, give the client the channel option
        ``("grpc.max_receive_message_length", N)``."""
        self._streams.check_open()
        req = build_embed_request(request, fields)
        try:
            resp: llmrelay_pb2.EmbedResponse = self.stub.Embed(req, timeout=timeout, metadata=[*self._metadata, *(metadata or ())])
        except grpc.RpcError as err:
            raise LLMRelayError.from_rpc_error(err) from None
        return resp


class GenerateStream(StreamBase):
    """The events of one Generate call, to iterate once. It ends after the
    final event; a failed call raises LLMRelayError. Not thread-safe.

    A context manager: leaving the ``with`` block ends the call (cancel())
    if it has not ended, so that a loop left early with ``break`` does not
    leave the provider generating to the end. (Leaving a ``for`` loop alone
    does not end it: the stream is still there to be read.)"""

    def __init__(
        self,
        stub: llmrelay_pb2_grpc.LLMServiceStub,
        state: CallState,
        metadata: Metadata,
        on_resume: Optional[OnResume],
        on_reissue: Optional[OnReissue],
    ) -> None:
        super().__init__(state, metadata, on_resume, on_reissue)
        self._stub = stub
        self._iter: Optional[Iterator[llmrelay_pb2.GenerateEvent]] = None

    def __iter__(self) -> Iterator[llmrelay_pb2.GenerateEvent]:
        if self._iter is None:
            self._iter = self._run()
        return self._iter

    def __enter__(self) -> "GenerateStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __next__(self) -> llmrelay_pb2.GenerateEvent:
        return next(iter(self))

    def _run(self) -> Iterator[llmrelay_pb2.GenerateEvent]:
        st = self._state
        while True:
            self._check_cancelled()
            method, req = st.next_rpc()
            rpc = getattr(self._stub, method)(req, timeout=st.timeout(), metadata=self._metadata)
            self._started(rpc)
            try:
                for ev in rpc:
                    if not st.headers_read:
                        st.headers(rpc.initial_metadata())
                    if st.event(ev):
                        yield ev
                st.ended(rpc.trailing_metadata())
                return
            except grpc.RpcError as err:
                st.failed_headers(rpc.initial_metadata())
                retry = self._failed(err)
            finally:
                if not rpc.done():
                    rpc.cancel()
            if retry.delay:
                time.sleep(retry.delay)
