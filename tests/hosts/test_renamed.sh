#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A .NET-style host (tests/hosts/host_renamed.c): a copy of Debian's
# librdkafka under the file name Confluent.Kafka's librdkafka.redist ships
# (runtimes/linux-x64/native/librdkafka.so, SONAME librdkafka.so.1), loaded
# with RTLD_LOCAL by a program that links no librdkafka; then Debian's own
# file as a second librdkafka in the same process, which keyshift refuses.
# Env: KS_PLUGIN, KS_BUILD_DIR (ctest sets them).
set -euo pipefail
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keyshift-renamed-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
native=$tmp/runtimes/linux-x64/native
mkdir -p "$native"
system=$(pkg-config --variable=libdir rdkafka)/librdkafka.so.1
cp "$system" "$native/librdkafka.so"
"${KS_BUILD_DIR:?}/tests/hosts/host_renamed" "$native/librdkafka.so" "${KS_PLUGIN:?}" \
  "$tmp/report.json" "$system"
/usr/bin/python3 "$(cd "$(dirname "$0")/../support" && pwd)/validate_report.py" "$tmp/report.json" # the published schema
