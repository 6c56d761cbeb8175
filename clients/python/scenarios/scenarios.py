"""The client scenarios (clients/scenarios.md) for the llmrelay Python
package, run by make test-clients with the wheel installed in a fresh
virtual environment: one line per scenario, "ok NAME: ..." or "FAIL NAME: ...".
The list runs with llmrelay.Client, then (prefixed "aio-", all but the
resume, whose proxy cuts only one connection) with llmrelay.aio.Client."""

import asyncio
import json
import os
import sys
import time
import uuid

import grpc

import llmrelay
from llmrelay import LLMRelayError, Reply, pb, user

ADDR = os.environ["LLMRELAY_ADDR"]
CUT_ADDR = os.environ["LLMRELAY_CUT_ADDR"]
KEY = os.environ["LLMRELAY_API_KEY"]

TEXT = "the quick brown fox jumps over the lazy dog"
RESUME_TEXT = (
    "a resumable call keeps running on the server when the connection drops and the client picks it up again "
    "after the last event it received so that nothing is lost and nothing is repeated"
)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


# Each scenario: (name, request fields, generate options, check(reply or error, stream) -> detail).
def stream_req():
    return dict(model="mock/echo", messages=[user("hello brave new world")]), dict(timeout=30)


def stream_check(reply, stream, events):
    check([e.sequence for e in events] == list(range(1, len(events) + 1)), "the events are not numbered 1, 2, ...")
    content = reply.final.message.content
    check(reply.text == content == "hello brave new world", f"text {reply.text!r}, final {content!r}")
    return f"{len(events)} events, text equals the final: {content!r}"


def retry_req():
    return (
        dict(
            model="mock/echo",
            messages=[user(TEXT)],
            retry=pb.RetryPolicy(initial_backoff={"nanos": 50_000_000}),
            provider_options={"faults": [{"drop_after": 2}]},
        ),
        dict(timeout=30),
    )


def retry_check(reply, stream, events, discards):
    check(len(reply.retries) == 1 and reply.retries[0].discard_partial, f"will_retry events {len(reply.retries)}")
    check(discards == ["the quick "], f"discarded {discards!r}")
    content = reply.final.message.content
    check(reply.text == content == TEXT, f"text {reply.text!r}, final {content!r}")
    return f"one will_retry, discarded {discards[0]!r}, text equals the final after {reply.final.attempts} attempts"


SERVER_TOOLS = ["everything/echo", "everything/trigger-long-running-operation"]


def tools_req():
    """Turn 1 says a few words and calls both tools; turn 2 answers from
    their results, its first attempt (2) dropping after one delta."""
    script = [
        {
            "text": "Let me ask the tools. ",
            "tool_calls": [
                {"name": "everything__echo", "arguments": {"message": "hello"}},
                {"name": "everything__trigger-long-running-operation", "arguments": {"duration": 1, "steps": 2}},
            ],
        }
    ]
    return (
        dict(
            model="mock/echo",
            messages=[user("use the tools")],
            server_tools=SERVER_TOOLS,
            retry=pb.RetryPolicy(initial_backoff={"nanos": 50_000_000}),
            provider_options={"script": script, "faults": [{}, {"drop_after": 1}, {}]},
        ),
        dict(timeout=60),
    )


class ToolWatch:
    """The hooks of the server-tools scenario: what will_retry discarded, and
    how many tool_progress events came before the long operation's result."""

    def __init__(self):
        self.discards, self.progress, self.before = [], {}, -1

    def hooks(self):
        return dict(on_will_retry=self.will_retry, on_tool_progress=self.tool_progress, on_tool_result=self.tool_result)

    def will_retry(self, w, discarded, reply):
        if w.discard_partial:
            self.discards.append(discarded)

    def tool_progress(self, p, reply):
        self.progress[p.tool_call_id] = self.progress.get(p.tool_call_id, 0) + 1

    def tool_result(self, r, reply):
        if r.name == "everything/trigger-long-running-operation":
            self.before = self.progress.get(r.tool_call_id, 0)


def tools_check(listed, reply, watch):
    check(any(t.name == "everything/echo" and t.available for t in listed.tools), f"list_tools: {[(t.name, t.available) for t in listed.tools]}")
    check(len(reply.earlier_turns) == 1, f"{len(reply.earlier_turns)} earlier turns, want 1")
    turn1 = reply.earlier_turns[0]
    results = sorted(f"{r.name}: {r.content.split('.')[0]}" for r in turn1.tool_results)
    check(
        results == ["everything/echo: Echo: hello", "everything/trigger-long-running-operation: Long running operation completed"],
        f"turn 1's tool results {results}",
    )
    check(watch.before >= 2, f"{watch.before} tool_progress events before the long operation's result, want 2 or more")
    check(watch.discards == ["Echo: "], f"discarded {watch.discards!r}, want turn 2's first delta only")
    check(turn1.text == "Let me ask the tools. ", f"turn 1's text {turn1.text!r}")
    content = reply.final.message.content
    check(reply.turn == 2 and reply.text == content and content.startswith("Echo: hello\n"), f"text {reply.text!r}, final {content!r}")
    final = reply.final
    check(final.turns == 2 and len(final.transcript) == 4, f"final: {final.turns} turns, {len(final.transcript)} transcript messages; want 2 and 4")
    return (
        f"listed everything/echo; 2 tool results, {watch.before} progress events before the long one's; "
        f"turn 2's retry discarded {watch.discards[0]!r} only; the text equals the final; "
        f"{final.turns} turns, {len(final.transcript)} messages in the transcript"
    )


# The structured scenario's schema: the mock replies with its deterministic
# instance (docs/structured-output.md), TRIP, unless a fault's output
# replaces it; TRIP_INVALID, the first attempt's reply, has days that is not
# an integer and no sights, so the server re-asks. A Value's numbers are
# floats.
TRIP_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "enum": ["Lisbon", "Porto"]},
        "days": {"type": "integer", "minimum": 3, "maximum": 7},
        "sights": {"type": "array", "items": {"type": "string", "enum": ["Belem", "Alfama", "Sintra"]}, "minItems": 2, "uniqueItems": True},
    },
    "required": ["city", "days", "sights"],
    "additionalProperties": False,
}
TRIP = {"city": "Lisbon", "days": 3.0, "sights": ["Belem", "Alfama"]}
TRIP_INVALID = '{"city": "Lisbon", "days": "many"}'


def structured_req():
    return (
        dict(
            model="mock/echo",
            messages=[user("plan a short trip")],
            response_format={"name": "trip", "json_schema": TRIP_SCHEMA, "stream_partial_objects": True},
            provider_options={"faults": [{"output": TRIP_INVALID}]},
        ),
        dict(timeout=30),
    )


class ObjectWatch:
    """The hooks of the structured scenario: the current attempt's partial
    objects, those a will_retry with discard_partial voided, and what the
    Reply's own partial_object was right after."""

    def __init__(self):
        self.partials, self.discarded, self.retries, self.kept = [], [], [], "not seen"

    def hooks(self):
        return dict(on_partial_object=self.partial_object, on_will_retry=self.will_retry)

    def partial_object(self, obj, reply):
        self.partials.append(obj)

    def will_retry(self, w, discarded, reply):
        self.retries.append(w)
        if w.discard_partial:
            self.discarded += self.partials
            self.partials = []
            self.kept = reply.partial_object


def within(part, whole):
    """Whether part is what whole looked like while it was being written: its
    members within whole's, its items a prefix of whole's, its strings a
    prefix, anything else equal."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(k in whole and within(v, whole[k]) for k, v in part.items())
    if isinstance(part, list):
        return isinstance(whole, list) and len(part) <= len(whole) and all(within(v, w) for v, w in zip(part, whole))
    if isinstance(part, str):
        return isinstance(whole, str) and whole.startswith(part)
    return type(part) is type(whole) and part == whole


def structured_check(reply, watch):
    obj = reply.object
    retries = watch.retries
    check(
        len(retries) == 1 and retries[0].discard_partial and retries[0].reason == pb.RETRY_REASON_INVALID_OUTPUT,
        f"{len(retries)} will_retry events, want one, INVALID_OUTPUT with discard_partial",
    )
    check(watch.kept is None, f"reply.partial_object after the discard: {watch.kept!r}, want None")
    check(
        watch.discarded and not within(watch.discarded[-1], obj),
        f"the first attempt's partial objects {watch.discarded}: want the invalid one, which the final contradicts",
    )
    check(json.dumps(obj, sort_keys=True) == json.dumps(TRIP, sort_keys=True), f"final object {obj!r}, want {TRIP!r}")
    final = reply.final
    check(final.attempts == 2 and final.validation_retries == 1, f"final: {final.attempts} attempts, {final.validation_retries} validation retries; want 2 and 1")
    partials = watch.partials
    check(len(partials) >= 2 and partials[0] != partials[-1], f"partial objects {partials}: want at least two different ones")
    for p, nxt in zip(partials, partials[1:] + [obj]):
        check(within(p, nxt), f"partial object {p!r} is not within the next, {nxt!r}")
    return (
        f"one re-ask discarded {len(watch.discarded)} partial object(s) ending in {json.dumps(watch.discarded[-1], sort_keys=True)}; "
        f"then {len(partials)} grew to the final object, which equals {json.dumps(obj, sort_keys=True)}"
    )


EMBED_INPUTS = ["the cat sat", "a dog"]


def embed_req():
    """Two texts, the first attempt failing with 503 (retried by the server)."""
    return dict(model="mock/echo", inputs=EMBED_INPUTS, dimensions=4, provider_options={"faults": [{"status": 503}]}, timeout=30)


def embed_check(resp, alone, err):
    check(len(resp.embeddings) == len(EMBED_INPUTS), f"{len(resp.embeddings)} embeddings, want {len(EMBED_INPUTS)}")
    for i, e in enumerate(resp.embeddings):
        norm = sum(x * x for x in e.values)
        check(len(e.values) == 4 and abs(norm - 1) < 1e-5, f"embedding {i}: {len(e.values)} values of norm {norm}, want 4 of norm 1")
    check(resp.provider == "mock" and resp.model == "echo" and resp.attempts == 2, f"provider {resp.provider}, model {resp.model}, attempts {resp.attempts}")
    check(resp.usage.input_tokens == 5, f"input tokens {resp.usage.input_tokens}")
    # The vector of a text does not depend on the others: the order held.
    check(list(alone.embeddings[0].values) == list(resp.embeddings[1].values), "embeddings[1] is not the embedding of inputs[1]")
    check(err is not None, "an empty input was embedded")
    fields = [v.field for v in err.field_violations]
    check(err.code == grpc.StatusCode.INVALID_ARGUMENT and err.reason == "INVALID_REQUEST" and "inputs[1]" in fields, f"empty input: {err}; violations {fields}")
    return (
        f"{len(resp.embeddings)} vectors of 4 in order, {resp.usage.input_tokens} input tokens, {resp.attempts} attempts; "
        f"an empty input: {err.code_name} {err.reason} {', '.join(fields)}"
    )


def models_check(models, resp):
    """mock's models, and ollama, configured without a models list, among
    the providers that accept any model name, with the key's pattern that
    reaches it: list_models has the models alone, list_models_response all."""
    ids = [m.id for m in models]
    check("mock/echo" in ids and not any(i.startswith("ollama/") for i in ids), f"list_models {ids}: want mock/echo, and none of ollama's")
    check([m.id for m in resp.models] == ids, f"list_models_response's models {[m.id for m in resp.models]}, list_models' {ids}")
    any_model = [f"{p.provider} ({p.provider_kind}) {list(p.key_patterns)}" for p in resp.any_model_providers]
    check(any_model == ["ollama (openai) ['ollama/llama3*']"], f"any_model_providers {any_model}, want ollama (openai) with the key's pattern ollama/llama3*")
    return f"{len(ids)} models, mock/echo among them; any model name: {any_model[0]}"


def error_check(name, e, start):
    if name == "field-violations":
        fields = [v.field for v in e.field_violations]
        check(e.code == grpc.StatusCode.INVALID_ARGUMENT and e.reason == "INVALID_REQUEST", str(e))
        check("messages[0].role" in fields, f"violations {e.field_violations}")
        return f"{e.code_name} {e.reason}, violations {', '.join(fields)}"
    if name == "deadline":
        check(e.code == grpc.StatusCode.DEADLINE_EXCEEDED, str(e))
        check(time.monotonic() - start < 30, "the deadline did not end the call")
        return f"{e.code_name} after a 500ms deadline"
    if name == "pushback":
        check(e.code == grpc.StatusCode.UNAVAILABLE and e.reason == "PROVIDER_RETRY_DISALLOWED", str(e))
        return f"{e.code_name} {e.reason}, not called again request_id={e.request_id}"
    if name == "unauthenticated":
        check(e.code == grpc.StatusCode.UNAUTHENTICATED and e.reason == "CREDENTIALS_MISSING", str(e))
        return f"{e.code_name} {e.reason}"
    raise Failed(f"no check for {name}")


def error_reqs():
    """The calls that must fail: name -> (fields, options, keyed)."""
    return {
        "field-violations": (dict(model="mock/echo", messages=[pb.Message(content="no role")]), dict(timeout=30), True),
        "deadline": (
            dict(model="mock/echo", messages=[user("slow")], provider_options={"faults": [{"first_delay_ms": 60000}]}),
            dict(timeout=0.5),
            True,
        ),
        "pushback": (
            dict(
                model="mock/echo",
                messages=[user("hi")],
                request_id=str(uuid.uuid4()),
                provider_options={"faults": [{"status": 503, "should_retry": False}]},
            ),
            dict(timeout=30),
            True,
        ),
        "unauthenticated": (dict(model="mock/echo", messages=[user("hi")]), dict(timeout=30), False),
    }


def run_sync():
    relay = llmrelay.Client(ADDR, insecure=True, api_key=KEY)
    anonymous = llmrelay.Client(ADDR, insecure=True)

    def stream():
        fields, opts = stream_req()
        s = relay.generate(**fields, **opts)
        events, reply = [], Reply()
        for ev in s:
            events.append(ev)
            reply.apply(ev)
        return stream_check(reply, s, events)

    def retry():
        fields, opts = retry_req()
        s = relay.generate(**fields, **opts)
        discards = []
        reply = Reply.collect(s, on_will_retry=lambda w, d, r: w.discard_partial and discards.append(d))
        return retry_check(reply, s, [], discards)

    def resume():
        with llmrelay.Client(CUT_ADDR, insecure=True, api_key=KEY) as cut:
            s = cut.generate(
                model="mock/echo", messages=[user(RESUME_TEXT)], resumable=True, provider_options={"chunk_delay_ms": 25}, timeout=60
            )
            # The stream refuses a gap in the sequence numbers (DATA_LOSS) and
            # skips what it yielded already: the text must come out whole.
            streamed = []
            reply = Reply.collect(s, on_delta=lambda d, r: streamed.append(d.text))
            check(s.resumes >= 1, "the connection was never cut, or the stream did not resume")
            check("".join(streamed) == RESUME_TEXT, f"streamed {''.join(streamed)!r}, want the reply once")
            check(reply.final.message.content == RESUME_TEXT, f"final {reply.final.message.content!r}")
            return f"resumed {s.resumes} time(s); the reply streamed once, whole, and equals the final"

    def server_tools():
        listed = relay.list_tools()
        fields, opts = tools_req()
        watch = ToolWatch()
        reply = Reply.collect(relay.generate(**fields, **opts), **watch.hooks())
        return tools_check(listed, reply, watch)

    def structured():
        fields, opts = structured_req()
        watch = ObjectWatch()
        reply = Reply.collect(relay.generate(**fields, **opts), **watch.hooks())
        return structured_check(reply, watch)

    def embed():
        resp = relay.embed(**embed_req())
        alone = relay.embed(model="mock/echo", inputs=EMBED_INPUTS[1:], dimensions=4)
        try:
            relay.embed(pb.EmbedRequest(model="mock/echo", inputs=["the cat sat", ""]))
            err = None
        except LLMRelayError as e:
            err = e
        return embed_check(resp, alone, err)

    def models():
        return models_check(relay.list_models(), relay.list_models_response())

    def failing(name):
        fields, opts, keyed = error_reqs()[name]

        def run():
            start = time.monotonic()
            try:
                Reply.collect((relay if keyed else anonymous).generate(**fields, **opts))
            except LLMRelayError as e:
                return error_check(name, e, start)
            raise Failed("the call succeeded")

        return run

    scenarios = [("stream", stream), ("retry", retry), ("resume", resume)]
    scenarios += [(n, failing(n)) for n in ("field-violations", "deadline", "pushback", "unauthenticated")]
    scenarios += [("server-tools", server_tools), ("structured", structured), ("embed", embed), ("models", models)]
    failed = report(scenarios, "")
    relay.close()
    anonymous.close()
    return failed


async def run_async():
    relay = llmrelay.aio.Client(ADDR, insecure=True, api_key=KEY)
    anonymous = llmrelay.aio.Client(ADDR, insecure=True)

    async def stream():
        fields, opts = stream_req()
        s = relay.generate(**fields, **opts)
        events, reply = [], Reply()
        async for ev in s:
            events.append(ev)
            reply.apply(ev)
        return stream_check(reply, s, events)

    async def retry():
        fields, opts = retry_req()
        s = relay.generate(**fields, **opts)
        discards = []
        reply = await Reply.acollect(s, on_will_retry=lambda w, d, r: w.discard_partial and discards.append(d))
        return retry_check(reply, s, [], discards)

    async def server_tools():
        listed = await relay.list_tools()
        fields, opts = tools_req()
        watch = ToolWatch()
        reply = await Reply.acollect(relay.generate(**fields, **opts), **watch.hooks())
        return tools_check(listed, reply, watch)

    async def structured():
        fields, opts = structured_req()
        watch = ObjectWatch()
        reply = await Reply.acollect(relay.generate(**fields, **opts), **watch.hooks())
        return structured_check(reply, watch)

    async def embed():
        resp = await relay.embed(**embed_req())
        alone = await relay.embed(model="mock/echo", inputs=EMBED_INPUTS[1:], dimensions=4)
        try:
            await relay.embed(pb.EmbedRequest(model="mock/echo", inputs=["the cat sat", ""]))
            err = None
        except LLMRelayError as e:
            err = e
        return embed_check(resp, alone, err)

    async def models():
        return models_check(await relay.list_models(), await relay.list_models_response())

    def failing(name):
        fields, opts, keyed = error_reqs()[name]

        async def run():
            start = time.monotonic()
            try:
                await Reply.acollect((relay if keyed else anonymous).generate(**fields, **opts))
            except LLMRelayError as e:
                return error_check(name, e, start)
            raise Failed("the call succeeded")

        return run

    scenarios = [("stream", stream), ("retry", retry)]
    scenarios += [(n, failing(n)) for n in ("field-violations", "deadline", "pushback", "unauthenticated")]
    scenarios += [("server-tools", server_tools), ("structured", structured), ("embed", embed), ("models", models)]
    failed = 0
    for name, fn in scenarios:
        try:
            print(f"ok aio-{name}: {await fn()}", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAIL aio-{name}: {e}", flush=True)
    await relay.close()
    await anonymous.close()
    return failed


def report(scenarios, prefix):
    failed = 0
    for name, fn in scenarios:
        try:
            print(f"ok {prefix}{name}: {fn()}", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAIL {prefix}{name}: {e}", flush=True)
    return failed


if __name__ == "__main__":
    failed = run_sync() + asyncio.run(run_async())
    sys.exit(1 if failed else 0)
