#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The packed sketches of a report's `merge` object, read by a reader
# written from docs/report-schema.md alone (packed_sketches.py: Python's
# base64, struct, zlib), on reports of Debian's kcat with the plugin on
# librdkafka's mock cluster and on `keyshift merge`'s output. Passes when:
#   - every packed string reads as the document says (version, kind,
#     length, CRC-32, entries), in both HyperLogLog forms: 40,000 keys
#     give the dense one, 300 keys the sparse one;
#   - what the sketches say agrees with the report: a key sample that
#     holds every key has distinct_estimate entries and the HyperLogLog
#     registers its hashes set; hot_keys[] are the hot-key summary's first
#     counters;
#   - the same holds for the merge of the two reports.
#
# Environment (set by ctest): KS_CLI, KS_PLUGIN, KS_SOURCE_DIR, KS_BUILD_DIR,
# KS_PRELOAD.
set -euo pipefail

cli=${KS_CLI:?KS_CLI: the keyshift command}
plugin=${KS_PLUGIN:?KS_PLUGIN: libkeyshift.so}
src=${KS_SOURCE_DIR:?KS_SOURCE_DIR: the source tree}
out=${KS_BUILD_DIR:-/tmp}/tests/cli/packed
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v kcat >/dev/null || fail "kcat missing: scripts/deps.sh test"
pre=()
[ -n "${KS_PRELOAD:-}" ] && pre=(env "LD_PRELOAD=$KS_PRELOAD")
reader=$src/tests/cli/packed_sketches.py

# $1 report, $2 topic, $3 keys, $4 messages a key
produce() {
  awk -v k="$3" -v n="$4" 'BEGIN { for (j = 0; j < n; j++) for (i = 0; i < k; i++) printf "key-%d:v%d\n", i, j }' \
    >"$out/$2.txt"
  "${pre[@]}" kcat -b localhost:9 -X test.mock.num.brokers=1 \
    -X plugin.library.paths="$plugin" -X keyshift.partitions.current=6 \
    -X keyshift.partitions.proposed=12 -X keyshift.report.path="$1" \
    -P -t "$2" -K: -l "$out/$2.txt" 2>"$out/$2.log" ||
    fail "kcat on topic $2: $(tail -3 "$out/$2.log")"
  [ -s "$1" ] || fail "no report $1"
}

produce "$out/big.json" big 40000 1
produce "$out/small.json" small 300 3

python3 "$reader" "$out/big.json" | tee "$out/big.txt"
grep -q 'big: HyperLogLog dense' "$out/big.txt" || fail "40,000 keys: not the dense form"
grep -q 'full' "$out/big.txt" || fail "40,000 keys: the key sample is not full"
python3 "$reader" "$out/small.json" | tee "$out/small.txt"
grep -q 'small: HyperLogLog sparse' "$out/small.txt" || fail "300 keys: not the sparse form"
grep -q 'key sample 300/' "$out/small.txt" || fail "300 keys: not all in the key sample"

"$cli" merge "$out/big.json" "$out/small.json" -o "$out/merged.json" ||
  fail "keyshift merge"
python3 "$reader" "$out/merged.json" | tee "$out/merged.txt"
[ "$(wc -l <"$out/merged.txt")" -eq 2 ] || fail "merged: not two topics"

# the reader must fail on a corrupted string, or its passes mean nothing
python3 - "$out/small.json" "$out/bad.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["topics"]["small"]["merge"]["key_sample"]
s = m["packed"]
m["packed"] = s[:20] + ("A" if s[20] != "A" else "B") + s[21:]
json.dump(r, open(sys.argv[2], "w"))
EOF
if python3 "$reader" "$out/bad.json" 2>"$out/bad.txt"; then
  fail "the reader accepts a corrupted key sample"
fi
grep -q 'CRC-32\|bytes' "$out/bad.txt" || fail "bad: $(cat "$out/bad.txt")"
echo "PASS"
