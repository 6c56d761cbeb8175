#!/usr/bin/env bash
# Installs what generating and testing the TypeScript and Python clients
# needs, and checks the versions the committed gen/ts and gen/python were
# made with. The Go server needs none of it.
#
#   - npm ci in clients/ts (the lockfile pins protoc-gen-es, @bufbuild/protobuf,
#     @connectrpc/connect-node and TypeScript), when node_modules is missing
#     or older than the lockfile;
#   - Debian's protobuf-compiler (protoc), libprotobuf-dev (the well-known
#     .proto files protoc reads), protobuf-compiler-grpc (grpc_python_plugin),
#     python3-grpcio and python3-protobuf, and what builds the Python wheel
#     offline, installs it into a venv and checks its types (python3-venv,
#     python3-pip, python3-setuptools, python3-wheel, python3-mypy), when
#     missing (needs root: apt-get).
#
# PROTOC_VERSION and GRPC_PYTHON_VERSION (from the Makefile) are the upstream
# versions the generated code must come from.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${PROTOC_VERSION:?set by the Makefile}"
: "${GRPC_PYTHON_VERSION:?set by the Makefile}"

die() { echo "client-tools: $*" >&2; exit 1; }

# Debian packages.
packages=(protobuf-compiler libprotobuf-dev protobuf-compiler-grpc python3-grpcio python3-protobuf
	python3-venv python3-pip python3-setuptools python3-wheel python3-mypy)
missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
if ((${#missing[@]})); then
	command -v apt-get >/dev/null || die "missing ${missing[*]}, and no apt-get to install them"
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || die "missing ${missing[*]}: run as root, or install them"
		sudo=(sudo)
	fi
	echo "client-tools: installing ${missing[*]}"
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Versions: the generated code records the generator, so another version
# would fail `make checkgenerate` anyway; say why up front.
got=$(protoc --version)
[ "$got" = "libprotoc $PROTOC_VERSION" ] || die "protoc is '$got'; gen/ is made with libprotoc $PROTOC_VERSION (Debian bookworm's protobuf-compiler)"
got=$(dpkg-query -W -f='${Version}' protobuf-compiler-grpc)
case "$got" in
"$GRPC_PYTHON_VERSION"-*) ;;
*) die "protobuf-compiler-grpc is $got; gen/python is made with grpc_python_plugin $GRPC_PYTHON_VERSION (Debian bookworm)" ;;
esac

# npm packages, from the committed lockfile.
command -v npm >/dev/null || die "npm is missing: install Node.js 20 or later"
ts=clients/ts
if [ ! -f "$ts/node_modules/.package-lock.json" ] || [ "$ts/package-lock.json" -nt "$ts/node_modules/.package-lock.json" ]; then
	echo "client-tools: npm ci in $ts"
	npm ci --prefix "$ts" --no-audit --no-fund --loglevel=error
fi
