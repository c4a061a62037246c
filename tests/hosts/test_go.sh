#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# keyshift in confluent-kafka-go (v2.0.2, from the Go module proxy): the Go
# host of tests/hosts/go built twice, run on the mock cluster.
#   - -tags dynamic: links the system's librdkafka (Debian's 2.0.2); the
#     plugin binds to it: a report with that version, every delivery
#     matched, one librdkafka mapped;
#   - default: links the module's bundled static librdkafka, whose symbols
#     the program does not export; keyshift must refuse to load with an
#     error that says to build with -tags dynamic, and the program must
#     get that error from NewProducer: no crash, no report.
# Env: KS_PLUGIN, KS_BUILD_DIR (ctest sets them), KS_PRELOAD (ASan runtime
# for an instrumented plugin).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
out=${KS_BUILD_DIR:?}/tests/hosts/go
plugin=${KS_PLUGIN:?}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keyshift-go-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
command -v go >/dev/null || { echo "test_go: FAIL: go not found (scripts/deps.sh test installs it)"; exit 1; }
mkdir -p "$out"
export GOFLAGS=-buildvcs=false CGO_ENABLED=1
# the instrumented plugin needs the ASan runtime in the process
preload=() asan=()
if [ -n "${KS_PRELOAD:-}" ]; then
  preload=(env "LD_PRELOAD=$KS_PRELOAD") asan=("ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
fi
(cd "$src/go" && go build -tags dynamic -o "$out/go-host-dynamic" . && go build -o "$out/go-host-static" .)

echo "== go, -tags dynamic (system librdkafka)"
"${preload[@]}" "${asan[@]}" "$out/go-host-dynamic" "$plugin" "$tmp/dynamic.json" | tee "$tmp/dynamic.out"
python3 - "$tmp/dynamic.json" "$tmp/dynamic.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
out = dict(l.split(" ", 1) for l in open(sys.argv[2]).read().splitlines())
ver = out["librdkafka"]
n_maps = int(out["mapped"].split()[0])
t = r["topics"]["mmsi"]
ack = t["acknowledged"]
problems = []
if r["producer"]["librdkafka_version"] != ver: problems.append("version %s != %s" % (r["producer"]["librdkafka_version"], ver))
if n_maps != 1: problems.append("%d librdkafka files mapped" % n_maps)
if t["messages"] != 3000 or ack["matched"] != 3000 or ack["mismatched"] != 0: problems.append("acknowledged %s" % ack)
if problems: sys.exit("test_go: FAIL: " + "; ".join(problems))
print("ok: go -tags dynamic, librdkafka %s, %d messages, all matched, 1 librdkafka mapped; %d -> 12 moves %d" % (ver, t["messages"], t["partition_count"]["current"], t["proposals"][1]["moved"]["messages"]))
PY
/usr/bin/python3 "$(cd "$(dirname "$0")/../support" && pwd)/validate_report.py" "$tmp/dynamic.json" # the published schema

echo "== go, bundled static librdkafka"
if nm -D "$out/go-host-static" 2>/dev/null | grep -q ' T rd_kafka_version$'; then
  echo "test_go: FAIL: the static Go host exports rd_kafka_* (not the case this tests)"; exit 1
fi
set +e
"${preload[@]}" "${asan[@]}" "$out/go-host-static" "$plugin" "$tmp/static.json" >"$tmp/static.out" 2>&1
rc=$?
set -e
cat "$tmp/static.out"
[ "$rc" = 3 ] || { echo "test_go: FAIL: exit status $rc, expected 3 (NewProducer's error)"; exit 1; }
grep -q 'ERROR: .*keyshift: .*-tags dynamic' "$tmp/static.out" \
  || { echo "test_go: FAIL: the error does not say to build with -tags dynamic"; exit 1; }
[ ! -e "$tmp/static.json" ] || { echo "test_go: FAIL: a report was written"; exit 1; }
echo "ok: go with the bundled static librdkafka: NewProducer refused with keyshift's error, exit $rc, no crash"
