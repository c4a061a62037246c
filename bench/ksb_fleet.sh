#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 32's goal: `keyshift fleet` over 100 producers x 100 topics in
# under 10 s.
#
#   bench/ksb_fleet.sh KEYSHIFT_CLI PLUGIN [--producers P] [--topics T]
#                      [--rounds R] [--sample N]
#
# Starts its own broker (tests/broker/kafka-broker.sh, port 39492, or
# KS_KAFKA_BOOTSTRAP). One real report comes first: kcat with the plugin
# (keyshift.key.sample.size=N, default the plugin's) sends 20,000 keyed
# records (Zipf-ish MMSI-like keys) to one topic. Its topic is then
# published as P producers x T topics would publish it (ks_publish.h):
# per producer one record per topic (key {v, client_id, host, pid,
# started_at_ms, topic}, value the report holding that one topic) and its
# own record (topic "", topics {}), P x (T + 1) records written with kcat
# to a report topic. Then `keyshift fleet` reads and merges them, R times
# (after one warm-up; KSB_FLEET_WRAP="perf record -o F" profiles them); it must merge P producers and T topics, each topic
# with P times the source's messages. Prints each run's wall time, the
# records' size and a RESULT line (bench/run's table).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
usage="usage: ksb_fleet.sh KEYSHIFT_CLI PLUGIN [--producers P] [--topics T] [--rounds R] [--sample N]"
cli=${1:?$usage}
plugin=${2:?$usage}
shift 2
producers=100 topics=100 rounds=3 sample=""
while [ $# -gt 0 ]; do
  case "$1" in
    --producers) producers=$2; shift ;;
    --topics) topics=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --sample) sample=$2; shift ;;
    *) echo "ksb_fleet.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
command -v kcat >/dev/null || { echo "ksb_fleet.sh: kcat is needed (apt-get install kcat)" >&2; exit 2; }

export KS_KAFKA_PORT=${KS_KAFKA_PORT:-39492}
work=$(mktemp -d "${TMPDIR:-/tmp}/ksb-fleet-XXXXXX")
started=0
cleanup() {
  [ "$started" = 0 ] || "$src/tests/broker/kafka-broker.sh" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$src/tests/broker/kafka-broker.sh" fetch >/dev/null
bootstrap=$("$src/tests/broker/kafka-broker.sh" start)
started=1
source_topic=ksb-fleet-src-$$
report_topic=ksb-fleet-reports-$$

# the source report: one real producer with the plugin
awk 'BEGIN { srand(42); v = sprintf("%064d", 0);
  for (i = 0; i < 20000; i++) { k = int(100000 / (1 + 99999 * rand()) ^ 0.8);
    printf "%d\t%s\n", 200000000 + k, v } }' > "$work/records.tsv"
kcat -b "$bootstrap" -P -t "$source_topic" -K '\t' \
  -X "plugin.library.paths=$plugin" -X "keyshift.report.path=$work/src.json" \
  ${sample:+-X "keyshift.key.sample.size=$sample"} \
  -X partitioner=murmur2_random -l "$work/records.tsv" 2>/dev/null

# P x (T + 1) records, as keyshift.report.topic publishes them
python3 - "$work/src.json" "$source_topic" "$producers" "$topics" \
  > "$work/fleet.tsv" <<'PY'
import json, sys, time
src, name, np, nt = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = json.load(open(src))
topic = r["topics"][name]
now = int(time.time() * 1000)
out = sys.stdout
for p in range(np):
    head = dict(r)
    prod = dict(r["producer"], client_id="ksb-%d" % p, pid=10000 + p)
    head["producer"] = prod
    def rec(t, body):
        key = {"v": 1, "client_id": "ksb-%d" % p, "host": "ksb-host",
               "pid": 10000 + p, "started_at_ms": now - 60000, "topic": t}
        out.write(json.dumps(key, separators=(",", ":")) + "\t" +
                  json.dumps(body, separators=(",", ":")) + "\n")
    for t in range(nt):
        v = dict(head, topics={"t%03d" % t: topic}, messages=topic["messages"])
        rec("t%03d" % t, v)
    rec("", dict(head, topics={}, messages=0))
PY
bytes=$(wc -c < "$work/fleet.tsv")
nrec=$(wc -l < "$work/fleet.tsv")
kcat -b "$bootstrap" -P -t "$report_topic" -K '\t' -X message.max.bytes=10000000 \
  -X queue.buffering.max.messages=1000000 -l "$work/fleet.tsv"
msgs=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); \
print(r['topics'][sys.argv[2]]['messages'])" "$work/src.json" "$source_topic")
echo "records: $nrec ($producers producers x ($topics topics + 1)), $((bytes / nrec)) bytes each on average, $((bytes / 1048576)) MiB in all"

now_ns() { date +%s%N; }
run_fleet() {
  ${KSB_FLEET_WRAP:-} "$cli" fleet -b "$bootstrap" -r "$report_topic" -o "$work/fleet.json" > /dev/null 2> "$work/fleet.err"
}
run_fleet # warm-up (page cache, broker's segments)
python3 - "$work/fleet.json" "$producers" "$topics" "$msgs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p, t, m = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert r["fleet"]["merged"] == p, ("merged", r["fleet"]["merged"], p)
assert len(r["topics"]) == t, ("topics", len(r["topics"]), t)
bad = [n for n, x in r["topics"].items() if x["messages"] != p * m]
assert not bad, ("messages", bad[:3])
PY
secs=()
for i in $(seq 1 "$rounds"); do
  t0=$(now_ns); run_fleet; t1=$(now_ns)
  s=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f", d / 1e9 }')
  secs+=("$s")
  echo "round $i: keyshift fleet read and merged $nrec records in $s s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
lo=$(printf '%s\n' "${secs[@]}" | sort -g | head -1)
hi=$(printf '%s\n' "${secs[@]}" | sort -g | tail -1)
med=$(median "${secs[@]}")
met=$(awk -v m="$med" 'BEGIN { print (m < 10) ? "yes" : "no" }')
# bench/run's table: RESULT|id|what|op|bound|unit|median|min|max|n|met
echo "RESULT|fleet.${producers}x${topics}|keyshift fleet over $producers producers x $topics topics ($nrec records, $((bytes / 1048576)) MiB)|<=|10|s|$med|$lo|$hi|${#secs[@]}|$met"
