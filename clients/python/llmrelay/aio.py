"""The asyncio client: the same calls as llmrelay.Client, on grpc.aio.

>>> async with llmrelay.aio.Client("127.0.0.1:50051", insecure=True) as relay:
...     reply = await llmrelay.Reply.acollect(relay.generate(model="mock/echo", messages=[llmrelay.user("hi")]))
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, List, Optional, Sequence, Tuple, Union

import grpc
import grpc.aio

from ._call import CallState, Metadata, OnReissue, OnResume, StreamBase, Streams, auth_metadata, channel_options
from ._client import build_embed_request, build_request, credentials
from ._errors import LLMRelayError
from .v1 import llmrelay_pb2, llmrelay_pb2_grpc

__all__ = ["Client", "GenerateStream"]


class Client:
    """An asyncio client of one llmrelay server: see llmrelay.Client. Make
    and use it inside the event loop; close it, or use ``async with``."""

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
        self._channel = (
            grpc.aio.insecure_channel(address, opts) if creds is None else grpc.aio.secure_channel(address, creds, opts)
        )
        self.stub = llmrelay_pb2_grpc.LLMServiceStub(self._channel)
        """The generated stub (grpc.aio), for calls this class does not wrap."""
        self._metadata = auth_metadata(api_key, metadata)
        self._streams = Streams()

    @property
    def channel(self) -> grpc.aio.Channel:
        """The client's grpc.aio channel, for the server's other services:
        the admin API's stubs (``llmrelay.admin.v1.admin_pb2_grpc``), called
        with ``metadata=relay.metadata``; see llmrelay.Client.channel."""
        return self._channel

    @property
    def metadata(self) -> List[Tuple[str, Union[str, bytes]]]:
        """The metadata every call of the client sends: the client's own and
        the API key's ``authorization``."""
        return list(self._metadata)

    async def close(self) -> None:
        """Closes the channel; calls in progress end with CANCELLED, and are
        not resumed, and later ones fail so."""
        self._streams.close()
        await self._channel.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

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
        """Starts a Generate call; iterate the result with ``async for``. The
        arguments are llmrelay.Client.generate's."""
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
        """Picks up the resumable call request_id after event after_sequence."""
        state = CallState(None, timeout, False, request_id=request_id, after_sequence=after_sequence)
        stream = GenerateStream(self.stub, state, [*self._metadata, *(metadata or ())], on_resume, None)
        self._streams.add(stream)
        return stream

    async def list_models(
        self, provider: str = "", *, timeout: Optional[float] = 30.0, metadata: Optional[Metadata] = None
    ) -> List[llmrelay_pb2.Model]:
        """Lists the models the caller may use (a provider's only, when
        named); list_models_response also says which providers accept any
        model name."""
        return list((await self.list_models_response(provider, timeout=timeout, metadata=metadata)).models)

    async def list_models_response(
        self, provider: str = "", *, timeout: Optional[float] = 30.0, metadata: Optional[Metadata] = None
    ) -> llmrelay_pb2.ListModelsResponse:
        """The whole ListModelsResponse: see llmrelay.Client.list_models_response."""
        self._streams.check_open()
        try:
            resp: llmrelay_pb2.ListModelsResponse = await self.stub.ListModels(
                llmrelay_pb2.ListModelsRequest(provider=provider), timeout=timeout, metadata=[*self._metadata, *(metadata or ())]
            )
        except grpc.RpcError as err:
            raise LLMRelayError.from_rpc_error(err) from None
        return resp

    async def list_tools(
        self, server: str = "", *, timeout: Optional[float] = 30.0, metadata: Optional[Metadata] = None
    ) -> llmrelay_pb2.ListToolsResponse:
        """Lists the server tools the caller may offer a model
        (GenerateRequest.server_tools), each with whether its MCP server
        answers right now, and the server's MCP servers (one server's only,
        when named)."""
        self._streams.check_open()
        try:
            resp: llmrelay_pb2.ListToolsResponse = await self.stub.ListTools(
                llmrelay_pb2.ListToolsRequest(server=server), timeout=timeout, metadata=[*self._metadata, *(metadata or ())]
            )
        except grpc.RpcError as err:
            raise LLMRelayError.from_rpc_error(err) from None
        return resp

    async def embed(
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
            resp: llmrelay_pb2.EmbedResponse = await self.stub.Embed(req, timeout=timeout, metadata=[*self._metadata, *(metadata or ())])
        except grpc.RpcError as err:
            raise LLMRelayError.from_rpc_error(err) from None
        return resp


class GenerateStream(StreamBase):
    """The events of one Generate call, to iterate once with ``async for``:
    llmrelay.GenerateStream's behaviour, on asyncio; ``async with`` ends
    the call when the block is left, if it has not ended."""

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
        self._iter: Optional[AsyncIterator[llmrelay_pb2.GenerateEvent]] = None

    def __aiter__(self) -> AsyncIterator[llmrelay_pb2.GenerateEvent]:
        if self._iter is None:
            self._iter = self._run()
        return self._iter

    async def __aenter__(self) -> "GenerateStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    async def _run(self) -> AsyncIterator[llmrelay_pb2.GenerateEvent]:
        st = self._state
        while True:
            self._check_cancelled()
            method, req = st.next_rpc()
            rpc = getattr(self._stub, method)(req, timeout=st.timeout(), metadata=self._metadata)
            self._started(rpc)
            try:
                async for ev in rpc:
                    if not st.headers_read:
                        st.headers(await rpc.initial_metadata())
                    if st.event(ev):
                        yield ev
                st.ended(await rpc.trailing_metadata())
                return
            except asyncio.CancelledError:
                if not self._cancelled:
                    raise  # the task reading the stream is cancelled
                # cancel() or the client's close(): grpc.aio raises
                # CancelledError from a call it cancelled.
                self._check_cancelled()
                raise
            except grpc.RpcError as err:
                st.failed_headers(await rpc.initial_metadata())
                retry = self._failed(err)
            finally:
                if not rpc.done():
                    rpc.cancel()
            if retry.delay:
                await asyncio.sleep(retry.delay)
