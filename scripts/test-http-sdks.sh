#!/usr/bin/env bash
# Runs the official OpenAI and Anthropic npm SDKs (openai, @anthropic-ai/sdk,
# pinned by scripts/http-sdks/package-lock.json), unchanged but for base URL
# and key, against llmrelay's HTTP doors: a freshly built server with the
# mock provider and one API key, its HTTP listener on a free loopback port.
# The scenarios (scripts/http-sdks/scenarios.mjs) print one line each; the
# script fails when one fails. `make test-clients` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== the SDKs (npm ci from scripts/http-sdks/package-lock.json)"
(cd scripts/http-sdks && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
node -p '"   openai " + require("./scripts/http-sdks/node_modules/openai/package.json").version + ", @anthropic-ai/sdk " + require("./scripts/http-sdks/node_modules/@anthropic-ai/sdk/package.json").version'

echo "== build and start the server"
go build -o "$work/llmrelay" ./cmd/llmrelay
key=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
sha=$(printf '%s\n' "$key" | "$work/llmrelay" hash-key | sed -n 's/^sha256: //p')
cat >"$work/config.yaml" <<YAML
listen: 127.0.0.1:0
http_listen: 127.0.0.1:0
metrics_listen: ""
log: {level: info, format: text}
providers:
  - {name: mock, kind: mock}
retry:
  initial_backoff: 10ms
  max_backoff: 20ms
auth:
  keys:
    - {name: http-sdks, sha256: $sha, scopes: [generate, models.list], models: ["mock/*"]}
YAML
# The log exists before the loop below reads it: the background job's
# redirection may come after the first read, which set -e ended on.
: >"$work/server.log"
"$work/llmrelay" --config "$work/config.yaml" >"$work/server.log" 2>&1 &
server_pid=$!
addr=
for _ in $(seq 600); do
	addr=$(sed -n 's/.*msg="llmrelay serving".* http_listen=\([^ ]*\).*/\1/p' "$work/server.log")
	[ -n "$addr" ] && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$addr" ]; then
	echo "FAIL the server did not start serving HTTP:"
	sed 's/^/     | /' "$work/server.log"
	exit 1
fi
echo "   serving HTTP on $addr"

echo "== the scenarios"
if ! LLMRELAY_HTTP="http://$addr" LLMRELAY_KEY="$key" node scripts/http-sdks/scenarios.mjs; then
	echo "FAIL some SDK scenarios failed; the server's log:"
	tail -n 40 "$work/server.log" | sed 's/^/     | /'
	exit 1
fi
echo "the npm SDKs passed"
