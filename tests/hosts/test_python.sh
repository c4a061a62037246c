#!/usr/bin/env bash
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
# Wheels are downloaded from PyPI once into
# ${XDG_CACHE_HOME:-~/.cache}/keyshift/wheels/<version>/ and unpacked there.
# Env: KS_PLUGIN, KS_BUILD_DIR (ctest sets them), KS_PRELOAD (ASan runtime
# for an instrumented plugin), KS_WHEELS (versions, space-separated).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
plugin=${KS_PLUGIN:?}
model=${KS_BUILD_DIR:?}/tests/hosts/host_model
versions=${KS_WHEELS:-2.0.2 2.3.0 2.6.1 2.10.1 2.13.2 2.16.1}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/keyshift/wheels
py=/usr/bin/python3 # Debian's: its python3-confluent-kafka is one host
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keyshift-python-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
preload=() asan=()
if [ -n "${KS_PRELOAD:-}" ]; then
  # Python's own allocations are not keyshift's: leaks are checked by the
  # C hosts
  preload=(env "LD_PRELOAD=$KS_PRELOAD") asan=("ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
fi
pyver=$($py -c 'import sys; print("%d%d" % sys.version_info[:2])')

# wheel_dir VERSION: the unpacked wheel of confluent-kafka VERSION for $py
wheel_dir() {
  local d=$cache/$1-cp$pyver
  if [ ! -f "$d/.complete" ]; then
    rm -rf "$d" && mkdir -p "$d/dl"
    $py -m pip download -q --disable-pip-version-check --no-deps \
      --only-binary=:all: --python-version "$pyver" --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
      --platform manylinux_2_17_x86_64 -d "$d/dl" "confluent-kafka==$1" >&2
    $py -m zipfile -e "$d"/dl/*.whl "$d/site"
    touch "$d/.complete"
  fi
  echo "$d/site"
}

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
exit $failed
