#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prometheus metrics (docs/metrics.md): keyshift.metrics.path written by the
# plugin in Debian's kcat on librdkafka's mock cluster, and
# `keyshift metrics REPORT`. Passes when:
#   - `promtool check metrics` (Debian package `prometheus`) accepts the
#     plugin's file and the command's output with no lint message (a
#     control file with a bad TYPE proves promtool's failures are seen);
#   - both print the same text for the same report;
#   - every value equals the report's JSON: the analysed fraction and the
#     skipped messages, moved message/traffic/key
#     fractions per proposed count, skew per count, hot-key shares by
#     rank, rates, acknowledged results, warnings by code, partitions;
#   - no label value is a hot key (keys can be personal data), and a
#     client.id with a quote, a backslash and a line feed is escaped;
#   - a report with source "scan" (no rates nor sizing) gives valid
#     metrics labelled source="scan";
#   - a metrics file that cannot be written is a warning
#     (METRICS_WRITE_FAILED on stderr and in the next report): kcat still
#     delivers every message and the report is written;
#   - no temporary file is left beside the metrics.
#
# Environment (set by ctest): KS_CLI, KS_PLUGIN, KS_BUILD_DIR, KS_PRELOAD.
set -euo pipefail

cli=${KS_CLI:?KS_CLI: the keyshift command}
plugin=${KS_PLUGIN:?KS_PLUGIN: libkeyshift.so}
out=${KS_BUILD_DIR:-/tmp}/tests/cli/metrics
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null ||
  fail "promtool missing: scripts/deps.sh test installs Debian's prometheus"
command -v kcat >/dev/null || fail "kcat missing: scripts/deps.sh test"
pre=()
[ -n "${KS_PRELOAD:-}" ] && pre=(env "LD_PRELOAD=$KS_PRELOAD")

# promtool must fail on a bad file, or its passes mean nothing
printf '# TYPE x_total gauge\nx_total 1\n# TYPE x_total gauge\n' >"$out/bad.prom"
if promtool check metrics <"$out/bad.prom" >/dev/null 2>&1; then
  fail "promtool accepts a bad file: the checks below would prove nothing"
fi

check_promtool() { # file
  local msg
  msg=$(promtool check metrics <"$1" 2>&1) || fail "promtool: $1: $msg"
  [ -z "$msg" ] || fail "promtool lint: $1: $msg"
  echo "ok: promtool check metrics $1"
}

# 1. The plugin in kcat: a hot key (30 % of the lines) and 613 others
awk 'BEGIN { for (i = 0; i < 3000; i++)
  printf "%d:position-%d\n", (i % 10 < 3 ? 211234567 : 200000000 + i % 613), i }' \
  >"$out/in.txt"
client_id=$'ops"keyshift\\test\nid'
"${pre[@]}" kcat -b localhost:9 -X test.mock.num.brokers=1 \
  -X plugin.library.paths="$plugin" -X client.id="$client_id" \
  -X keyshift.partitions.proposed=8,16 \
  -X keyshift.report.path="$out/report.json" \
  -X keyshift.metrics.path="$out/keyshift-%p.prom" \
  -P -t 'ais.positions' -K: -l "$out/in.txt" 2>"$out/kcat.log" ||
  fail "kcat failed (see $out/kcat.log)"
shopt -s nullglob
proms=("$out"/keyshift-*.prom)
[ ${#proms[@]} = 1 ] || fail "expected one metrics file, got ${#proms[@]}"
prom=${proms[0]}
leftover=("$out"/*.tmp.*)
[ ${#leftover[@]} = 0 ] || fail "temporary files left: ${leftover[*]}"
check_promtool "$prom"

# 2. The command prints the same for the same report
"$cli" metrics "$out/report.json" >"$out/cli.prom" || fail "keyshift metrics"
cmp -s "$prom" "$out/cli.prom" ||
  { diff "$prom" "$out/cli.prom" | head; fail "plugin and command differ"; }
check_promtool "$out/cli.prom"

# 3. Values against the report
check_values() { # report metrics source
  python3 - "$@" <<'PY'
import json, math, re, sys

report = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
want_source = sys.argv[3]
fails = []

def unescape(v):
    return re.sub(r'\\(.)', lambda m: {'n': '\n'}.get(m.group(1), m.group(1)), v)

samples = {}  # (name, frozenset(labels)) -> value
families = {}
for line in text.splitlines():
    if line.startswith('# TYPE '):
        _, _, name, typ = line.split(' ')
        families[name] = typ
        continue
    if line.startswith('#') or not line:
        continue
    m = re.match(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$', line)
    if not m:
        fails.append('unparsed line: %r' % line)
        continue
    labels = dict((k, unescape(v)) for k, v in
                  re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ''))
    samples[(m.group(1), frozenset(labels.items()))] = (labels, float(m.group(3)))

for name, typ in families.items():
    if not name.startswith('keyshift_'):
        fails.append('%s: not keyshift_' % name)
    if (typ == 'counter') != name.endswith('_total'):
        fails.append('%s: %s' % (name, typ))

prod = report.get('producer', {})
common = {'client_id': prod.get('client_id', ''), 'pid': str(prod.get('pid', ''))}

def get(name, **labels):
    labels = dict(common, **{k: str(v) for k, v in labels.items()})
    s = samples.get((name, frozenset(labels.items())))
    return None if s is None else s[1]

checked = 0
def expect(name, value, **labels):
    global checked
    got = get(name, **labels)
    if value is None:
        if got is not None:
            fails.append('%s %s: %s, the report has none' % (name, labels, got))
        return
    value = float(value)
    if got is None:
        fails.append('%s %s: missing (report: %s)' % (name, labels, value))
    elif not (got == value or math.isclose(got, value, rel_tol=1e-12)):
        fails.append('%s %s: %s, report %s' % (name, labels, got, value))
    checked += 1

info = [l for (n, _), (l, v) in samples.items() if n == 'keyshift_report_info']
if len(info) != 1 or info[0].get('source') != want_source:
    fails.append('keyshift_report_info source: %s, want %s' % (info, want_source))
hot_keys = set()
for topic, t in report['topics'].items():
    cur = t['partition_count']['current']
    expect('keyshift_topic_partitions', cur, topic=topic)
    expect('keyshift_messages_total', t['messages'], topic=topic)
    expect('keyshift_analysed_messages_ratio', t['analysis']['analysed_fraction'], topic=topic)
    expect('keyshift_unanalysed_messages_total', t['keys']['unanalysed'], topic=topic)
    expect('keyshift_bytes_total', t['bytes'], topic=topic)
    for p in t['proposals']:
        n = p['partition_count']
        expect('keyshift_moved_messages_ratio', p['moved']['messages_fraction'], topic=topic, proposed_partitions=n)
        expect('keyshift_moved_traffic_ratio', p['moved']['traffic_fraction'], topic=topic, proposed_partitions=n)
        expect('keyshift_moved_keys_ratio', p['moved']['distinct_keys_fraction'], topic=topic, proposed_partitions=n)
    for n, s in t.get('skew', {}).get('partitions', {}).items():
        expect('keyshift_partition_skew_ratio', s['max_over_median'], topic=topic, partitions=n,
               scenario='current' if int(n) == cur else 'proposed')
    hk = t.get('hot_keys', {})  # columns: key i is each column's [i]
    rows = [{c: (v[i] if isinstance(v, list) else
                 {n: col[i] for n, col in v.items()} if isinstance(v, dict) else v)
             for c, v in hk.items()} for i in range(len(hk.get('key', [])))]
    for rank, k in enumerate(rows[:10], 1):
        hot_keys.add(k.get('key') or '')
        hot_keys.add(k['key_hex'])
        expect('keyshift_hot_key_share_ratio', k['share'], topic=topic, rank=rank)
        expect('keyshift_hot_key_partition_share_ratio', k.get('share_of_partition'),
               topic=topic, rank=rank, partitions=cur, scenario='current')
        for n, v in k.get('share_of_partition_proposed', {}).items():
            expect('keyshift_hot_key_partition_share_ratio', v, topic=topic, rank=rank,
                   partitions=n, scenario='proposed')
        if 'fixable_by_partitions' in k:
            expect('keyshift_hot_key_fixable_by_partitions', 1 if k['fixable_by_partitions'] else 0,
                   topic=topic, rank=rank)
            expect('keyshift_hot_key_salt_buckets', k['salt_buckets'], topic=topic, rank=rank)
    r = t.get('rates')
    expect('keyshift_messages_per_second', r and r['msgs_per_s'], topic=topic, window='run')
    expect('keyshift_messages_per_second', r and r['interval']['msgs_per_s'], topic=topic, window='interval')
    expect('keyshift_peak_messages_per_second', r and r['peak_msgs_per_s'], topic=topic)
    a = t.get('acknowledged')
    for res in ('matched', 'mismatched', 'failed', 'not_predictable', 'unverified'):
        expect('keyshift_acknowledged_messages_total', a and a[res], topic=topic, result=res)
    codes = {}
    for w in t['warnings']:
        codes[w['code']] = codes.get(w['code'], 0) + 1
    for code, n in codes.items():
        expect('keyshift_warnings', n, topic=topic, code=code)
    got_codes = {dict(l)['code'] for (n, l) in samples
                 if n == 'keyshift_warnings' and dict(l).get('topic') == topic}
    if got_codes != set(codes):
        fails.append('warning codes of %s: %s, report %s' % (topic, got_codes, set(codes)))
for (n, _), (labels, v) in samples.items():
    for k, val in labels.items():
        if k != 'topic' and val in hot_keys and val:
            fails.append('a hot key is a label value: %s{%s=%r}' % (n, k, val))
if fails:
    print('\n'.join(fails[:20]))
    sys.exit(1)
print('ok: %d values of %s equal the report' % (checked, sys.argv[2]))
PY
}
check_values "$out/report.json" "$prom" producer || fail "values of $prom"
grep -q 'client_id="ops\\"keyshift\\\\test\\nid"' "$prom" ||
  fail "client.id not escaped as a label value in $prom"
grep -q 'topic="ais.positions"' "$prom" || fail "no topic label in $prom"
grep -q '211234567' "$prom" && fail "the hot key appears in $prom"

# 4. A scan report (issue 20's `keyshift scan`, not on this branch: source
#    "scan", no rates nor sizing; `acknowledged` stays, as the report
#    check of the CLI asks it): made from the plugin's report
python3 - "$out/report.json" "$out/scan.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r['source'] = 'scan'
for t in r['topics'].values():
    for k in ('rates', 'sizing'):
        t.pop(k, None)
json.dump(r, open(sys.argv[2], 'w'))
PY
"$cli" metrics "$out/scan.json" >"$out/scan.prom" 2>"$out/scan.log" ||
  fail "keyshift metrics of a scan report: $(cat "$out/scan.log")"
check_promtool "$out/scan.prom"
check_values "$out/scan.json" "$out/scan.prom" scan || fail "values of scan.prom"

# 5. A metrics file that cannot be written: a warning, nothing more. The
#    folder holds %c, so it is checked at write time only; a report every
#    100 ms while kcat waits on its input carries the warning into the
#    next report.
mkdir -p "$out/fail"
{ head -n 1500 "$out/in.txt"; sleep 0.6; tail -n 1500 "$out/in.txt"; } |
  "${pre[@]}" kcat -b localhost:9 -X test.mock.num.brokers=1 \
    -X plugin.library.paths="$plugin" -X client.id=nodir \
    -X keyshift.report.interval.ms=100 \
    -X keyshift.report.path="$out/fail/report.json" \
    -X keyshift.metrics.path="$out/fail/%c/m.prom" \
    -P -t ais -K: 2>"$out/fail/kcat.log" ||
  fail "kcat failed when the metrics cannot be written"
grep -q 'METRICS_WRITE_FAILED' "$out/fail/kcat.log" ||
  fail "no METRICS_WRITE_FAILED on stderr (see $out/fail/kcat.log)"
python3 - "$out/fail/report.json" <<'PY' || fail "report after a failed metrics write"
import json, sys
r = json.load(open(sys.argv[1]))
t = r['topics']['ais']
assert t['messages'] == 3000, t['messages']
# checked, or not while the host was out of CPU (counted, unread)
unchecked = r['producer']['out_of_cpu']['deliveries_unchecked']
assert t['acknowledged']['messages'] + unchecked == 3000, (t['acknowledged'], unchecked)
codes = [w['code'] for w in r['warnings']]
assert 'METRICS_WRITE_FAILED' in codes, codes
print('ok: metrics not written: a warning; 3000 messages delivered and reported')
PY

# every report written here, against the published schema (issue 29)
/usr/bin/python3 "$(cd "$(dirname "$0")/../support" && pwd)/validate_report.py" --under "$out" || fail "a report off the schema"
