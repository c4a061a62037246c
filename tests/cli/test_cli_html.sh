#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `keyshift html` in a real browser: headless Chromium renders the page of
# the AIS replay's report (the log tests/data/ais/risky_ais.txt.gz) and of
# a three-proposal report.
# Passes when:
#   - the page is self-contained: no script, no external URL, no font or
#     file fetched (checked in the HTML);
#   - it renders without a console message (checked in Chromium's log; a
#     control page with a script error proves the check sees errors);
#   - the rendered DOM has the charts: the key-rank chart, one load chart
#     per partition count with one bar per partition, one flow heat map
#     per proposal, the hot-key and warning tables, the sizing table when
#     the report has `sizing`: "no count recommended" without a consumer
#     rate or count (ais.json, hot.json), the report's count with both
#     (ais3.json), and only the constraints whose inputs are known;
#   - no text overlaps another text or a plot mark (bars, dots, the
#     curves), and no marker line is painted over a hot key's dot:
#     html_overlaps.js, injected into a copy of the page, measures every
#     chart text's box in Chromium at 1400 and 800 px wide; control pages
#     with a label drawn over a bar, and with the rank-20 marker moved after
#     the dots, prove the check sees both;
#   - at 1400 px, each row of the layout (charts | loads, hot keys |
#     warnings and tables) is laid out side by side, on one line: with
#     three proposals the second row wrapped and the page used its left
#     half only;
#   - screenshots at 1400 and 800 px are written (KS_SCREENS, default the
#     test's folder); their paths are printed.
# Chromium (Debian package `chromium`) is installed with apt-get when
# missing (root, or sudo).
#
# Environment (set by ctest): KS_CLI, KS_REPLAY, KS_PLUGIN, KS_SOURCE_DIR,
# KS_BUILD_DIR. Needs python3 (tests/run installs it) to read the report.
set -euo pipefail

cli=${KS_CLI:?KS_CLI: the keyshift command}
replay=${KS_REPLAY:?KS_REPLAY: keyshift-replay}
plugin=${KS_PLUGIN:?KS_PLUGIN: libkeyshift.so}
out=${KS_BUILD_DIR:-/tmp}/tests/cli/html
mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. Chromium
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null; then browser=$(command -v "$b"); break; fi
done
if [ -z "$browser" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing chromium (apt-get)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends chromium fonts-dejavu-core >/dev/null
  browser=$(command -v chromium) || fail "chromium could not be installed"
fi
echo "browser: $browser ($("$browser" --version 2>/dev/null || true))"

profile=$(mktemp -d "${TMPDIR:-/tmp}/keyshift-chromium-XXXXXX")
trap 'rm -rf "$profile"' EXIT
chrome() { # fresh profile each time; everything that may phone home off
  rm -rf "$profile"/*
  "$browser" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --disable-extensions \
    --user-data-dir="$profile" --hide-scrollbars "$@"
}

# 2. The control: a console error must be seen by the check below.
printf '<!DOCTYPE html><html><body><script>throw new Error("control")' \
  >"$out/control.html"
printf '</script></body></html>\n' >>"$out/control.html"
chrome --enable-logging=stderr --v=0 --dump-dom "file://$out/control.html" \
  >/dev/null 2>"$out/control.log" || true
grep -q 'CONSOLE.*Uncaught Error: control' "$out/control.log" ||
  fail "the console check does not see a script error (see $out/control.log)"

# 3. Reports: the AIS replay, and one with three proposals
ais=${KS_SOURCE_DIR:?KS_SOURCE_DIR: the source tree}/tests/data/ais/risky_ais.txt.gz
[ -f "$ais" ] || fail "$ais is missing"
feed=("$ais")
echo "report: keyshift-replay on $ais"
"$replay" --plugin "$plugin" --report "$out/ais.json" "${feed[@]}" \
  >"$out/replay.log" 2>&1 || fail "keyshift-replay failed (see $out/replay.log)"
# (this one with both consumer inputs: a sizing recommendation)
"$replay" --plugin "$plugin" --proposed 8,12,24 --report "$out/ais3.json" \
  -X keyshift.consumer.msgs.per.s=1000 -X keyshift.consumers.max=4 \
  "${feed[@]}" >>"$out/replay.log" 2>&1 || fail "keyshift-replay failed"

check_page() { # report.json page.html
  local report=$1 page=$2 dom=${2%.html}.dom log=${2%.html}.log
  local cur props bars flows sizing rec known
  "$cli" html "$report" -o "$page" || fail "keyshift html $report"

  # self-contained: no script, nothing fetched
  ! grep -qi '<script' "$page" || fail "$page has a script"
  ! grep -Eo '(src|href)="[^"]*"' "$page" | grep -v '"data:' | grep -q . ||
    fail "$page references a file or URL"
  ! grep -Eqi '@import|url\(' "$page" || fail "$page imports CSS or a font"
  [ "$(grep -Eo 'https?://[^"]*' "$page" | sort -u)" = \
    "http://www.w3.org/2000/svg" ] || fail "$page has a URL other than SVG's xmlns"

  chrome --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
    --dump-dom "file://$page" >"$dom" 2>"$log"
  if grep -E ':CONSOLE|Uncaught|Failed to load|ERR_' "$log"; then
    fail "console messages rendering $page (see $log)"
  fi

  # the charts, counted against the report
  read -r cur props bars flows sizing < <(python3 - "$report" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["topics"]["ais"]
p = t["proposals"]
print(t["partition_count"]["current"], len(p),
      t["partition_count"]["current"] + sum(x["partition_count"] for x in p),
      sum(1 for x in p if x.get("flow") is not None or "flow_nonzero" in x),
      "true" if "sizing" in t else "false")
PY
)
  # the sizing table: a recommendation only from consumer inputs, and the
  # constraints (at the recommended count, else today's) whose inputs are
  # known, each counted from the report (issue 28)
  read -r rec known < <(python3 - "$report" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["topics"]["ais"]
s = t.get("sizing") or {}
rec = s.get("recommended")
at = str(rec if rec is not None else t["partition_count"]["current"])
c = (s.get("constraints") or {}).get(at) or {}
print(rec if rec is not None else "none",
      sum(1 for k in ("throughput", "consumers", "file_handles",
                      "replication_latency_ms", "unavailability_ms")
          if isinstance(c.get(k), dict)))
PY
)
  count() { grep -o "$1" "$dom" | wc -l; }
  [ "$(count 'class="ks-chart ks-rank"')" = 1 ] || fail "no key-rank chart"
  [ "$(count 'class="ks-chart ks-bars"')" = $((1 + props)) ] ||
    fail "$((1 + props)) load charts expected"
  [ "$(count 'class="ks-bar[ "]')" = "$bars" ] ||
    fail "$bars partition bars expected, got $(count 'class="ks-bar[ "]')"
  [ "$(count 'class="ks-chart ks-flow"')" = "$flows" ] ||
    fail "$flows flow heat maps expected"
  [ "$(count 'class="ks-hot-dot"')" -ge 1 ] || fail "no hot keys on the chart"
  [ "$(count 'class="ks-table ks-hot"')" = 1 ] || fail "no hot-key table"
  [ "$(count 'class="ks-table ks-warnings"')" -ge 1 ] || fail "no warnings"
  if [ "$sizing" = true ]; then
    [ "$(count 'class="ks-table ks-sizing"')" = 1 ] || fail "no sizing table"
    if [ "$rec" = none ]; then
      grep -q '<caption>Sizing: no count recommended' "$dom" ||
        fail "no inputs, yet the sizing table does not say so"
      ! grep -q 'partitions recommended' "$dom" ||
        fail "a recommendation without a consumer rate or count"
    else
      grep -q "<caption>Sizing: $rec partitions recommended" "$dom" ||
        fail "the sizing table does not recommend $rec"
    fi
    ! grep -q 'inputs unknown' "$dom" || fail "a constraint of unknown inputs"
    [ "$(grep -Eo '<td>at [0-9]+ partitions[^<:]*: [a-z_]+</td>' "$dom" | wc -l)" = "$known" ] ||
      fail "$known constraints with known inputs expected"
  else
    grep -q 'ks-nosizing' "$dom" || fail "no note on the missing sizing"
  fi
  grep -q "Topic <code>ais</code>: $cur" "$dom" || fail "no topic heading"
  echo "ok: $page: $((1 + props)) load charts, $bars bars, $flows heat maps"
}

# the reports' pages, and one with a hot key that partitions cannot
# spread (30 % of kcat's lines under one key)
awk 'BEGIN { for (i = 0; i < 3000; i++)
  printf "%d:position-%d\n", (i % 10 < 3 ? 211234567 : 200000000 + i % 613), i }' \
  >"$out/hot.txt"
# under ASan the plugin needs the runtime first in the program
pre=()
[ -n "${KS_PRELOAD:-}" ] && pre=(env "LD_PRELOAD=$KS_PRELOAD")
"${pre[@]}" kcat -b localhost:9 -X test.mock.num.brokers=1 -X plugin.library.paths="$plugin" \
  -X keyshift.partitions.proposed=8,16 -X keyshift.report.path="$out/hot.json" \
  -P -t ais -K: -l "$out/hot.txt" 2>"$out/hot.log" || fail "kcat (see $out/hot.log)"

check_page "$out/ais.json" "$out/ais.html"
check_page "$out/ais3.json" "$out/ais3.html"
check_page "$out/hot.json" "$out/hot.html"

# 4. Overlaps, measured by Chromium at two widths
overlaps() { # page.html width -> "charts texts marks" or fails
  local page=$1 w=$2 probe=${1%.html}.probe$2.html
  python3 - "$page" "$probe" "$(dirname "$0")/html_overlaps.js" <<'PY'
import sys
page, probe, js = sys.argv[1:]
s = open(page).read()
open(probe, 'w').write(s.replace('</body>', '<script>' + open(js).read() + '</script></body>'))
PY
  chrome --window-size="$w,3000" --virtual-time-budget=5000 \
    --dump-dom "file://$probe" >"${probe%.html}.dom" 2>/dev/null
  python3 - "${probe%.html}.dom" "$page" "$w" <<'PY'
import html, json, re, sys
m = re.search(r'data-overlaps="([^"]*)"', open(sys.argv[1]).read())
if not m:
    sys.exit("%s at %s px: the probe did not run" % (sys.argv[2], sys.argv[3]))
d = json.loads(html.unescape(m.group(1)))
if d["charts"] == 0 or d["texts"] == 0 or d["marks"] == 0:
    sys.exit("%s at %s px: nothing measured: %s" % (sys.argv[2], sys.argv[3], d))
if d["overlaps"]:
    print("\n".join(d["overlaps"]))
    sys.exit("%s at %s px: %d overlaps" % (sys.argv[2], sys.argv[3], len(d["overlaps"])))
if sys.argv[3] == "1400" and (not d["rows"] or any(n != 1 for n in d["rows"])):
    sys.exit("%s at 1400 px: rows laid out on %s lines, not side by side"
             % (sys.argv[2], d["rows"]))
print("ok: %s at %s px: %d charts, %d texts, %d marks, no overlap; rows on %s lines" %
      (sys.argv[2], sys.argv[3], d["charts"], d["texts"], d["marks"], d["rows"]))
PY
}
# the control: a label over a bar must be found
python3 - "$out/ais.html" "$out/control-overlap.html" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index('<rect class="ks-bar')
x = s.index('x="', i) + 3
y = s.index('y="', i) + 3
bx = float(s[x:s.index('"', x)]); by = float(s[y:s.index('"', y)])
label = '<text x="%.1f" y="%.1f">over a bar</text>' % (bx, by + 20)
open(sys.argv[2], 'w').write(s[:i] + label + s[i:])
PY
if overlaps "$out/control-overlap.html" 1400 >/dev/null 2>&1; then
  fail "the overlap check misses a label drawn over a bar"
fi
# the control: the top-N marker painted after the dots (as it was) must be
# found
python3 - "$out/ais.html" "$out/control-marker.html" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r'<line [^>]*class="ks-marker"/>\n', s)
j = s.rindex('</circle>', 0, s.index('</svg>', m.end())) + len('</circle>\n')
open(sys.argv[2], 'w').write(s[:m.start()] + s[m.end():j] + m.group(0) + s[j:])
PY
overlaps "$out/control-marker.html" 1400 >"$out/control-marker.txt" 2>&1 || true
grep -q 'marker line is painted over the hot key dot' "$out/control-marker.txt" ||
  fail "the check misses a marker line over a hot key's dot (see $out/control-marker.txt)"
for p in ais ais3 hot; do
  for w in 1400 800; do
    overlaps "$out/$p.html" "$w" || fail "overlaps, or rows not side by side, in $out/$p.html at $w px"
  done
done

# 5. Screenshots at both widths
screens=${KS_SCREENS:-$out}
mkdir -p "$screens"
for p in ais ais3 hot; do
  for w in 1400 800; do
    png=$screens/$p-$w.png
    rm -f "$png"
    chrome --screenshot="$png" --window-size="$w,2400" \
      "file://$out/$p.html" >/dev/null 2>&1
    [ -s "$png" ] || fail "no screenshot $png"
    [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = \
      89504e470d0a1a0a ] || fail "$png is not a PNG"
    [ "$(stat -c %s "$png")" -gt 50000 ] || fail "$png is blank"
    echo "screenshot: $png"
  done
done

# every report written here, against the published schema (issue 29)
/usr/bin/python3 "$(cd "$(dirname "$0")/../support" && pwd)/validate_report.py" --under "$out" || fail "a report off the schema"
