#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: install, build, and replay an AIS feed through a producer
# with keyshift loaded, on librdkafka's embedded mock cluster: a topic of 6
# partitions, a proposed increase to 12. Extra arguments go to
# keyshift-replay (e.g. a log file: tests/data/ais/risky_ais.txt.gz);
# the report is written to build/keyshift-demo.json and summarised. The
# synthetic feed runs at 10,000 msgs/s for 12 s, so that rates and sizing
# rest on enough seconds. The build is build/, tests/run's build-test/:
# their options differ, and sharing one folder rebuilt it after each other.
set -euo pipefail
args=()
for a in "$@"; do # files are named from where the command was run
  if [ -e "$a" ]; then args+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")"); else args+=("$a"); fi
done
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec build/replay/keyshift-replay --plugin "$PWD/build/plugin/libkeyshift.so" \
  -p 6 --proposed 12 --rate 10000 -n 120000 \
  --report "$PWD/build/keyshift-demo.json" "${args[@]+"${args[@]}"}"
