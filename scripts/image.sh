#!/usr/bin/env bash
# Builds llmrelay's container image from the Dockerfile with buildah, and
# checks it: the image's user, entrypoint, ports and health check, and a run
# of the image's own binary, serving on loopback and answering
# `llmrelay health`.
#
# Build machines here reach no container registry, so the golang image of the
# Dockerfile's build stage cannot be pulled: the binary is built on the host
# with the build stage's command and copied in (BINARY_FROM=prebuilt). The
# final stage is FROM scratch and needs no pull. buildah runs rootless-free as
# root with chroot isolation and the vfs storage driver, so it needs no
# container runtime, no overlay mounts and no user namespaces. Debian's
# buildah and ca-certificates are installed when missing (needs root).
#
#   scripts/image.sh [TAG]     (default localhost/llmrelay:dev)
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${1:-localhost/llmrelay:dev}
GO=${GO:-go}
die() { echo "image: $*" >&2; exit 1; }

missing=()
command -v buildah >/dev/null || missing+=(buildah)
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
if ((${#missing[@]})); then
	command -v apt-get >/dev/null || die "missing ${missing[*]}, and no apt-get to install them"
	[ "$(id -u)" -eq 0 ] || die "missing ${missing[*]}: run as root, or install them"
	echo "image: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ "$(id -u)" -eq 0 ] || die "buildah with chroot isolation and vfs storage needs root here"
buildah=(buildah --storage-driver vfs)

# The Dockerfile build stage's command, on the host.
mkdir -p bin/image
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || true)}
CGO_ENABLED=0 "$GO" build -trimpath \
	-ldflags="-s -w ${VERSION:+-X github.com/llmrelay/llmrelay/internal/cli.version=$VERSION}" \
	-o bin/image/llmrelay ./cmd/llmrelay
cp /etc/ssl/certs/ca-certificates.crt bin/image/ca-certificates.crt
if file bin/image/llmrelay 2>/dev/null | grep -q 'dynamically linked'; then die "bin/image/llmrelay is not static"; fi

# docker format: the OCI image config has no HEALTHCHECK.
"${buildah[@]}" bud --quiet --isolation chroot --format docker --build-arg BINARY_FROM=prebuilt -t "$TAG" . >/dev/null
"${buildah[@]}" rmi --prune >/dev/null 2>&1 || true # earlier builds' untagged layers
echo "image: built $TAG ($("${buildah[@]}" images --format '{{.Size}}' "$TAG"))"

# The image's config.
"${buildah[@]}" inspect --type image "$TAG" | python3 -c '
import json, sys
c = json.load(sys.stdin)["Docker"]["config"]
want = {
    "User": "65532:65532",
    "Entrypoint": ["/llmrelay"],
    "ExposedPorts": {"50051/tcp": {}, "8080/tcp": {}, "9464/tcp": {}},
    "StopSignal": "SIGTERM",
}
bad = [f"{k} is {c.get(k)!r}, want {v!r}" for k, v in want.items() if c.get(k) != v]
hc = c.get("Healthcheck") or {}
if hc.get("Test") != ["CMD", "/llmrelay", "health"]:
    bad.append(f"Healthcheck is {hc!r}, want llmrelay health")
if "LLMRELAY_CONFIG=/etc/llmrelay/llmrelay.yaml" not in c.get("Env", []):
    bad.append("LLMRELAY_CONFIG is not /etc/llmrelay/llmrelay.yaml")
if bad:
    sys.exit("image: " + "; ".join(bad))
'

# The image's binary, as its user. With the image's own config (no keys,
# every interface) it must refuse to start; with a loopback config copied in,
# it serves, and its own health probe (the HEALTHCHECK) answers SERVING.
ctr=$("${buildah[@]}" from --quiet "$TAG")
tmp=$(mktemp -d)
cleanup() {
	if [ -n "${server:-}" ]; then kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; fi
	"${buildah[@]}" rm "$ctr" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
run=("${buildah[@]}" run --isolation chroot --network host "$ctr" --)
"${run[@]}" /llmrelay version
if "${run[@]}" /llmrelay >"$tmp/refused" 2>&1; then die "the image's own config started without API keys"; fi
grep -q "refusing to serve without authentication" "$tmp/refused" || { cat "$tmp/refused"; die "the image's own config failed for another reason"; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'listen: 127.0.0.1:%s\nmetrics_listen: ""\nlog: {format: json}\n' "$port" >"$tmp/llmrelay.yaml"
chmod 0644 "$tmp/llmrelay.yaml"
"${buildah[@]}" copy --quiet "$ctr" "$tmp/llmrelay.yaml" /etc/llmrelay/llmrelay.yaml >/dev/null
"${run[@]}" /llmrelay >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 1 150); do
	"${run[@]}" /llmrelay health --timeout 2s >/dev/null 2>&1 && break
	kill -0 "$server" 2>/dev/null || { cat "$tmp/server.log"; die "the image's server exited"; }
	sleep 0.2
done
"${run[@]}" /llmrelay health --timeout 5s >/dev/null || { cat "$tmp/server.log"; die "the image's health probe failed"; }
grep -q '"msg":"llmrelay serving"' "$tmp/server.log" || { cat "$tmp/server.log"; die "no 'llmrelay serving' line"; }
echo "image: $TAG refuses to start without keys, serves with them, and its health probe answers SERVING"
