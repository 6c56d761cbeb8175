#!/usr/bin/env bash
# Installs Debian's redis-server when it is missing. The tests of the redis
# state store and of several replicas sharing one Redis start their own
# redis-server on a free loopback port (internal/state/redistest); this only
# makes sure the binary is there. `make redis-server` and .ci/run call it.
#
# The package's own service is not needed: the tests never use port 6379,
# and a machine without an init system simply does not start it.
set -euo pipefail

die() { echo "redis-server.sh: $*" >&2; exit 1; }

if command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ]; then
	exit 0
fi
command -v apt-get >/dev/null || die "redis-server is missing, and there is no apt-get to install it"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "redis-server is missing: run as root, or install Debian's redis-server"
	sudo=(sudo)
fi
echo "redis-server.sh: installing Debian's redis-server"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine's package lists may be empty or stale: update first when
# the package is not known, or when installing from the current lists fails.
if ! apt-cache show redis-server >/dev/null 2>&1 ||
	! "${sudo[@]}" apt-get install -y -qq --no-install-recommends redis-server >/dev/null; then
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || die "redis-server is still missing after apt-get install"
redis-server --version
