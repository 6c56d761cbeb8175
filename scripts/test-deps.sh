#!/usr/bin/env bash
# Installs the programs some tests run as real processes, from Debian
# packages, when they are missing:
#
#   - haproxy (bookworm: 2.6): the HAProxy tests put it, with its default
#     buffers, in front of a real llmrelay on loopback (internal/server).
#   - nghttpx (package nghttp2-proxy; bookworm: 1.52): the heartbeat tests
#     put it, with a short backend read timeout, in front of a real
#     llmrelay on loopback (internal/server).
#   - @modelcontextprotocol/server-everything (npm, pinned by the lockfile
#     in internal/servertools/mcptest/everything): the reference MCP server
#     the server-tool tests start on loopback; `npm ci` installs it, with
#     Node 20 or later.
#
# The Debian packages need root (or sudo) and apt-get; npm needs the npm
# registry. When it cannot install something, it says so and exits 0: the
# tests that need it skip with a message naming it (the server-tool tests
# fail instead when CI is set). `make test` runs it first; tests also run
# it when their program is missing. TEST_DEPS_STRICT=1 (CI) makes a failed
# install an error.
set -uo pipefail
cd "$(dirname "$0")/.."

# The MCP server, from the committed lockfile, when it is not installed.
everything=internal/servertools/mcptest/everything
if [ ! -f "$everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]; then
	if command -v npm >/dev/null 2>&1; then
		echo "test-deps: npm ci in $everything (@modelcontextprotocol/server-everything)"
		if ! npm ci --prefix "$everything" --no-audit --no-fund --loglevel=error; then
			echo "test-deps: npm ci failed in $everything; the server-tool tests will skip" >&2
			[ "${TEST_DEPS_STRICT:-0}" = 1 ] && exit 1
		fi
	else
		echo "test-deps: no npm (Node 20 or later): cannot install @modelcontextprotocol/server-everything; the server-tool tests will skip" >&2
		[ "${TEST_DEPS_STRICT:-0}" = 1 ] && exit 1
	fi
fi

packages=(haproxy nghttp2-proxy)
commands=(haproxy nghttpx)

missing=()
for i in "${!packages[@]}"; do
	command -v "${commands[$i]}" >/dev/null 2>&1 || missing+=("${packages[$i]}")
done
((${#missing[@]})) || exit 0

fail() {
	echo "test-deps: cannot install ${missing[*]}: $*; the tests that need them will skip" >&2
	[ "${TEST_DEPS_STRICT:-0}" = 1 ] && exit 1
	exit 0
}

command -v apt-get >/dev/null 2>&1 || fail "no apt-get"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || fail "not root, and no password-less sudo"
	sudo=(sudo -n)
fi
echo "test-deps: installing ${missing[*]}"
# apt-get update only when the package lists do not know a package yet.
if ! apt-cache show "${missing[@]}" >/dev/null 2>&1; then
	"${sudo[@]}" apt-get update -qq || fail "apt-get update failed"
fi
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
	fail "apt-get install failed"
