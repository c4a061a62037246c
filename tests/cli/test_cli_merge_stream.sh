#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `keyshift merge` reads its inputs topic by topic, finding each topic in
# the file by its brackets and strings (cli/ks_cli_merge_read.c). Reports
# of Debian's kcat with the plugin on librdkafka's mock cluster, keys full
# of what that walk must step over in strings (quotes, backslashes,
# brackets, braces, commas), merged. Passes when:
#   - the same inputs rewritten by Python with other whitespace (indented,
#     newlines, spaces around ':' and ','), or given on standard input,
#     merge into the same bytes (the merging process's pid aside);
#   - the merged figures are the inputs' sums, computed here from the
#     inputs alone (messages, bytes, the current partitions' columns);
#   - the indented standard output and the file hold the same report;
#   - an input with a topic twice, or cut inside a hot key, is refused
#     with one line naming the file, exit 1, and no output file.
#
# Environment (set by ctest): KS_CLI, KS_PLUGIN, KS_BUILD_DIR, KS_PRELOAD.
set -euo pipefail

cli=${KS_CLI:?KS_CLI: the keyshift command}
plugin=${KS_PLUGIN:?KS_PLUGIN: libkeyshift.so}
out=${KS_BUILD_DIR:-/tmp}/tests/cli/merge_stream
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v kcat >/dev/null || fail "kcat missing: scripts/deps.sh test"
pre=()
[ -n "${KS_PRELOAD:-}" ] && pre=(env "LD_PRELOAD=$KS_PRELOAD")

# $1 report, $2 topic, $3 seed: keys with quotes, backslashes, brackets
produce() {
  awk -v s="$3" 'BEGIN {
      split("\" \\ } { ] [ , \\\" :x", odd, " ");
      for (j = 0; j < 40; j++)
        for (i = 0; i < 60 + s * 7; i++)
          printf "k%s%d%s%d\t%d\n", odd[1 + (i % 9)], i, odd[1 + ((i + s) % 9)], j % 3, j
    }' >"$out/$2-$3.txt"
  "${pre[@]}" kcat -b localhost:9 -X test.mock.num.brokers=1 \
    -X plugin.library.paths="$plugin" -X keyshift.partitions.current=6 \
    -X keyshift.partitions.proposed=12,24 -X keyshift.report.path="$1" \
    -P -t "$2" -K $'\t' -l "$out/$2-$3.txt" 2>"$out/$2-$3.log" ||
    fail "kcat on topic $2: $(tail -3 "$out/$2-$3.log")"
  [ -s "$1" ] || fail "no report $1"
}

produce "$out/a.json" orders 1
produce "$out/b.json" orders 2
produce "$out/c.json" payments 3
grep -q '\\"' "$out/a.json" || fail "a.json: no escaped quote to step over"

"$cli" merge "$out/a.json" "$out/b.json" "$out/c.json" -o "$out/m.json" ||
  fail "keyshift merge"

# the same reports in other whitespace
python3 - "$out" <<'EOF'
import json, sys
d = sys.argv[1]
for n, kw in (("a", {"indent": 3}), ("b", {"separators": (" ,\n", " :  ")}),
              ("c", {"indent": "\t"})):
    r = json.load(open(f"{d}/{n}.json"))
    open(f"{d}/{n}-ws.json", "w").write("\n  " + json.dumps(r, ensure_ascii=False, **kw) + " \n\n")
EOF
"$cli" merge "$out/a-ws.json" "$out/b-ws.json" "$out/c-ws.json" \
  -o "$out/m-ws.json" 2>/dev/null || fail "keyshift merge of the rewritten reports"
"$cli" merge "$out/a.json" - "$out/c.json" <"$out/b-ws.json" >"$out/m-stdin.txt" ||
  fail "keyshift merge with standard input"

python3 - "$out" <<'EOF'
import json, re, sys
d = sys.argv[1]
def fail(m):
    print("FAIL:", m, file=sys.stderr); sys.exit(1)
def bytes_no_pid(p):
    return re.sub(r'"pid":\d+', '"pid":0', open(p).read(), count=1)
m = bytes_no_pid(f"{d}/m.json")
# the file names are in merged_from: the rewritten ones differ by "-ws"
if bytes_no_pid(f"{d}/m-ws.json").replace("-ws.json", ".json") != m:
    fail("the rewritten inputs merge into other bytes")
r = json.load(open(f"{d}/m.json"))
s = json.load(open(f"{d}/m-stdin.txt"))
for x in (r, s):
    x["producer"]["pid"] = 0
    x["producer"]["merged_from"] = None
    x["warnings"] = [w["code"] for w in x["warnings"]]
if r != s:
    fail("standard output and the file differ")
ins = [json.load(open(f"{d}/{n}.json")) for n in "abc"]
if list(r["topics"]) != ["orders", "payments"]:
    fail(f"topics {list(r['topics'])}")
for name, t in r["topics"].items():
    have = [i["topics"][name] for i in ins if name in i["topics"]]
    for f in ("messages", "bytes"):
        if t[f] != sum(h[f] for h in have):
            fail(f"{name}.{f}: {t[f]}, the inputs sum {sum(h[f] for h in have)}")
    for f in ("messages", "bytes"):
        col = [sum(c) for c in zip(*(h["current"]["partitions"][f] for h in have))]
        if t["current"]["partitions"][f] != col:
            fail(f"{name}.current.partitions.{f} is not the inputs' sum")
if r["messages"] != sum(t["messages"] for t in r["topics"].values()):
    fail("messages: not the topics' sum")
keys = [k for k in r["topics"]["orders"]["hot_keys"]["key"] if k]
if not any('"' in k or "\\" in k for k in keys):
    fail(f"no hot key with a quote or backslash: {keys[:5]}")
# an input with a topic twice; one cut inside a hot key
a = open(f"{d}/a.json").read()
i = a.index('"topics":{') + len('"topics":{')
e = a.rindex('},"messages":')  # the end of topics: the last one's
entry = a[i:e]  # "orders":{...}
open(f"{d}/dup.json", "w").write(a[:i] + entry + "," + entry + a[e:])
k = a.index('\\"')
open(f"{d}/cut.json", "w").write(a[:k + 2])  # after an escaped quote
EOF
[ $? -eq 0 ] || exit 1

for bad in dup cut; do
  rm -f "$out/x.json"
  if "$cli" merge "$out/c.json" "$out/$bad.json" -o "$out/x.json" 2>"$out/$bad.err"; then
    fail "$bad.json merged"
  fi
  [ "$(wc -l <"$out/$bad.err")" -eq 1 ] || fail "$bad: $(cat "$out/$bad.err")"
  grep -q "$bad.json" "$out/$bad.err" || fail "$bad: the file not named"
  [ ! -e "$out/x.json" ] || fail "$bad: an output written"
done
grep -q 'duplicate' "$out/dup.err" || fail "dup: $(cat "$out/dup.err")"
grep -q 'truncated' "$out/cut.err" || fail "cut: $(cat "$out/cut.err")"
echo "PASS"
