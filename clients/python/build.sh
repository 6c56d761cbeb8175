#!/usr/bin/env bash
# Builds the llmrelay wheel offline into dist/: copies the generated code
# (the repository's gen/python: llmrelay.v1 and the admin API's llmrelay.admin.v1) and the recommended service config
# (docs/service-config.json) into the package, then has pip build the wheel
# with the setuptools and wheel already installed (Debian's python3-setuptools
# and python3-wheel): no index is asked for anything.
#
#   clients/python/build.sh            # PYTHON=/usr/bin/python3 by default
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-/usr/bin/python3}
repo=../..

rm -rf llmrelay/v1 llmrelay/admin google buf build dist ./*.egg-info
cp -r "$repo/gen/python/llmrelay/v1" llmrelay/v1
cp -r "$repo/gen/python/llmrelay/admin" llmrelay/admin
mkdir -p google buf
cp -r "$repo/gen/python/google/rpc" google/rpc
cp -r "$repo/gen/python/buf/validate" buf/validate
cp "$repo/docs/service-config.json" llmrelay/service_config.json
# The generated packages are plain directories: setuptools packages them as
# packages with an __init__.py (google stays a namespace package, as
# protobuf's google.protobuf needs).
for d in llmrelay/v1 llmrelay/admin llmrelay/admin/v1 google/rpc buf/validate; do touch "$d/__init__.py"; done
"$PYTHON" -m pip wheel --quiet --no-deps --no-build-isolation --no-index -w dist . >&2
ls dist/*.whl
