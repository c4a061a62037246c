#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian package keyshift_<version>_<arch>.deb.
#   packaging/build-deb.sh [OUTDIR]     (default: build/deb)
# A build tree of its own, OUTDIR/tree, configured with
# -DCMAKE_INSTALL_PREFIX=/usr so that GNUInstallDirs puts libkeyshift.so in
# the multiarch folder (/usr/lib/x86_64-linux-gnu), then `cpack -G DEB`.
# Jobs: KS_JOBS (default 2). Prints the package's path on the last line.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/deb}
tree=$out/tree
mkdir -p "$out"
out=$(cd "$out" && pwd)
tree=$out/tree
cmake -S "$src" -B "$tree" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF -DKEYSHIFT_BENCH=OFF >/dev/null
cmake --build "$tree" -j"${KS_JOBS:-2}" >/dev/null
(cd "$tree" && cpack -G DEB -B "$out" >/dev/null)
version=$(sed -n 's/^project(keyshift VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
deb=$out/keyshift_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || { echo "build-deb: $deb was not made" >&2; exit 1; }
echo "$deb"
