#!/usr/bin/env bash
# `keyshift html` in a real browser: headless Chromium renders the page of
# the AIS replay's report (the shared log risky_ais.txt.gz, or a synthetic
# feed when the shared data is absent) and of a three-proposal report.
# Passes when:
#   - the page is self-contained: no script, no external URL, no font or
#     file fetched (checked in the HTML);
#   - it renders without a console message (checked in Chromium's log; a
#     control page with a script error proves the check sees errors);
#   - the rendered DOM has the charts: the key-rank chart, one load chart
#     per partition count with one bar per partition, one flow heat map
#     per proposal, the hot-key and warning tables, the sizing table when
#     the report has `sizing`;
#   - a screenshot (1400 x 2400) is written; its path is printed.
# Chromium (Debian package `chromium`) is installed with apt-get when
# missing (root, or sudo).
#
# Environment (set by ctest): KS_CLI, KS_REPLAY, KS_PLUGIN, KS_SHARED_DATA,
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
ais=${KS_SHARED_DATA:-}/ais/risky_ais.txt.gz
if [ -f "$ais" ]; then
  feed=("$ais")
  echo "report: keyshift-replay on $ais"
else
  feed=(-n 30000)
  echo "report: keyshift-replay on a synthetic feed ($ais not found)"
fi
"$replay" --plugin "$plugin" --report "$out/ais.json" "${feed[@]}" \
  >"$out/replay.log" 2>&1 || fail "keyshift-replay failed (see $out/replay.log)"
"$replay" --plugin "$plugin" --proposed 8,12,24 --report "$out/ais3.json" \
  "${feed[@]}" >>"$out/replay.log" 2>&1 || fail "keyshift-replay failed"

check_page() { # report.json page.html
  local report=$1 page=$2 dom=${2%.html}.dom log=${2%.html}.log
  local cur props bars flows sizing
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
  else
    grep -q 'ks-nosizing' "$dom" || fail "no note on the missing sizing"
  fi
  grep -q "Topic <code>ais</code>: $cur" "$dom" || fail "no topic heading"
  echo "ok: $page: $((1 + props)) load charts, $bars bars, $flows heat maps"
}

check_page "$out/ais.json" "$out/ais.html"
check_page "$out/ais3.json" "$out/ais3.html"

# 4. Screenshots
for p in ais ais3; do
  rm -f "$out/$p.png"
  chrome --screenshot="$out/$p.png" --window-size=1400,2400 \
    "file://$out/$p.html" >/dev/null 2>&1
  [ -s "$out/$p.png" ] || fail "no screenshot $out/$p.png"
  [ "$(head -c 8 "$out/$p.png" | od -An -tx1 | tr -d ' \n')" = \
    89504e470d0a1a0a ] || fail "$out/$p.png is not a PNG"
  [ "$(stat -c %s "$out/$p.png")" -gt 50000 ] || fail "$out/$p.png is blank"
  echo "screenshot: $out/$p.png"
done
