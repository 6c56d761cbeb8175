"""Streams a reply from llmrelay with the llmrelay package, the way every
client should show one: the text as it arrives; on a will_retry, a line
saying what is dropped when the server says discard_partial (the next
attempt starts over, and Reply has already dropped it); then the final
message, which is the answer.

    python stream.py [text...]

It calls mock/echo on $LLMRELAY_ADDR (default 127.0.0.1:50051, plaintext),
with $LLMRELAY_API_KEY if set, and a fault plan that drops the first
attempt's connection after two deltas, so the server restarts the reply.
"""

import os
import sys

import llmrelay
from llmrelay import pb

addr = os.environ.get("LLMRELAY_ADDR") or "127.0.0.1:50051"
text = " ".join(sys.argv[1:]) or "the quick brown fox jumps over the lazy dog"
line_open = False  # the current line holds streamed text


def end_line():
    global line_open
    if line_open:
        print()
    line_open = False


def on_delta(d, reply):
    global line_open
    print(d.text, end="", flush=True)
    line_open = line_open or d.text != ""


def on_will_retry(w, discarded, reply):
    # A terminal cannot unprint: end the line, say what is dropped, and
    # stream the next attempt on a fresh line.
    end_line()
    delay_ms = w.delay.seconds * 1000 + w.delay.nanos // 1_000_000
    print(
        f"will_retry: next_attempt={w.next_attempt} delay_ms={delay_ms} reason={pb.RetryReason.Name(w.reason)}"
        f" discard_partial={str(w.discard_partial).lower()} discarded=\"{discarded}\""
    )


with llmrelay.Client(addr, insecure=True, api_key=os.environ.get("LLMRELAY_API_KEY")) as relay:
    try:
        reply = llmrelay.Reply.collect(
            relay.generate(
                model="mock/echo",
                messages=[llmrelay.user(text)],
                retry=pb.RetryPolicy(initial_backoff={"nanos": 50_000_000}),
                # The first attempt drops after two deltas; the second one runs normally.
                provider_options={"faults": [{"drop_after": 2}]},
                timeout=30,
            ),
            on_delta=on_delta,
            on_will_retry=on_will_retry,
        )
    except llmrelay.LLMRelayError as e:
        end_line()
        print(f"error: {e.code_name} {e.reason}: {e.message}", file=sys.stderr)
        if e.retry_delay is not None:
            print(f"the server suggests calling again in {e.retry_delay}s", file=sys.stderr)
        sys.exit(1)
    end_line()
    print(f"final: {reply.final.message.content}")
