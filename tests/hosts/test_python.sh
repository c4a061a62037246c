#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# keyshift in confluent-kafka-python, every way it comes:
#   - the PyPI wheels (each bundles its own librdkafka, renamed
#     confluent_kafka.libs/librdkafka-<hash>.so.1 with its SONAME rewritten,
#     loaded with RTLD_LOCAL) of the versions in KS_WHEELS, with Debian's
#     librdkafka installed beside them;
#   - Debian's python3-confluent-kafka, which uses Debian's librdkafka.
# For each: host_model compares keyshift's partition model with that
# librdkafka's own rd_kafka_msg_partitioner_*() (300,000 random keys, NULL,
# empty, 14 counts), then python_host.py runs producers with the plugin by
# full path and checks the report against the same functions (see there).
# Wheels are downloaded from PyPI once and unpacked (wheels.sh).
# Env: KS_PLUGIN, KS_BUILD_DIR (ctest sets them), KS_PRELOAD (ASan runtime
# for an instrumented plugin), KS_WHEELS (versions, space-separated).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=wheels.sh
. "$src/wheels.sh"
plugin=${KS_PLUGIN:?}
model=${KS_BUILD_DIR:?}/tests/hosts/host_model
versions=${KS_WHEELS:-2.0.2 2.3.0 2.6.1 2.10.1 2.13.2 2.16.1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keyshift-python-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
preload=() asan=()
if [ -n "${KS_PRELOAD:-}" ]; then
  # Python's own allocations are not keyshift's: leaks are checked by the
  # C hosts
  preload=(env "LD_PRELOAD=$KS_PRELOAD") asan=("ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
fi
failed=0
for v in $versions; do
  echo "== confluent-kafka $v (PyPI wheel)"
  site=$(wheel_dir "$v")
  lib=$(ls "$site"/confluent_kafka.libs/librdkafka-*.so* | head -1)
  "$model" "$lib" || failed=1
  mkdir -p "$tmp/$v"
  PYTHONPATH=$site "${preload[@]}" "${asan[@]}" $py "$src/python_host.py" "$plugin" "$tmp/$v" \
    2>"$tmp/$v/stderr" || { failed=1; tail -5 "$tmp/$v/stderr"; }
done

echo "== Debian's python3-confluent-kafka (Debian's librdkafka)"
mkdir -p "$tmp/debian"
"$model" "$(pkg-config --variable=libdir rdkafka)/librdkafka.so.1" || failed=1
"${preload[@]}" "${asan[@]}" $py -s "$src/python_host.py" "$plugin" "$tmp/debian" \
  2>"$tmp/debian/stderr" || { failed=1; tail -5 "$tmp/debian/stderr"; }
# every report written, against the published schema (issue 29)
/usr/bin/python3 "$(cd "$(dirname "$0")/../support" && pwd)/validate_report.py" --under "$tmp" || failed=1
exit $failed
