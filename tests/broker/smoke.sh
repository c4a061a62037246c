#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end check of the broker harness and the Java oracle:
# fetch, start, create a 6-partition topic, produce a mixed-type corpus with
# KafkaProducer, compare with the oracle's `keys` mode and with what kcat reads
# back, grow the topic to 12 partitions, produce and compare again, stop.
# With KS_KAFKA_BOOTSTRAP set it runs against that cluster (unique topic name).
# Prints timings and a closing "N passed, N failed" line; exit 0 only if all passed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BROKER=$HERE/kafka-broker.sh
ORACLE=$HERE/java-oracle.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/keyshift-smoke.XXXXXX")
PASS=0 FAIL=0
STARTED=0

cleanup() {
    local rc=$?
    ((STARTED)) && "$BROKER" stop >/dev/null 2>&1 || true
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

check() {   # check NAME COMMAND...
    local name=$1; shift
    if "$@"; then PASS=$((PASS + 1)); echo "ok   $name"
    else FAIL=$((FAIL + 1)); echo "FAIL $name"; fi
}
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

t=$(now); "$BROKER" fetch; echo "fetch: $(took "$t")"
t=$(now); "$ORACLE" build >/dev/null; echo "oracle build: $(took "$t")"
t=$(now); BOOT=$("$BROKER" start); STARTED=1; echo "start: $(took "$t") -> $BOOT"

TOPIC=keyshift-smoke-$$-$RANDOM
python3 - >"$WORK/corpus.txt" <<'EOF'
import random, uuid
r = random.Random(7)
for i in range(200): print(f"string:key-{i}")
for i in range(-50, 50): print(f"int32:{i * 7919}")
for i in range(50): print(f"int64:{r.randrange(-2**63, 2**63)}")
for i in range(50): print("uuid:" + str(uuid.UUID(int=r.getrandbits(128))))
for i in range(20): print("hex:" + bytes(r.getrandbits(8) for _ in range(i)).hex())
print("string:")
print("string:ünïcødé ✓ key")
EOF

compare() {   # compare KEYS_TSV PRODUCED_TSV COUNT: oracle keys mode vs producer RecordMetadata
    python3 - "$@" <<'EOF'
import sys
keys = [l.rstrip("\n").split("\t") for l in open(sys.argv[1], encoding="utf-8") if not l.startswith("#")]
prod = [l.rstrip("\n").split("\t") for l in open(sys.argv[2], encoding="utf-8") if not l.startswith("#")]
n = sys.argv[3]
bad = [(k, p) for k, p in zip(keys, prod) if k[0] != p[0] or k[3] != p[2] or k[6] != p[3] or p[5] != n]
if len(keys) != len(prod) or not keys or bad:
    print(f"  {len(keys)} keys, {len(prod)} produced, {len(bad)} mismatches; first: {bad[:1]}")
    sys.exit(1)
EOF
}

readback() {   # readback PRODUCED_TSV CONSUMED_TSV: every produced (partition, offset) holds its line
    python3 - "$WORK/corpus.txt" "$@" <<'EOF'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
prod = [l.rstrip("\n").split("\t") for l in open(sys.argv[2], encoding="utf-8") if not l.startswith("#")]
got = {}
for l in open(sys.argv[3], encoding="utf-8"):
    p, o, v = l.rstrip("\n").split("\t", 2)
    got[(p, o)] = v
miss = [r for r in prod if got.get((r[3], r[4])) != lines[int(r[0]) - 1]]
if miss or not prod:
    print(f"  {len(miss)} of {len(prod)} records not read back as produced; first: {miss[:1]}")
    sys.exit(1)
EOF
}

produce_to() { "$ORACLE" produce --bootstrap "$BOOT" --topic "$TOPIC" <"$WORK/corpus.txt" >"$1"; }
not_running() { ! "$BROKER" status >/dev/null 2>&1; }

check "create-topic 6 partitions" "$ORACLE" create-topic --bootstrap "$BOOT" --topic "$TOPIC" --partitions 6
"$ORACLE" keys --counts 1,6,12 <"$WORK/corpus.txt" | cut -f1-6,8 >"$WORK/keys6.tsv"
t=$(now)
check "produce (6 partitions)" produce_to "$WORK/prod6.tsv"
echo "produce $(grep -vc '^#' "$WORK/prod6.tsv" || true) records: $(took "$t")"
check "keys mode == KafkaProducer partitions (6)" compare "$WORK/keys6.tsv" "$WORK/prod6.tsv" 6

check "add-partitions to 12" "$ORACLE" add-partitions --bootstrap "$BOOT" --topic "$TOPIC" --partitions 12
"$ORACLE" keys --counts 1,6,12 <"$WORK/corpus.txt" | cut -f1-6,9 >"$WORK/keys12.tsv"
check "produce (12 partitions)" produce_to "$WORK/prod12.tsv"
check "keys mode == KafkaProducer partitions (12)" compare "$WORK/keys12.tsv" "$WORK/prod12.tsv" 12

if command -v kcat >/dev/null 2>&1; then
    kcat -b "$BOOT" -C -t "$TOPIC" -e -q -f '%p\t%o\t%s\n' >"$WORK/consumed.tsv"
    check "kcat reads back every record where RecordMetadata said (6)" readback "$WORK/prod6.tsv" "$WORK/consumed.tsv"
    check "kcat reads back every record where RecordMetadata said (12)" readback "$WORK/prod12.tsv" "$WORK/consumed.tsv"
fi

if [[ -z ${KS_KAFKA_BOOTSTRAP:-} ]]; then
    t=$(now)
    check "stop" "$BROKER" stop
    STARTED=0
    echo "stop: $(took "$t")"
    check "no broker process left" not_running
fi

echo "$PASS passed, $FAIL failed"
((FAIL == 0))
