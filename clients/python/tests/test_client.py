"""Tests of what the scenarios against the real server cannot reach (yet):
re-issuing a resumable call the server lost, the service config's retry
with and without the server's pushback, and the reply helper's turns
event by event, through the sync and the asyncio clients. An in-process
grpcio server plays llmrelay.

    python -m unittest discover -s clients/python/tests   # with the package installed
"""

import asyncio
import json
import threading
import time
import unittest
from unittest import mock
from concurrent import futures

import grpc
from google.protobuf import json_format, struct_pb2
from google.rpc import error_details_pb2, status_pb2

import llmrelay
from llmrelay import LLMRelayError, Reply, pb
from llmrelay.v1 import llmrelay_pb2_grpc


def _reply(text):
    words = text.split(" ")
    words = [w + " " for w in words[:-1]] + [words[-1]]
    for n, w in enumerate(words, 1):
        yield pb.GenerateEvent(sequence=n, attempt=1, delta=pb.Delta(text=w))
    yield pb.GenerateEvent(
        sequence=len(words) + 1,
        attempt=1,
        final=pb.Final(message=pb.Message(role=pb.ROLE_ASSISTANT, content=text), attempts=1),
    )


def _tool_turns():
    """Turn 1 says a few words and calls a server tool, which reports progress
    and returns; turn 2's first attempt fails after a word and is retried."""
    events = [
        dict(turn=1, attempt=1, delta=pb.Delta(text="Let me ask. ")),
        dict(turn=1, attempt=1, delta=pb.Delta(tool_call=pb.ToolCallDelta(id="mock_1_0", name="everything__echo", arguments_delta='{"message":"hello"}', signature="sig-1"))),
        dict(turn=1, attempt=1, tool_progress=pb.ToolProgress(tool_call_id="mock_1_0", name="everything/echo", progress=1, total=2)),
        dict(heartbeat=pb.Heartbeat()),
        dict(turn=1, attempt=1, tool_result=pb.ToolResult(tool_call_id="mock_1_0", name="everything/echo", content="Echo: hello", attempts=1)),
        dict(turn=2, attempt=2, delta=pb.Delta(text="Echo: ")),
        dict(turn=2, attempt=2, will_retry=pb.WillRetry(next_attempt=3, discard_partial=True)),
        dict(turn=2, attempt=3, delta=pb.Delta(text="Echo: ")),
        dict(turn=2, attempt=3, delta=pb.Delta(text="hello")),
        dict(turn=2, attempt=3, final=pb.Final(message=pb.Message(role=pb.ROLE_ASSISTANT, content="Echo: hello"), attempts=3, turns=2)),
    ]
    for n, ev in enumerate(events, 1):
        yield pb.GenerateEvent(sequence=n, **ev)


def _abort(context, code, reason, pushback=None, details=()):
    info = error_details_pb2.ErrorInfo(reason=reason, domain="llmrelay", metadata={"request_id": "from-the-server"})
    status = status_pb2.Status(code=code.value[0], message=f"fake {reason}")
    status.details.add().Pack(info)
    for d in details:
        status.details.add().Pack(d)
    trailers = [("grpc-status-details-bin", status.SerializeToString())]
    if pushback is not None:
        trailers.append(("grpc-retry-pushback-ms", pushback))
    context.set_trailing_metadata(trailers)
    context.abort(code, status.message)


ROUTE_CALL_ID = "7b0e7c55-3f0c-4d8e-9a40-6a3f3c7c2f10"
"""The id the fake server gives the call of fake/route-resumable."""
DOWN_CALL_ID = "0c6d7e4a-2b1f-4f5e-8a7d-3c2b1a0f9e8d"
"""The id of a call of fake/down-after-two, whose Resume always fails."""


class FakeRelay(llmrelay_pb2_grpc.LLMServiceServicer):
    """Answers by model; records every call."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls = {}
        self.headers_seen = threading.Event()
        self.talking_gone = threading.Event()  # a fake/talking call's client went away
        self.clock = None  # the client's clock (_Clock), which fake/reset-at-deadline moves past the deadline
        self.list_timeouts = []  # the seconds left of each listing call, as the server received it

    def seen(self, request):
        with self.lock:
            self.calls.setdefault(request.model, []).append(request)
            return len(self.calls[request.model])

    def Generate(self, request, context):
        n = self.seen(request)
        if request.model == "fake/lost":  # the first call is lost after two words
            if n == 1:
                yield from list(_reply("lost words here"))[:2]
                _abort(context, grpc.StatusCode.ABORTED, "RESUMABLE_CALL_LOST")
            yield from _reply("the whole reply")
        elif request.model == "fake/dropped-then-not-found":  # dropped; its Resume finds nothing
            context.send_initial_metadata([("llmrelay-resumable", "true")])
            if n == 1:
                yield from list(_reply("dropped words here"))[:2]
                context.abort(grpc.StatusCode.UNAVAILABLE, "the connection broke")
            yield from _reply("the whole reply")
        elif request.model == "fake/route-resumable":  # a route made it resumable; dropped after its headers
            if n == 1:
                context.send_initial_metadata([("llmrelay-resumable", "true"), ("llmrelay-request-id", ROUTE_CALL_ID)])
                # Dropped once the client has the headers (read apart from
                # the status, as after a real heartbeat, which gRPC's own
                # retry then leaves alone).
                self.headers_seen.wait(30)
                context.abort(grpc.StatusCode.UNAVAILABLE, "the connection broke")
            yield from _reply("another call")
        elif request.model == "fake/talking":  # resumable: two words, then open until the client goes away
            # The call's end is watched from before the first word: a client
            # that cancels as soon as it has read the two words may be gone
            # before this generator runs again, and gRPC then never resumes
            # it (it stops at the send it could not make).
            gone, timed_out = threading.Event(), threading.Event()

            def ended():
                if not timed_out.is_set():
                    self.talking_gone.set()
                gone.set()

            if not context.add_callback(ended):  # refused: the call has ended already
                self.talking_gone.set()
                return
            context.send_initial_metadata([("llmrelay-resumable", "true")])
            yield from list(_reply("two words"))[:2]
            if not gone.wait(30):
                timed_out.set()
        elif request.model == "fake/down-after-two":  # resumable, dropped after two words; its Resume finds the server down
            context.send_initial_metadata([("llmrelay-resumable", "true")])
            yield from list(_reply("two words and more"))[:2]
            context.abort(grpc.StatusCode.UNAVAILABLE, "the connection broke")
        elif request.model == "fake/cut-after-final":  # the whole reply, then the connection breaks before the status
            yield from _reply("the whole reply")
            context.abort(grpc.StatusCode.UNAVAILABLE, "the connection broke")
        elif request.model == "fake/reset-at-deadline":  # the server's RST_STREAM CANCEL at the deadline, before the client's timer
            self.clock.ahead = 3600.0
            context.abort(grpc.StatusCode.CANCELLED, "the stream was reset")
        elif request.model == "fake/unavailable-once":
            if n == 1:
                context.abort(grpc.StatusCode.UNAVAILABLE, "a hop failed")
            yield from _reply("served")
        elif request.model == "fake/pushback":
            _abort(context, grpc.StatusCode.UNAVAILABLE, "PROVIDER_RETRY_DISALLOWED", pushback="-1")
        elif request.model == "fake/invalid":
            bad = error_details_pb2.BadRequest()
            bad.field_violations.add(field="messages[0].role", description="must be set")
            retry = error_details_pb2.RetryInfo()
            retry.retry_delay.FromMilliseconds(1500)
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST", details=[bad, retry])
        elif request.model == "fake/tools":
            yield from _tool_turns()
        elif request.model == "fake/served":
            yield from _reply("served")
        elif request.model == "fake/structured":  # a partial object, then the final with the validated object
            obj = {"city": "Paris", "days": [1, 2], "sunny": True, "note": None}
            yield pb.GenerateEvent(sequence=1, turn=1, attempt=1, delta=pb.Delta(text='{"city":"Par'))
            yield pb.GenerateEvent(sequence=2, turn=1, attempt=1, partial_object=json_format.ParseDict({"city": "Par"}, struct_pb2.Value()))
            final = pb.Final(message=pb.Message(role=pb.ROLE_ASSISTANT, content=json.dumps(obj)), attempts=1)
            json_format.ParseDict(obj, final.object)
            yield pb.GenerateEvent(sequence=3, turn=1, attempt=1, final=final)
        elif request.model == "fake/id-in-trailer":  # as llmrelay names a call that is not resumable
            context.set_trailing_metadata([("llmrelay-request-id", request.request_id or "made-up-by-the-server")])
            yield from _reply("served")
        else:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no such fake model {request.model}")

    def ListTools(self, request, context):
        self.list_timeouts.append(context.time_remaining())
        if self.seen(pb.GenerateRequest(model="list_tools")) == 1:
            context.abort(grpc.StatusCode.UNAVAILABLE, "a hop failed")
        return pb.ListToolsResponse(
            tools=[pb.ServerTool(name="everything/echo", server=request.server, available=True)],
            servers=[pb.ToolServer(name=request.server, available=True, tools=1)],
        )

    def ListModels(self, request, context):
        """mock's models, and openai, which accepts any model name, with the
        key's patterns that reach it."""
        self.list_timeouts.append(context.time_remaining())
        return pb.ListModelsResponse(
            models=[pb.Model(id="mock/echo", provider="mock", provider_kind="mock", name="echo")],
            any_model_providers=[pb.AnyModelProvider(provider="openai", provider_kind="openai", key_patterns=["openai/gpt-4o*"])],
        )

    def Resume(self, request, context):
        self.seen(pb.GenerateRequest(model="resume", request_id=request.request_id, metadata={"after": str(request.after_sequence)}))
        if request.request_id == ROUTE_CALL_ID:
            yield from _reply("the call itself")
            return
        if request.request_id == DOWN_CALL_ID:  # a dead path: gRPC's own retry told not to
            context.set_trailing_metadata([("grpc-retry-pushback-ms", "-1")])
            context.abort(grpc.StatusCode.UNAVAILABLE, "connection refused")
        _abort(context, grpc.StatusCode.NOT_FOUND, "RESUMABLE_CALL_NOT_FOUND")
        yield  # a generator, as a streaming handler is


class _Clock:
    """The clock of llmrelay._call (its ``time``), which the fake server can
    move ahead: a call's deadline passes at once, while gRPC's own timer
    for the stream does not."""

    def __init__(self):
        self.ahead = 0.0

    def monotonic(self):
        return time.monotonic() + self.ahead


def _ask(model, resumable=True):
    return dict(model=model, messages=[llmrelay.user("hi")], resumable=resumable, timeout=10)


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.fake = FakeRelay()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        llmrelay_pb2_grpc.add_LLMServiceServicer_to_server(self.fake, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.addr = f"127.0.0.1:{port}"
        self.relay = llmrelay.Client(self.addr, insecure=True, api_key="k")

    def tearDown(self):
        self.relay.close()
        self.server.stop(None)

    def test_lost_call_reissued_when_asked(self):
        discarded = []
        stream = self.relay.generate(**_ask("fake/lost"), reissue_lost_call=True)
        reply = Reply.collect(stream, on_reissue=lambda cause, text: discarded.append(f"{cause.reason}: {text}"))
        self.assertEqual(reply.text, "the whole reply")
        self.assertEqual(reply.final.message.content, "the whole reply")
        self.assertEqual(discarded, ["RESUMABLE_CALL_LOST: lost words "])
        self.assertEqual(stream.reissues, 1)
        sent = self.fake.calls["fake/lost"]
        self.assertEqual(len(sent), 2)
        self.assertTrue(sent[0].request_id and sent[0].request_id == sent[1].request_id, "the same request_id both times")

    def test_not_found_after_a_drop_reissued_when_asked(self):
        stream = self.relay.generate(**_ask("fake/dropped-then-not-found"), reissue_lost_call=True)
        reply = Reply.collect(stream)
        self.assertEqual(reply.text, "the whole reply")
        self.assertEqual((stream.resumes, stream.reissues), (1, 1))
        self.assertEqual(len(self.fake.calls["fake/dropped-then-not-found"]), 2)

    def _check_route_resumable(self, reply, stream):
        self.assertEqual(reply.final.message.content, "the call itself")
        self.assertEqual((stream.request_id, stream.resumes), (ROUTE_CALL_ID, 1))
        self.assertEqual([(r.request_id, r.metadata["after"]) for r in self.fake.calls["resume"]], [(ROUTE_CALL_ID, "0")])
        self.assertEqual(len(self.fake.calls["fake/route-resumable"]), 1, "one Generate: the call was not started twice")

    def test_route_resumable_dropped_before_any_event_resumed_by_its_id(self):
        """A call a route made resumable, its id in the headers, dropped before any event."""
        stream = self.relay.generate(model="fake/route-resumable", messages=[llmrelay.user("hi")], timeout=10)
        done = futures.ThreadPoolExecutor(1).submit(Reply.collect, stream)
        while stream._rpc is None:
            time.sleep(0.01)
        stream._rpc.initial_metadata()  # waits for the headers
        self.fake.headers_seen.set()
        self._check_route_resumable(done.result(timeout=30), stream)

    def test_aio_route_resumable_dropped_before_any_event_resumed_by_its_id(self):
        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                stream = relay.generate(model="fake/route-resumable", messages=[llmrelay.user("hi")], timeout=10)
                done = asyncio.ensure_future(Reply.acollect(stream))
                while stream._rpc is None:
                    await asyncio.sleep(0.01)
                await stream._rpc.initial_metadata()  # waits for the headers
                self.fake.headers_seen.set()
                return await done, stream

        self._check_route_resumable(*asyncio.run(run()))

    def test_lost_call_not_reissued_by_default(self):
        with self.assertRaises(LLMRelayError) as cm:
            Reply.collect(self.relay.generate(**_ask("fake/lost")))
        e = cm.exception
        self.assertEqual((e.code, e.reason, e.request_id), (grpc.StatusCode.ABORTED, "RESUMABLE_CALL_LOST", "from-the-server"))
        self.assertEqual(len(self.fake.calls["fake/lost"]), 1)

    def test_cancel_before_iterating_sends_nothing(self):
        stream = self.relay.generate(**_ask("fake/unavailable-once", resumable=False))
        stream.cancel()
        with self.assertRaises(LLMRelayError) as cm:
            Reply.collect(stream)
        self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)
        self.assertNotIn("fake/unavailable-once", self.fake.calls)

    def test_cancel_while_resuming_stops_the_call(self):
        """cancel() as the stream picks a dropped call up again: no Resume is sent."""
        stream = self.relay.generate(**_ask("fake/dropped-then-not-found"), reissue_lost_call=True)
        stream.on_resume(lambda after, cause: stream.cancel())
        with self.assertRaises(LLMRelayError) as cm:
            Reply.collect(stream)
        self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)
        self.assertEqual((stream.resumes, stream.reissues), (1, 0))
        self.assertNotIn("resume", self.fake.calls)
        self.assertEqual(len(self.fake.calls["fake/dropped-then-not-found"]), 1)

    def test_aio_cancel_before_iterating_sends_nothing(self):
        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                stream = relay.generate(**_ask("fake/unavailable-once", resumable=False))
                stream.cancel()
                await Reply.acollect(stream)

        with self.assertRaises(LLMRelayError) as cm:
            asyncio.run(run())
        self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)
        self.assertNotIn("fake/unavailable-once", self.fake.calls)

    def test_leaving_the_with_block_early_ends_the_call(self):
        # break leaves the stream to be read: the call runs on at the
        # server (and the provider with it) until the block is left.
        with self.relay.generate(**_ask("fake/talking", resumable=False)) as stream:
            for ev in stream:
                if ev.delta.text == "words":
                    break
            self.assertFalse(self.fake.talking_gone.wait(0.2), "the call ended before the block was left")
        self.assertTrue(self.fake.talking_gone.wait(30), "the call ran on after the with block")
        with self.assertRaises(LLMRelayError) as cm:
            next(iter(stream))
        self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)

    def test_aio_leaving_the_with_block_early_ends_the_call(self):
        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                async with relay.generate(**_ask("fake/talking", resumable=False)) as stream:
                    async for ev in stream:
                        if ev.delta.text == "words":
                            break
                # the client still open: the stream's block ended the call
                gone = await asyncio.get_running_loop().run_in_executor(None, self.fake.talking_gone.wait, 30)
                self.assertTrue(gone, "the call ran on after the async with block")

        asyncio.run(run())

    def test_collect_whose_hook_raised_ends_the_call(self):
        # As Go's Collect: a stream collect leaves is not left running.
        stream = self.relay.generate(**_ask("fake/talking", resumable=False))

        def on_delta(d, r):
            raise RuntimeError("the screen is gone")

        with self.assertRaisesRegex(RuntimeError, "the screen is gone"):
            Reply.collect(stream, on_delta=on_delta)
        self.assertTrue(self.fake.talking_gone.wait(5), "the call ran on after collect raised")

    def test_aio_collect_whose_hook_raised_ends_the_call(self):
        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                stream = relay.generate(**_ask("fake/talking", resumable=False))

                def on_delta(d, r):
                    raise RuntimeError("the screen is gone")

                with self.assertRaisesRegex(RuntimeError, "the screen is gone"):
                    await Reply.acollect(stream, on_delta=on_delta)
                # the client still open: collect ended the call
                gone = await asyncio.get_running_loop().run_in_executor(None, self.fake.talking_gone.wait, 5)
                self.assertTrue(gone, "the call ran on after acollect raised")

        asyncio.run(run())

    def test_admin_api_over_the_clients_channel(self):
        # The wheel ships the admin API's stubs; they go over the client's
        # channel with its API key.
        from llmrelay.admin.v1 import admin_pb2, admin_pb2_grpc

        seen = []

        class Keys(admin_pb2_grpc.KeyServiceServicer):
            def GetKey(self, request, context):
                seen.append(dict(context.invocation_metadata()).get("authorization"))
                return admin_pb2.GetKeyResponse(key=admin_pb2.Key(name=request.name, scopes=["admin"]))

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        admin_pb2_grpc.add_KeyServiceServicer_to_server(Keys(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.addCleanup(server.stop, None)
        with llmrelay.Client(f"127.0.0.1:{port}", insecure=True, api_key="admin-key") as relay:
            resp = admin_pb2_grpc.KeyServiceStub(relay.channel).GetKey(admin_pb2.GetKeyRequest(name="ops"), metadata=relay.metadata, timeout=10)

            async def aio():
                async with llmrelay.aio.Client(f"127.0.0.1:{port}", insecure=True, api_key="admin-key") as arelay:
                    return await admin_pb2_grpc.KeyServiceStub(arelay.channel).GetKey(
                        admin_pb2.GetKeyRequest(name="ops"), metadata=arelay.metadata, timeout=10
                    )

            aresp = asyncio.run(aio())
        self.assertEqual([resp.key.name, list(resp.key.scopes), aresp.key.name], ["ops", ["admin"], "ops"])
        self.assertEqual(seen, ["Bearer admin-key", "Bearer admin-key"])

    def test_close_ends_a_resumable_call_in_progress(self):
        relay = llmrelay.Client(self.addr, insecure=True)
        stream = relay.generate(**_ask("fake/talking"))
        with self.assertRaises(LLMRelayError) as cm:
            Reply.collect(stream, on_delta=lambda d, r: d.text == "words" and relay.close())
        self.assertEqual((cm.exception.code, stream.resumes), (grpc.StatusCode.CANCELLED, 0))
        with self.assertRaises(LLMRelayError) as cm:
            Reply.collect(relay.generate(**_ask("fake/talking")))
        self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)
        self.assertEqual(len(self.fake.calls["fake/talking"]), 1)
        self.assertNotIn("resume", self.fake.calls)
        for call in (relay.list_models, relay.list_models_response, relay.list_tools):
            with self.assertRaises(LLMRelayError) as cm:
                call()
            self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)

    def test_aio_close_ends_a_resumable_call_in_progress(self):
        async def run():
            relay = llmrelay.aio.Client(self.addr, insecure=True)
            stream = relay.generate(**_ask("fake/talking"))
            closing = []
            on_delta = lambda d, r: d.text == "words" and closing.append(asyncio.ensure_future(relay.close()))
            with self.assertRaises(LLMRelayError) as cm:
                await Reply.acollect(stream, on_delta=on_delta)
            self.assertEqual((cm.exception.code, stream.resumes), (grpc.StatusCode.CANCELLED, 0))
            await asyncio.gather(*closing)
            with self.assertRaises(LLMRelayError) as cm:
                await Reply.acollect(relay.generate(**_ask("fake/talking")))
            self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)
            for call in (relay.list_models, relay.list_models_response, relay.list_tools):
                with self.assertRaises(LLMRelayError) as cm:
                    await call()
                self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)

        asyncio.run(run())
        self.assertEqual(len(self.fake.calls["fake/talking"]), 1)
        self.assertNotIn("resume", self.fake.calls)

    def test_resume_backoff_ends_at_the_deadline(self):
        """A resume's backoff longer than the time left ends the call at its
        deadline, not after the backoff. The deadline leaves a loaded
        machine ample time for the call's two words, its drop and the
        Resume, which all come before it (with 1s, a slow start used it up
        before the drop: no resume, and the test failed)."""
        with mock.patch.object(llmrelay._call, "RESUME_BACKOFF_MIN", 60.0), mock.patch.object(llmrelay._call, "RESUME_BACKOFF_MAX", 60.0):
            started = time.monotonic()
            stream = self.relay.generate(model="fake/down-after-two", messages=[llmrelay.user("hi")], resumable=True, request_id=DOWN_CALL_ID, timeout=5)
            with self.assertRaises(LLMRelayError) as cm:
                Reply.collect(stream)
            elapsed = time.monotonic() - started
        self.assertEqual(cm.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertEqual(stream.resumes, 1)  # at once; the next one would come after the deadline
        self.assertLess(elapsed, 30, "ended after the 60s backoff, not at the 5s deadline")

    def _reset_at_deadline(self, collect):
        """As the TypeScript client: a stream that fails once the call's
        deadline has passed (llmrelay ends a call at the deadline it was
        sent with RST_STREAM CANCEL, which may come before the client's own
        timer) ends the call DEADLINE_EXCEEDED, its cause kept."""
        self.fake.clock = _Clock()
        with mock.patch.object(llmrelay._call, "time", self.fake.clock):
            with self.assertRaises(LLMRelayError) as cm:
                collect(**_ask("fake/reset-at-deadline", resumable=False))
        e = cm.exception
        self.assertEqual(e.code, grpc.StatusCode.DEADLINE_EXCEEDED, str(e))
        self.assertIsInstance(e.__cause__, LLMRelayError)
        self.assertEqual(e.__cause__.code, grpc.StatusCode.CANCELLED)
        self.assertEqual(len(self.fake.calls["fake/reset-at-deadline"]), 1)

    def test_reset_after_the_deadline_is_deadline_exceeded(self):
        self._reset_at_deadline(lambda **ask: Reply.collect(self.relay.generate(**ask)))

    def test_aio_reset_after_the_deadline_is_deadline_exceeded(self):
        async def run(**ask):
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                await Reply.acollect(relay.generate(**ask))

        self._reset_at_deadline(lambda **ask: asyncio.run(run(**ask)))

    def test_collect_returns_the_final_even_if_the_stream_breaks_after_it(self):
        """As Go's Collect: the final is the answer, whatever follows it."""
        reply = Reply.collect(self.relay.generate(**_ask("fake/cut-after-final", resumable=False)))
        self.assertEqual(reply.final.message.content, "the whole reply")

        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                return await Reply.acollect(relay.generate(**_ask("fake/cut-after-final", resumable=False)))

        self.assertEqual(asyncio.run(run()).final.message.content, "the whole reply")

    def test_service_config_retries_unavailable(self):
        reply = Reply.collect(self.relay.generate(**_ask("fake/unavailable-once", resumable=False)))
        self.assertEqual(reply.final.message.content, "served")
        self.assertEqual(len(self.fake.calls["fake/unavailable-once"]), 2)

    def test_pushback_minus_one_is_one_call(self):
        with self.assertRaises(LLMRelayError) as cm:
            Reply.collect(self.relay.generate(**_ask("fake/pushback", resumable=False)))
        self.assertEqual(cm.exception.reason, "PROVIDER_RETRY_DISALLOWED")
        self.assertEqual(len(self.fake.calls["fake/pushback"]), 1)

    def test_typed_error(self):
        with self.assertRaises(LLMRelayError) as cm:
            Reply.collect(self.relay.generate(**_ask("fake/invalid", resumable=False)))
        e = cm.exception
        self.assertEqual(e.code_name, "INVALID_ARGUMENT")
        self.assertEqual(e.reason, "INVALID_REQUEST")
        self.assertTrue(e.from_llmrelay)
        self.assertEqual(e.retry_delay, 1.5)
        self.assertEqual([(v.field, v.description) for v in e.field_violations], [("messages[0].role", "must be set")])
        self.assertEqual(str(e), "INVALID_ARGUMENT INVALID_REQUEST: fake INVALID_REQUEST")

    def test_aio_lost_call_reissued_when_asked(self):
        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                stream = relay.generate(**_ask("fake/lost"), reissue_lost_call=True)
                reply = await Reply.acollect(stream)
                return reply, stream

        reply, stream = asyncio.run(run())
        self.assertEqual((reply.text, reply.final.message.content, stream.reissues), ("the whole reply", "the whole reply", 1))
        self.assertEqual(len(self.fake.calls["fake/lost"]), 2)

    def test_aio_pushback_minus_one_is_one_call(self):
        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                await Reply.acollect(relay.generate(**_ask("fake/pushback", resumable=False)))

        with self.assertRaises(LLMRelayError):
            asyncio.run(run())
        self.assertEqual(len(self.fake.calls["fake/pushback"]), 1)

    def _check_turns(self, reply, seen):
        self.assertEqual(seen, ["progress mock_1_0 1.0/2.0", "result mock_1_0 Echo: hello", "turn 2 after 'Let me ask. '", "discard 'Echo: '"])
        self.assertEqual((reply.turn, reply.text, reply.final.message.content, reply.final.turns), (2, "Echo: hello", "Echo: hello", 2))
        self.assertEqual(len(reply.earlier_turns), 1)
        t1 = reply.earlier_turns[0]
        self.assertEqual((t1.turn, t1.text), (1, "Let me ask. "))
        self.assertEqual(
            [(c.id, c.name, c.arguments, c.signature) for c in t1.tool_calls], [("mock_1_0", "everything__echo", '{"message":"hello"}', "sig-1")]
        )
        self.assertEqual([r.content for r in t1.tool_results], ["Echo: hello"])
        self.assertEqual((reply.tool_results, reply.tool_progress), ([], {}))

    def _hooks(self, seen):
        return dict(
            on_turn=lambda turn, r: seen.append(f"turn {turn} after {r.earlier_turns[-1].text!r}"),
            on_tool_progress=lambda p, r: seen.append(f"progress {p.tool_call_id} {p.progress}/{p.total}"),
            on_tool_result=lambda res, r: seen.append(f"result {res.tool_call_id} {res.content}"),
            on_will_retry=lambda w, discarded, r: seen.append(f"discard {discarded!r}"),
        )

    def test_reply_keeps_turns_apart(self):
        """A will_retry discards only its own turn's text; tool events are kept."""
        seen = []
        reply = Reply.collect(self.relay.generate(**_ask("fake/tools", resumable=False)), **self._hooks(seen))
        self._check_turns(reply, seen)

    def test_aio_reply_keeps_turns_apart(self):
        seen = []

        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                return await Reply.acollect(relay.generate(**_ask("fake/tools", resumable=False)), **self._hooks(seen))

        self._check_turns(asyncio.run(run()), seen)

    def test_schemas_given_as_dicts(self):
        """A JSON Schema is a dict in Python, as provider_options is: the
        response format's and a tool's parameters are sent as given."""
        schema = {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}
        params = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}
        reply = Reply.collect(
            self.relay.generate(
                model="fake/served",
                messages=[llmrelay.user("hi")],
                response_format={"json_schema": schema, "stream_partial_objects": True},
                tools=[{"name": "get_weather", "parameters": params}, pb.Tool(name="get_time")],
                provider_options={"faults": [{}]},
            )
        )
        self.assertEqual(reply.final.message.content, "served")
        (req,) = self.fake.calls["fake/served"]
        self.assertEqual(json_format.MessageToDict(req.response_format.json_schema), schema)
        self.assertTrue(req.response_format.stream_partial_objects)
        self.assertEqual([t.name for t in req.tools], ["get_weather", "get_time"])
        self.assertEqual(json_format.MessageToDict(req.tools[0].parameters), params)
        self.assertEqual(json_format.MessageToDict(req.provider_options), {"faults": [{}]})

        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                return await Reply.acollect(relay.generate(model="fake/served", messages=[llmrelay.user("hi")], response_format={"json_schema": schema}))

        self.assertEqual(asyncio.run(run()).final.message.content, "served")
        self.assertEqual(json_format.MessageToDict(self.fake.calls["fake/served"][1].response_format.json_schema), schema)

    def test_reply_object_is_the_final_object_as_json(self):
        """reply.object is final.object as plain JSON, as partial_object is;
        None without one."""
        partials = []
        reply = Reply.collect(
            self.relay.generate(**_ask("fake/structured", resumable=False)), on_partial_object=lambda o, r: partials.append((o, r.object))
        )
        self.assertEqual(partials, [({"city": "Par"}, None)])
        self.assertEqual(reply.object, {"city": "Paris", "days": [1, 2], "sunny": True, "note": None})
        self.assertEqual(reply.object, json.loads(reply.final.message.content))
        self.assertIsNone(Reply.collect(self.relay.generate(**_ask("fake/served", resumable=False))).object)

        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                return await Reply.acollect(relay.generate(**_ask("fake/structured", resumable=False)))

        self.assertEqual(asyncio.run(run()).object["city"], "Paris")

    def test_request_id_of_a_completed_call(self):
        """A call that named no request id learns the server's from the
        trailer once it completes, so that the caller can report it."""
        stream = self.relay.generate(**_ask("fake/id-in-trailer", resumable=False))
        Reply.collect(stream)
        self.assertEqual(stream.request_id, "made-up-by-the-server")
        stream = self.relay.generate(**_ask("fake/id-in-trailer", resumable=False))
        self.assertEqual(len(list(stream)), 2)
        self.assertEqual(stream.request_id, "made-up-by-the-server")
        own = "5d1b8a4e-0c7e-4f0a-9e57-2b6f0d3c9a11"
        stream = self.relay.generate(**_ask("fake/id-in-trailer", resumable=False), request_id=own)
        Reply.collect(stream)
        self.assertEqual(stream.request_id, own)

        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                stream = relay.generate(**_ask("fake/id-in-trailer", resumable=False))
                await Reply.acollect(stream)
                return stream.request_id

        self.assertEqual(asyncio.run(run()), "made-up-by-the-server")

    def test_list_tools_retried_on_unavailable(self):
        resp = self.relay.list_tools("everything")
        self.assertEqual([(t.name, t.available) for t in resp.tools], [("everything/echo", True)])
        self.assertEqual(len(self.fake.calls["list_tools"]), 2)

        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                return await relay.list_tools("everything")

        self.assertEqual([s.name for s in asyncio.run(run()).servers], ["everything"])

    def test_listings_are_bounded_unless_the_caller_says_otherwise(self):
        """list_models, list_models_response and list_tools send a deadline
        of 30s by default, as the Go and TypeScript clients do; the caller's
        own timeout, longer or None, wins."""
        self.fake.seen(pb.GenerateRequest(model="list_tools"))  # list_tools' first call fails: not this one
        self.relay.list_models()
        self.relay.list_models_response()
        self.relay.list_tools()

        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                await relay.list_models()
                await relay.list_tools()

        asyncio.run(run())
        self.relay.list_models(timeout=120)
        self.relay.list_models(timeout=None)
        *bounded, longer, unbounded = self.fake.list_timeouts
        self.assertEqual(len(bounded), 5)
        for left in bounded:
            # gRPC rounds the grpc-timeout it sends up to its unit: a little over 30s may arrive.
            self.assertTrue(left is not None and 0 < left < 31, f"the call's deadline: {left}s left, want 30s")
        self.assertGreater(longer, 31, "timeout=120 kept")
        self.assertGreater(unbounded, 3600, "timeout=None: no deadline (grpcio's server says one far away)")

    def test_list_models_response_names_the_providers_that_accept_any_model(self):
        """list_models still returns the models alone; list_models_response
        is the whole response, whose any_model_providers list_models drops."""
        self.assertEqual([m.id for m in self.relay.list_models()], ["mock/echo"])
        resp = self.relay.list_models_response()
        self.assertEqual([m.id for m in resp.models], ["mock/echo"])
        self.assertEqual(
            [(p.provider, p.provider_kind, list(p.key_patterns)) for p in resp.any_model_providers], [("openai", "openai", ["openai/gpt-4o*"])]
        )

        async def run():
            async with llmrelay.aio.Client(self.addr, insecure=True) as relay:
                return await relay.list_models(), await relay.list_models_response()

        models, aresp = asyncio.run(run())
        self.assertEqual([m.id for m in models], ["mock/echo"])
        self.assertEqual([p.provider for p in aresp.any_model_providers], ["openai"])


if __name__ == "__main__":
    unittest.main()
