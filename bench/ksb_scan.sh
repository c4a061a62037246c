#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue "keyshift scan", speed: `keyshift scan` against `kcat -C -e -o
# beginning` reading the same topic to /dev/null on the same real broker,
# in one run, alternating (kcat, scan, scan, kcat, ...) so drift hits both.
# Goal: scan >= 0.8 of kcat's records/s at 1 M records.
#
#   bench/ksb_scan.sh KEYSHIFT_CLI [--records N] [--rounds R] [--partitions P]
#
# Starts its own broker (tests/broker/kafka-broker.sh, port 39392, or
# KS_KAFKA_BOOTSTRAP), writes N keyed records (MMSI-like decimal keys,
# Zipf-ish, 64-byte values) with kcat to a P-partition topic, then times
# each reader. Prints one line per round, the medians of records/s, the
# scan's peak RSS (GNU time) beside kcat's, and a RESULT line (bench/run's
# table) with the median ratio scan / kcat and its range.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
cli=${1:?usage: ksb_scan.sh KEYSHIFT_CLI [--records N] [--rounds R] [--partitions P]}
shift
records=1000000 rounds=5 partitions=6
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --partitions) partitions=$2; shift ;;
    *) echo "ksb_scan.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
command -v kcat >/dev/null || { echo "ksb_scan.sh: kcat is needed (apt-get install kcat)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "ksb_scan.sh: GNU time is needed (apt-get install time)" >&2; exit 2; }

export KS_KAFKA_PORT=${KS_KAFKA_PORT:-39392}
export KS_KAFKA_NUM_PARTITIONS=$partitions
work=$(mktemp -d "${TMPDIR:-/tmp}/ksb-scan-XXXXXX")
started=0
cleanup() {
  [ "$started" = 0 ] || "$src/tests/broker/kafka-broker.sh" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$src/tests/broker/kafka-broker.sh" fetch >/dev/null
bootstrap=$("$src/tests/broker/kafka-broker.sh" start)
started=1
topic=ksb-scan-$$

# N records: key ~ Zipf over 100,000 MMSI-like keys (awk: inverse of a
# power law), a 64-byte value
awk -v n="$records" 'BEGIN { srand(42); v = sprintf("%064d", 0);
  for (i = 0; i < n; i++) { k = int(100000 / (1 + 99999 * rand()) ^ 0.8);
    printf "%d\t%s\n", 200000000 + k, v } }' > "$work/records.tsv"
kcat -b "$bootstrap" -P -t "$topic" -K '\t' -X partitioner=murmur2_random \
  -X queue.buffering.max.messages=1000000 -l "$work/records.tsv"
rm -f "$work/records.tsv"

now_ns() { date +%s%N; }
run_kcat() {
  /usr/bin/time -f %M -o "$work/rss" kcat -b "$bootstrap" -C -t "$topic" -e -q \
    -o beginning -f '%k %s\n' > /dev/null
}
run_scan() {
  /usr/bin/time -f %M -o "$work/rss" "$cli" scan -b "$bootstrap" -t "$topic" \
    --from earliest -o "$work/scan.json" > /dev/null 2> "$work/scan.err"
}
# one warm-up of each (page cache, broker's segments)
run_kcat; run_scan
n=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); \
print(sum(t['messages'] for t in r['topics'].values()))" "$work/scan.json")
[ "$n" = "$records" ] || { echo "ksb_scan.sh: the scan read $n records, not $records" >&2; exit 1; }

ratios=() kr=() sr=()
for r in $(seq 1 "$rounds"); do
  for who in $( [ $((r % 2)) = 1 ] && echo "kcat scan" || echo "scan kcat"); do
    t0=$(now_ns); "run_$who"; t1=$(now_ns)
    rps=$(( records * 1000000000 / (t1 - t0) ))
    rss=$(cat "$work/rss")
    if [ "$who" = kcat ]; then k=$rps; kr+=("$rps"); krss=$rss; else s=$rps; sr+=("$rps"); srss=$rss; fi
  done
  ratio=$(awk -v s="$s" -v k="$k" 'BEGIN { printf "%.2f", s / k }')
  ratios+=("$ratio")
  echo "round $r: kcat $k records/s, scan $s records/s, scan/kcat $ratio"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
lo=$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)
hi=$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)
med=$(median "${ratios[@]}")
met=$(awk -v m="$med" 'BEGIN { print (m >= 0.8) ? "yes" : "no" }')
echo "scan.records_per_s $(median "${sr[@]}") kcat.records_per_s $(median "${kr[@]}") records $records partitions $partitions"
echo "peak RSS: scan ${srss} KiB, kcat ${krss} KiB"
# bench/run's table: RESULT|id|what|op|bound|unit|median|min|max|n|met
echo "RESULT|scan.over_kcat|keyshift scan records/s / kcat -C records/s, $records records|>=|0.8|ratio|$med|$lo|$hi|${#ratios[@]}|$met"
