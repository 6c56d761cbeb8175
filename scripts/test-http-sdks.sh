#!/usr/bin/env bash
# Runs the official OpenAI and Anthropic npm SDKs (openai, @anthropic-ai/sdk,
# pinned by scripts/http-sdks/package-lock.json), unchanged but for base URL
# and key, against llmrelay's HTTP doors: a freshly built server with the
# mock provider, an anthropic provider `claude` whose upstream is a loopback
# Anthropic-format server (scripts/http-sdks/upstream.mjs, for what only an
# anthropic provider gives: token counts, the stop sequence that ended a
# reply, the prompt's tokens in message_start; and the requests it
# received, for the scenarios that check what reached it, such as an
# image in Anthropic's format) and a gemini provider `gem` on the same
# server (a Gemini 3 tool loop's thought signature), and one API key, its
# HTTP listener on a free loopback port.
# The scenarios (scripts/http-sdks/scenarios.mjs) print one line each; the
# script fails when one fails. `make test-clients` runs it.
# LLMRELAY_BIN=path runs that server binary instead of building one, to see
# which scenarios an older build fails.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
server_pid=
upstream_pid=
cleanup() {
	for pid in $server_pid $upstream_pid; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== the SDKs (npm ci from scripts/http-sdks/package-lock.json)"
(cd scripts/http-sdks && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
node -p '"   openai " + require("./scripts/http-sdks/node_modules/openai/package.json").version + ", @anthropic-ai/sdk " + require("./scripts/http-sdks/node_modules/@anthropic-ai/sdk/package.json").version'

# waitfor PID FILE SED: the first match of SED in FILE, once PID writes it
# (empty when PID ends first or after a minute).
waitfor() {
	local found=
	for _ in $(seq 600); do
		found=$(sed -n "$3" "$2")
		[ -n "$found" ] && break
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	printf '%s' "$found"
}

echo "== start the loopback Anthropic upstream"
UPSTREAM_KEY=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export UPSTREAM_KEY
: >"$work/upstream.log"
node scripts/http-sdks/upstream.mjs >"$work/upstream.log" 2>&1 &
upstream_pid=$!
upstream_port=$(waitfor "$upstream_pid" "$work/upstream.log" 's/^listening \([0-9]*\)$/\1/p')
if [ -z "$upstream_port" ]; then
	echo "FAIL the upstream did not start:"
	sed 's/^/     | /' "$work/upstream.log"
	exit 1
fi
echo "   listening on 127.0.0.1:$upstream_port"

echo "== build and start the server"
if [ -n "${LLMRELAY_BIN:-}" ]; then
	cp "$LLMRELAY_BIN" "$work/llmrelay"
else
	go build -o "$work/llmrelay" ./cmd/llmrelay
fi
key=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
sha=$(printf '%s\n' "$key" | "$work/llmrelay" hash-key | sed -n 's/^sha256: //p')
cat >"$work/config.yaml" <<YAML
listen: 127.0.0.1:0
http_listen: 127.0.0.1:0
metrics_listen: ""
log: {level: info, format: text}
providers:
  - {name: mock, kind: mock}
  - {name: claude, kind: anthropic, base_url: "http://127.0.0.1:$upstream_port/v1", api_key_env: UPSTREAM_KEY, models: [claude-up]}
  - {name: gem, kind: gemini, base_url: "http://127.0.0.1:$upstream_port/gemini/v1beta", api_key_env: UPSTREAM_KEY, models: [gemini-up]}
retry:
  initial_backoff: 10ms
  max_backoff: 20ms
auth:
  keys:
    - {name: http-sdks, sha256: $sha, scopes: [generate, models.list], models: ["mock/*", "claude/*", "gem/*"]}
YAML
# The log exists before the loop below reads it: the background job's
# redirection may come after the first read, which set -e ended on.
: >"$work/server.log"
"$work/llmrelay" --config "$work/config.yaml" >"$work/server.log" 2>&1 &
server_pid=$!
addr=$(waitfor "$server_pid" "$work/server.log" 's/.*msg="llmrelay serving".* http_listen=\([^ ]*\).*/\1/p')
if [ -z "$addr" ]; then
	echo "FAIL the server did not start serving HTTP:"
	sed 's/^/     | /' "$work/server.log"
	exit 1
fi
echo "   serving HTTP on $addr"

echo "== the scenarios"
if ! LLMRELAY_HTTP="http://$addr" LLMRELAY_KEY="$key" UPSTREAM_HTTP="http://127.0.0.1:$upstream_port" node scripts/http-sdks/scenarios.mjs; then
	echo "FAIL some SDK scenarios failed; the server's log:"
	tail -n 40 "$work/server.log" | sed 's/^/     | /'
	echo "     the upstream's log:"
	tail -n 20 "$work/upstream.log" | sed 's/^/     | /'
	exit 1
fi
echo "the npm SDKs passed"
