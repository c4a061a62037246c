#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Clear words for every bad file (issue 30). Each subcommand that reads a
# report (show, html, merge, metrics), given something that is not one,
# exits 1 within 10 s with one line on stderr that names the file and
# says what it is, never raw bytes of it:
#   - a directory: "is a directory";
#   - a FIFO with no writer, /dev/zero, /dev/null: "not a regular file"
#     (open() of a FIFO used to block forever);
#   - random bytes and a PNG header: "binary data", not "truncated";
#   - text that is not JSON (with bytes 0xff 0xfe in it): no raw byte
#     above 0x7e or below 0x20 echoed;
#   - a report cut short: still "truncated".
# Write errors: show, hash, plan, metrics and html -o - into /dev/full
# exit 1 and say so in one line ("No space left on device"), and html
# -o - says "standard output".
#
# Environment (set by ctest): KS_CLI, KS_REPLAY, KS_PLUGIN, KS_BUILD_DIR.
set -uo pipefail

cli=${KS_CLI:?KS_CLI: the keyshift command}
out=${KS_BUILD_DIR:-/tmp}/tests/cli/files
rm -rf "$out"
mkdir -p "$out/adir"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

"${KS_REPLAY:?}" --plugin "${KS_PLUGIN:?}" -n 2000 -p 6 --proposed 12 \
  -X keyshift.partitions.current=6 --report "$out/good.json" \
  >/dev/null 2>&1 || { echo "FAIL: keyshift-replay" >&2; exit 1; }
"${KS_REPLAY}" --plugin "${KS_PLUGIN}" -n 1000 -p 6 --proposed 12 \
  -X keyshift.partitions.current=6 --report "$out/good2.json" \
  >/dev/null 2>&1 || { echo "FAIL: keyshift-replay" >&2; exit 1; }

mkfifo "$out/fifo"
head -c 4096 /dev/urandom >"$out/random.bin"
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' >"$out/image.png"
printf '{"schema": "caf\xff\xfe\x80\xc3"}\n' >"$out/latin.txt"
head -c 700 "$out/good.json" >"$out/cut.json"

# $1 file, $2 what the line must say
refused() {
  local f=$1 want=$2 cmd e rc
  for cmd in "show" "html -o $out/o.html" "metrics" "merge $out/good2.json -o $out/o.json"; do
    # shellcheck disable=SC2086
    set -- $cmd
    local sub=$1
    shift
    if [ "$sub" = merge ]; then
      timeout 10 "$cli" merge "$1" "$f" "${@:2}" >/dev/null 2>"$out/err"
    else
      timeout 10 "$cli" "$sub" "$f" "$@" >/dev/null 2>"$out/err"
    fi
    rc=$?
    e=$(cat "$out/err")
    if [ $rc -eq 124 ]; then
      fail "$sub $f: still running after 10 s (blocked)"
    elif [ $rc -ne 1 ]; then
      fail "$sub $f: exit $rc: $e"
    elif [ "$(wc -l <"$out/err")" -ne 1 ]; then
      fail "$sub $f: not one line: $e"
    elif ! grep -qF -- "$f" "$out/err" || ! grep -qF -- "$want" "$out/err"; then
      fail "$sub $f: wanted '$want': $e"
    elif LC_ALL=C grep -q '[^ -~]' "$out/err"; then
      fail "$sub $f: raw bytes echoed: $(od -c "$out/err" | head -3)"
    else
      echo "ok   $sub $(basename "$f"): $e"
    fi
  done
}

refused "$out/adir" "is a directory"
refused "$out/fifo" "not a regular file (a FIFO)"
refused /dev/zero "not a regular file (a character device)"
refused /dev/null "not a regular file"
refused "$out/random.bin" "binary data"
refused "$out/image.png" "binary data"
refused "$out/latin.txt" "not valid JSON"
refused "$out/cut.json" "truncated"
for f in "$out/random.bin" "$out/image.png"; do
  "$cli" show "$f" 2>&1 | grep -q truncated && fail "$f: called truncated"
done

# $1 what, then the command: exit 1, one line naming the write error
full() {
  local what=$1 rc
  shift
  "$@" >/dev/full 2>"$out/err"
  rc=$?
  if [ $rc -ne 1 ] || [ "$(wc -l <"$out/err")" -ne 1 ] ||
    ! grep -q "No space left on device" "$out/err"; then
    fail "$what into /dev/full: exit $rc: $(cat "$out/err")"
  else
    echo "ok   $what into /dev/full: $(cat "$out/err")"
  fi
}
full show "$cli" show "$out/good.json"
full hash "$cli" hash key-1 key-2
full plan "$cli" plan --peak-msgs-s 5000 --consumer-msgs-s 1000 --consumers 8
full metrics "$cli" metrics "$out/good.json"
full "html -o -" "$cli" html "$out/good.json" -o -
grep -q "standard output" "$out/err" || fail "html -o -: does not say standard output"

[ $fails -eq 0 ] || { echo "$fails failures" >&2; exit 1; }
echo "all bad files refused with clear words"
