#!/usr/bin/env bash
# Runs the Go, TypeScript and Python examples and a grpcurl call against a
# freshly built llmrelay on a free loopback port, and checks what they print.
#
# Each example streams mock/echo with a fault plan that drops the first
# attempt after two deltas, so the server restarts the reply: it must print
# attempt 1's text, one will_retry line that discards exactly that text,
# attempt 2's text, and a final line equal to the input. The three examples
# must print the same thing, delays aside. Every call carries an API key made
# up for the run; without it, each example must report the ErrorInfo reason
# CREDENTIALS_MISSING.
#
# The resume examples (a resumable call, docs/resume.md) run through a proxy
# that cuts their connection in the middle of the reply: each must say it
# resumed, print the reply exactly once (no word lost, none repeated) and a
# final line equal to it.
#
# Run it through `make test-clients`, which installs the tools first.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-/usr/bin/python3}
TEXT="the quick brown fox jumps over the lazy dog"
FIRST_ATTEMPT="the quick " # what mock/echo streams before {"drop_after": 2}

work=$(mktemp -d)
server_pid=""
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() {
	echo "FAIL $1"
	shift
	for f in "$@"; do [ -s "$f" ] && sed 's/^/     | /' "$f"; done
	failed=$((failed + 1))
}

echo "== build the server and the examples"
go build -o "$work/llmrelay" ./cmd/llmrelay
go build -o "$work/example-go" ./examples/go
go build -o "$work/example-go-resume" ./examples/go/resume
go build -o "$work/cutproxy" ./internal/tools/cutproxy
npm --prefix examples/ts run --silent build

echo "== start the server"
# One API key, made up for this run, that the examples send.
key=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
sha=$(printf '%s\n' "$key" | "$work/llmrelay" hash-key | sed -n 's/^sha256: //p')
cat >"$work/config.yaml" <<EOF
listen: 127.0.0.1:0
metrics_listen: ""
log: {level: info, format: text}
providers:
  - {name: mock, kind: mock}
auth:
  keys:
    - {name: test-clients, sha256: $sha, scopes: [generate, models.list], models: ["mock/*"]}
EOF
"$work/llmrelay" --config "$work/config.yaml" 2>"$work/server.log" &
server_pid=$!
addr=""
for _ in $(seq 100); do
	addr=$(sed -n 's/.*msg="llmrelay serving" listen=\([^ ]*\).*/\1/p' "$work/server.log")
	[ -n "$addr" ] && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$addr" ]; then
	echo "the server did not start:"
	cat "$work/server.log"
	exit 1
fi
echo "llmrelay on $addr"
export LLMRELAY_ADDR=$addr LLMRELAY_API_KEY=$key

# expected is what every example prints, with the will_retry delay as NN.
expected="$work/expected.txt"
printf '%s\n' \
	"$FIRST_ATTEMPT" \
	"will_retry: next_attempt=2 delay_ms=NN reason=RETRY_REASON_TRANSPORT discard_partial=true discarded=\"$FIRST_ATTEMPT\"" \
	"$TEXT" \
	"final: $TEXT" >"$expected"

# example NAME: runs the example in NAME (go, ts or python). Each gives its
# call a 30s deadline, so none can hang.
example() {
	case $1 in
	go) "$work/example-go" ;;
	ts) node examples/ts/dist/examples/ts/stream.js ;;
	python) PYTHONPATH=gen/python "$PYTHON" examples/python/stream.py ;;
	esac
}

# run_example NAME: runs the example and compares its output.
run_example() {
	local name=$1
	local out="$work/$name.out" err="$work/$name.err"
	echo "== $name"
	if ! example "$name" >"$out" 2>"$err"; then
		fail "$name exited with an error" "$out" "$err"
		return
	fi
	cat "$out"
	sed -E 's/delay_ms=[0-9]+/delay_ms=NN/' "$out" >"$out.normalized"
	if diff -u "$expected" "$out.normalized" >"$work/$name.diff"; then
		pass "$name: restarted once, dropped \"$FIRST_ATTEMPT\", final text equals the input"
	else
		fail "$name printed something else (diff against the expected output)" "$work/$name.diff" "$err"
	fi
}

for name in go ts python; do
	run_example "$name"
done

finals=$(cat "$work"/{go,ts,python}.out 2>/dev/null | grep '^final: ' || true)
if [ "$(grep -c . <<<"$finals")" -eq 3 ] && [ "$(sort -u <<<"$finals" | wc -l)" -eq 1 ]; then
	pass "the three examples print the same final text"
else
	fail "the examples' final texts differ or are missing" "$work/go.out" "$work/ts.out" "$work/python.out"
fi

# Without the key each example must fail, reporting the status's ErrorInfo reason.
for name in go ts python; do
	if LLMRELAY_API_KEY="" example "$name" >"$work/$name.nokey.out" 2>"$work/$name.nokey.err"; then
		fail "$name succeeded without an API key" "$work/$name.nokey.out"
	elif grep -q "CREDENTIALS_MISSING" "$work/$name.nokey.err"; then
		pass "$name without a key: $(head -n1 "$work/$name.nokey.err")"
	else
		fail "$name without a key did not report CREDENTIALS_MISSING" "$work/$name.nokey.err"
	fi
done

# The reply of the resume examples (their default text).
RESUME_TEXT="a resumable call keeps running on the server when the connection drops and the client picks it up again after the last event it received so that nothing is lost and nothing is repeated"

# resume_example NAME: runs NAME's resume example through a proxy that cuts
# the first connection after 600 bytes from the server (about 15 of the
# reply's 36 events), and checks what it prints.
resume_example() {
	local name=$1
	local out="$work/$name.resume.out" err="$work/$name.resume.err" plog="$work/$name.proxy.log"
	echo "== $name, resumable, its connection cut mid-reply"
	"$work/cutproxy" -target "$addr" -cut-after 600 >"$plog" 2>&1 &
	local proxy_pid=$! proxy_addr=""
	for _ in $(seq 100); do
		proxy_addr=$(sed -n 's/^cutproxy listening on //p' "$plog")
		[ -n "$proxy_addr" ] && break
		sleep 0.05
	done
	local rc=0
	case $name in
	go) LLMRELAY_ADDR=$proxy_addr "$work/example-go-resume" >"$out" 2>"$err" || rc=$? ;;
	ts) LLMRELAY_ADDR=$proxy_addr node examples/ts/dist/examples/ts/resume.js >"$out" 2>"$err" || rc=$? ;;
	python) LLMRELAY_ADDR=$proxy_addr PYTHONPATH=gen/python "$PYTHON" examples/python/resume.py >"$out" 2>"$err" || rc=$? ;;
	esac
	kill "$proxy_pid" 2>/dev/null || true
	wait "$proxy_pid" 2>/dev/null || true
	cat "$out"
	if [ "$rc" -ne 0 ]; then
		fail "$name's resume example exited with an error" "$out" "$err" "$plog"
		return
	fi
	if ! grep -q '^cutproxy cut a connection' "$plog"; then
		fail "$name: the proxy never cut the connection (the reply ended first)" "$plog"
		return
	fi
	# Every line but the resumed and final ones is streamed text: together
	# they must be the reply, once.
	if "$PYTHON" - "$out" "$RESUME_TEXT" >"$work/$name.resume.check" 2>&1 <<'EOF'; then
import re, sys

lines = open(sys.argv[1]).read().splitlines()
text = sys.argv[2]
resumed = [l for l in lines if l.startswith("resumed: ")]
finals = [l for l in lines if l.startswith("final: ")]
streamed = "".join(l for l in lines if not l.startswith(("resumed: ", "final: ")))
assert resumed and all(re.fullmatch(r"resumed: after_sequence=\d+", l) for l in resumed), f"no resume line: {lines}"
assert finals == ["final: " + text], f"final lines {finals}"
assert streamed == text, f"streamed {streamed!r}, want the reply once: {text!r}"
print(f"{resumed[0]}; the reply streamed once, whole")
EOF
		cat "$work/$name.resume.check"
		pass "$name: resumed after the cut, no word lost or repeated, final equals the reply"
	else
		fail "$name's resumed output is not as expected" "$work/$name.resume.check" "$out"
	fi
}

for name in go ts python; do
	resume_example "$name"
done

echo "== grpcurl"
request=$(printf '{"model": "mock/echo", "messages": [{"role": "ROLE_USER", "content": "%s"}],
  "retry": {"initialBackoff": "0.05s"}, "providerOptions": {"faults": [{"drop_after": 2}]}}' "$TEXT")
if go tool grpcurl -max-time 30 -plaintext -H "authorization: Bearer $key" -d "$request" "$addr" llmrelay.v1.LLMService/Generate >"$work/grpcurl.out" 2>"$work/grpcurl.err"; then
	# grpcurl prints one JSON object per event; check them with Python's json.
	if "$PYTHON" - "$work/grpcurl.out" "$TEXT" "$FIRST_ATTEMPT" >"$work/grpcurl.check" 2>&1 <<'EOF'; then
import json, sys

text, first = sys.argv[2], sys.argv[3]
raw, events, dec, i = open(sys.argv[1]).read(), [], json.JSONDecoder(), 0
while True:
    while i < len(raw) and raw[i].isspace():
        i += 1
    if i == len(raw):
        break
    ev, i = dec.raw_decode(raw, i)
    events.append(ev)
retries = [e for e in events if "willRetry" in e]
assert [int(e["sequence"]) for e in events] == list(range(1, len(events) + 1)), "sequence has gaps"
assert len(retries) == 1 and retries[0]["willRetry"].get("discardPartial"), f"want one will_retry with discardPartial: {retries}"
attempt1 = "".join(e["delta"].get("text", "") for e in events if "delta" in e and e["attempt"] == 1)
attempt2 = "".join(e["delta"].get("text", "") for e in events if "delta" in e and e["attempt"] == 2)
assert attempt1 == first, f"attempt 1 streamed {attempt1!r}, want {first!r}"
assert attempt2 == text, f"attempt 2 streamed {attempt2!r}, want {text!r}"
final = events[-1].get("final")
assert final and final["message"]["content"] == text and final["attempts"] == 2, f"last event {events[-1]}"
print(f"{len(events)} events; final after {final['attempts']} attempts: {final['message']['content']}")
EOF
		cat "$work/grpcurl.check"
		pass "grpcurl: one will_retry with discardPartial, final text equals the input"
	else
		fail "grpcurl's events are not as expected" "$work/grpcurl.check" "$work/grpcurl.out"
	fi
else
	fail "grpcurl failed" "$work/grpcurl.out" "$work/grpcurl.err"
fi

echo "== grpcurl, a reasoning stream (docs/reasoning.md)"
request=$(printf '{"model": "mock/think", "messages": [{"role": "ROLE_USER", "content": "%s"}]}' "$TEXT")
if go tool grpcurl -max-time 30 -plaintext -H "authorization: Bearer $key" -d "$request" "$addr" llmrelay.v1.LLMService/Generate >"$work/think.out" 2>"$work/think.err"; then
	if "$PYTHON" - "$work/think.out" "$TEXT" >"$work/think.check" 2>&1 <<'EOF'; then
import json, sys

text = sys.argv[2]
raw, events, dec, i = open(sys.argv[1]).read(), [], json.JSONDecoder(), 0
while True:
    while i < len(raw) and raw[i].isspace():
        i += 1
    if i == len(raw):
        break
    ev, i = dec.raw_decode(raw, i)
    events.append(ev)
deltas = [e["delta"] for e in events if "delta" in e]
kinds = ["reasoning" if "reasoning" in d else "text" for d in deltas]
assert kinds == sorted(kinds), f"reasoning after text: {kinds}"
thought = "".join(d["reasoning"].get("text", "") for d in deltas if "reasoning" in d)
signature = "".join(d["reasoning"].get("signature", "") for d in deltas if "reasoning" in d)
final = events[-1].get("final")
assert final and final["message"]["content"] == text, f"last event {events[-1]}"
blocks = final["message"].get("reasoning", [])
assert len(blocks) == 1 and blocks[0]["text"] == thought and blocks[0]["signature"] == signature and signature, f"final reasoning {blocks}"
assert thought not in final["message"]["content"], "the reasoning leaked into the content"
print(f"{kinds.count('reasoning')} reasoning deltas, then {kinds.count('text')} text deltas; reasoning: {thought!r}")
EOF
		cat "$work/think.check"
		pass "grpcurl mock/think: reasoning streamed before the text, whole and signed in the final"
	else
		fail "grpcurl mock/think's events are not as expected" "$work/think.check" "$work/think.out"
	fi
else
	fail "grpcurl mock/think failed" "$work/think.out" "$work/think.err"
fi

echo "test-clients: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
