#!/usr/bin/env bash
# Installs each client library the way a user would and runs, in each
# language, the same scenario list (clients/scenarios.md) against a freshly
# built llmrelay on a free loopback port:
#
#   - TypeScript: `npm pack` of clients/ts, installed into an empty project;
#     the scenarios and the package's example compiled there against it;
#   - Python: the wheel clients/python/build.sh builds offline, installed
#     into a fresh virtual environment whose grpcio and protobuf are
#     Debian's (--system-site-packages; PyPI is not used);
#   - Go: the client module (client/) required by a fresh module with one
#     replace to this checkout; its `go list -deps` must hold no redis,
#     OpenTelemetry or Kubernetes package.
#
# Each language's resume scenario goes through its own proxy that cuts the
# first connection in the middle of the reply. The server-tools scenario
# runs tools of the pinned MCP server @modelcontextprotocol/server-everything
# (internal/servertools/mcptest, started by internal/tools/mcpeverything on
# a free loopback port; the server's config names it in tools.mcp_servers). The pushback scenarios print
# their request ids; the server's log must show each served once, with one
# attempt. Then each package's example runs and must print what
# docs/clients.md shows, `llmrelay generate` prints a reply (and runs a
# server tool), `llmrelay tools` lists the tools, and grpcurl checks the raw
# events.
#
# Deterministic: every background process (the server, the proxies, the
# MCP server) is
# started through `background`, waited for through what it writes once it
# listens, and killed by its pid when the script exits, failed or not.
#
# Run it through `make test-clients`, which installs the tools first.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

PYTHON=${PYTHON:-/usr/bin/python3}
TEXT="the quick brown fox jumps over the lazy dog"
FIRST_ATTEMPT="the quick " # what mock/echo streams before {"drop_after": 2}
SCENARIOS="stream retry resume field-violations deadline pushback unauthenticated server-tools structured embed models"
LANGS="go ts python"

work=$(mktemp -d)
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]+"${pids[@]}"}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]+"${pids[@]}"}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() {
	echo "FAIL $1"
	shift
	for f in "$@"; do [ -s "$f" ] && sed 's/^/     | /' "$f"; done
	failed=$((failed + 1))
}

# background LOG CMD...: starts CMD with stdout and stderr to LOG, and
# remembers its pid for cleanup.
background() {
	local log=$1
	shift
	: >"$log"
	"$@" >"$log" 2>&1 &
	pids+=($!)
}

# stop PID: kills a process background started, and forgets it (so that
# cleanup never kills a reused pid).
stop() {
	local pid=$1 keep=() p
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	for p in "${pids[@]+"${pids[@]}"}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
	pids=("${keep[@]+"${keep[@]}"}")
}

# wait_addr FILE PID: waits (up to a minute) for PID to write its address to
# FILE, then prints it; fails when PID exits first.
wait_addr() {
	local file=$1 pid=$2
	for _ in $(seq 600); do
		if [ -s "$file" ]; then
			cat "$file"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

echo "== build the server and the proxy"
go build -o "$work/llmrelay" ./cmd/llmrelay
go build -o "$work/cutproxy" ./internal/tools/cutproxy
go build -o "$work/mcpeverything" ./internal/tools/mcpeverything

echo "== the packages' versions"
version=$(cat VERSION)
ts_version=$(node -p 'require("./clients/ts/package.json").version')
py_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' clients/python/pyproject.toml)
if [ "$ts_version" = "$version" ] && [ "$py_version" = "$version" ] &&
	grep -q "VERSION = \"$version\"" clients/ts/src/version.ts &&
	grep -q "__version__ = \"$version\"" clients/python/llmrelay/__init__.py; then
	pass "the TypeScript and Python packages carry the server's version, $version (VERSION)"
else
	fail "the packages' versions differ from VERSION ($version): package.json $ts_version, pyproject.toml $py_version"
fi

echo "== TypeScript: npm pack, install into an empty project"
(cd clients/ts && npm run --silent build && npm pack --silent --pack-destination "$work" >/dev/null)
tsproj="$work/ts-project"
mkdir -p "$tsproj"
(
	cd "$tsproj"
	npm init -y >/dev/null
	npm pkg set type=module
	npm install --no-audit --no-fund --prefer-offline --loglevel=error "$work"/llmrelay-client-*.tgz
	cp "$repo/clients/ts/scenarios/scenarios.ts" "$repo/clients/ts/examples/stream.ts" .
	# The user's compiler settings; @types/node from the package's own dev
	# dependencies, so the project needs nothing but the tarball.
	cat >tsconfig.json <<EOF
{"compilerOptions": {"target": "es2022", "module": "nodenext", "moduleResolution": "nodenext", "strict": true,
  "outDir": "out", "typeRoots": ["$repo/clients/ts/node_modules/@types"], "types": ["node"]},
 "files": ["scenarios.ts", "stream.ts"]}
EOF
	node "$repo/clients/ts/node_modules/typescript/bin/tsc" -p .
) >"$work/ts-install.log" 2>&1 || { fail "the TypeScript package did not install or compile in an empty project" "$work/ts-install.log"; }

echo "== Python: build the wheel offline, install it into a fresh venv"
venv="$work/venv"
(
	PYTHON=$PYTHON clients/python/build.sh
	"$PYTHON" -m venv --system-site-packages "$venv"
	"$venv/bin/python" -m pip install --no-index --quiet clients/python/dist/llmrelay-*.whl
	# pip check reads every package the venv sees, Debian's included: only
	# a problem of llmrelay's fails.
	if "$venv/bin/python" -m pip check | grep -i '^llmrelay'; then exit 1; fi
) >"$work/py-install.log" 2>&1 || { fail "the Python wheel did not build or install into a fresh venv" "$work/py-install.log"; }
[ -x "$venv/bin/python" ] && "$venv/bin/python" - <<'EOF' || true
import grpc, google.protobuf, llmrelay
print(f"   llmrelay {llmrelay.__version__} from {llmrelay.__file__}")
print(f"   grpcio {grpc.__version__}, protobuf {google.protobuf.__version__}: Debian's, from {grpc.__file__.rsplit('/', 2)[0]}")
EOF

echo "== Go: the client module from a fresh module with one replace"
gomod="$work/go-module"
mkdir -p "$gomod"
cp clients/go/main.go "$gomod/"
(
	cd "$gomod"
	go mod init example.com/scenarios
	go mod edit -require=github.com/llmrelay/llmrelay/client@v0.0.0 -replace=github.com/llmrelay/llmrelay/client="$repo/client"
	GOFLAGS=-mod=mod go mod tidy
	go build -o "$work/scenarios-go" .
	go list -deps . >"$work/go-deps.txt"
	# The examples' module (replace-free, as a user's is) in a copy, with
	# the same one replace.
	cp -r "$repo/examples/go" "$work/go-examples"
	cd "$work/go-examples"
	go mod edit -replace=github.com/llmrelay/llmrelay/client="$repo/client"
	GOFLAGS=-mod=mod go mod tidy
	go build -o "$work/example-go" .
) >"$work/go-install.log" 2>&1 || { fail "the Go client module did not build from a fresh module" "$work/go-install.log"; }
if [ -s "$work/go-deps.txt" ]; then
	if heavy=$(grep -E 'redis|opentelemetry|k8s\.io|llmrelay/llmrelay/internal' "$work/go-deps.txt"); then
		echo "$heavy" >"$work/go-heavy.txt"
		fail "the Go client pulls server dependencies" "$work/go-heavy.txt"
	else
		pass "the Go client's go list -deps: $(grep -c . "$work/go-deps.txt") packages, no redis, OpenTelemetry or Kubernetes one"
	fi
fi

echo "== the packages' own tests (an in-process fake server: a lost call re-issued, retries and pushback)"
if (cd clients/ts && timeout 300 npm test) >"$work/ts-test.log" 2>&1; then
	pass "TypeScript: npm test ($(sed -n 's/^# pass //p' "$work/ts-test.log") passed)"
else
	fail "TypeScript: npm test failed" "$work/ts-test.log"
fi
# The package's types, with the settings in its pyproject.toml (strict).
if (cd clients/python && "$PYTHON" -m mypy llmrelay) >"$work/py-mypy.log" 2>&1; then
	pass "Python: mypy --strict on the package: $(tail -n1 "$work/py-mypy.log")"
else
	fail "Python: mypy found type errors" "$work/py-mypy.log"
fi
if [ -x "$venv/bin/python" ] && timeout 300 "$venv/bin/python" -m unittest discover -s clients/python/tests >"$work/py-test.log" 2>&1; then
	pass "Python: unittest against the installed wheel ($(sed -n 's/^Ran \([0-9]*\) tests.*/\1/p' "$work/py-test.log") passed)"
else
	fail "Python: unittest failed" "$work/py-test.log"
fi

echo "== start the MCP server (@modelcontextprotocol/server-everything, pinned)"
background "$work/mcp.log" "$work/mcpeverything" -url-file "$work/mcp.url"
mcp_pid=${pids[-1]}
# Its first run may npm ci the pinned package (scripts/test-deps.sh).
for _ in $(seq 1800); do
	[ -s "$work/mcp.url" ] && break
	kill -0 "$mcp_pid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -s "$work/mcp.url" ]; then
	fail "the MCP server did not start (the server-tools scenarios need it)" "$work/mcp.log"
	exit 1
fi
mcp_url=$(cat "$work/mcp.url")
echo "server-everything on $mcp_url"

echo "== start the server"
# One API key, made up for this run, that the clients send.
key=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
sha=$(printf '%s\n' "$key" | "$work/llmrelay" hash-key | sed -n 's/^sha256: //p')
cat >"$work/config.yaml" <<EOF
listen: 127.0.0.1:0
metrics_listen: ""
log: {level: info, format: text}
providers:
  - {name: mock, kind: mock}
  # No models list: it accepts any model name (the models scenario). Never
  # called: nothing listens on the discard port.
  - {name: ollama, kind: openai, base_url: "http://127.0.0.1:9/v1"}
tools:
  mcp_servers:
    - {name: everything, url: "$mcp_url", allow: [echo, get-sum, trigger-long-running-operation], timeout: 2m}
auth:
  keys:
    - {name: test-clients, sha256: $sha, scopes: [generate, models.list], models: ["mock/*", "ollama/llama3*"], tools: ["everything/*"]}
EOF
background "$work/server.log" "$work/llmrelay" --config "$work/config.yaml"
server_pid=${pids[-1]}
for _ in $(seq 600); do
	addr=$(sed -n 's/.*msg="llmrelay serving" listen=\([^ ]*\).*/\1/p' "$work/server.log")
	[ -n "$addr" ] && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$addr" ]; then
	fail "the server did not start" "$work/server.log"
	exit 1
fi
echo "llmrelay on $addr"
export LLMRELAY_ADDR=$addr LLMRELAY_API_KEY=$key

# scenarios LANG CMD...: runs LANG's scenario program with a proxy that cuts
# its first connection, and checks that every scenario passed.
scenarios() {
	local lang=$1
	shift
	local out="$work/$lang.scenarios" plog="$work/$lang.proxy.log" paddr="$work/$lang.proxy.addr"
	echo "== $lang scenarios"
	background "$plog" "$work/cutproxy" -target "$addr" -cut-after 600 -addr-file "$paddr"
	local proxy proxy_pid=${pids[-1]}
	if ! proxy=$(wait_addr "$paddr" "$proxy_pid"); then
		fail "$lang: the cutting proxy did not start" "$plog"
		stop "$proxy_pid"
		return
	fi
	local rc=0
	LLMRELAY_CUT_ADDR=$proxy timeout 300 "$@" >"$out" 2>"$out.err" || rc=$?
	stop "$proxy_pid"
	sed 's/^/   /' "$out"
	local name missing=()
	for name in $SCENARIOS; do
		grep -q "^ok $name: " "$out" || missing+=("$name")
	done
	if [ "$rc" -eq 0 ] && [ ${#missing[@]} -eq 0 ]; then
		pass "$lang: every scenario ($SCENARIOS)"
	else
		fail "$lang: scenarios failed or missing: ${missing[*]:-} (exit $rc)" "$out.err" "$plog"
	fi
}

[ -x "$work/scenarios-go" ] && scenarios go "$work/scenarios-go"
[ -f "$tsproj/out/scenarios.js" ] && scenarios ts node "$tsproj/out/scenarios.js"
[ -x "$venv/bin/python" ] && scenarios python "$venv/bin/python" clients/python/scenarios/scenarios.py

# Each pushback call (a provider that said x-should-retry: false) must have
# been served once, with one attempt: the client followed the server's
# grpc-retry-pushback-ms -1 instead of calling again.
echo "== pushback: one call, one provider attempt each"
ids=$(sed -n 's/.*pushback: .*request_id=\([0-9a-f-]*\).*/\1/p' "$work"/*.scenarios)
bad=0
for id in $ids; do
	calls=$(grep 'msg="finished call"' "$work/server.log" | grep -c "request_id=$id " || true)
	one=$(grep 'msg="finished call"' "$work/server.log" | grep "request_id=$id " | grep -c ' attempts=1 ' || true)
	if [ "$calls" -ne 1 ] || [ "$one" -ne 1 ]; then
		echo "request $id: $calls calls served, $one with one attempt" >>"$work/pushback.txt"
		bad=1
	fi
done
if [ -n "$ids" ] && [ "$bad" -eq 0 ]; then
	pass "pushback: $(wc -w <<<"$ids") calls, each served once with one provider attempt"
else
	fail "pushback: a client called again after the server's pushback, or printed no request id" "$work/pushback.txt"
fi

# The packages' examples print what docs/clients.md shows (the delay as NN).
expected="$work/expected.txt"
printf '%s\n' \
	"$FIRST_ATTEMPT" \
	"will_retry: next_attempt=2 delay_ms=NN reason=RETRY_REASON_TRANSPORT discard_partial=true discarded=\"$FIRST_ATTEMPT\"" \
	"$TEXT" \
	"final: $TEXT" >"$expected"
example() {
	local name=$1
	shift
	local out="$work/$name.example"
	echo "== $name example"
	if ! timeout 120 "$@" >"$out" 2>"$out.err"; then
		fail "$name's example exited with an error" "$out" "$out.err"
		return
	fi
	cat "$out"
	sed -E 's/delay_ms=[0-9]+/delay_ms=NN/' "$out" >"$out.normalized"
	if diff -u "$expected" "$out.normalized" >"$out.diff"; then
		pass "$name's example: restarted once, dropped \"$FIRST_ATTEMPT\", final text equals the input"
	else
		fail "$name's example printed something else (diff against the expected output)" "$out.diff" "$out.err"
	fi
}
[ -x "$work/example-go" ] && example go "$work/example-go"
[ -f "$tsproj/out/stream.js" ] && example ts node "$tsproj/out/stream.js"
[ -x "$venv/bin/python" ] && example python "$venv/bin/python" clients/python/examples/stream.py

echo "== llmrelay generate"
start=$(date +%s%N)
if "$work/llmrelay" generate -m mock/echo "hello" >"$work/generate.out" 2>"$work/generate.err" &&
	[ "$(cat "$work/generate.out")" = "hello" ]; then
	pass "llmrelay generate -m mock/echo \"hello\" printed the reply in $((($(date +%s%N) - start) / 1000000))ms"
else
	fail "llmrelay generate did not print the reply" "$work/generate.out" "$work/generate.err"
fi

echo "== llmrelay tools, llmrelay generate --server-tools"
if "$work/llmrelay" tools >"$work/tools.out" 2>"$work/tools.err" &&
	grep -q '^everything/echo  *yes  *Echoes back the input string$' "$work/tools.out"; then
	pass "llmrelay tools lists $(($(wc -l <"$work/tools.out") - 1)) tools, everything/echo available"
else
	fail "llmrelay tools did not list everything/echo" "$work/tools.out" "$work/tools.err"
fi
options='{"script": [{"text": "Let me ask. ", "tool_calls": [{"name": "everything__echo", "arguments": {"message": "hello"}}]}]}'
if "$work/llmrelay" generate -m mock/echo --server-tools everything/echo --provider-options "$options" "say hello" >"$work/generate-tools.out" 2>"$work/generate-tools.err" &&
	[ "$(cat "$work/generate-tools.out")" = "$(printf 'Let me ask. \nEcho: hello')" ] &&
	grep -q '^llmrelay: tool everything/echo (mock_1_0) returned: Echo: hello$' "$work/generate-tools.err" &&
	grep -q ', 2 turns$' "$work/generate-tools.err"; then
	pass "llmrelay generate --server-tools everything/echo: the tool's result on stderr, turn 2's text built from it"
else
	fail "llmrelay generate --server-tools did not run the tool" "$work/generate-tools.out" "$work/generate-tools.err"
fi

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
