#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# core/README.md stays true to the tree (issue 31): every file it names in
# backticks (a name ending in .c or .h: relative to core/, or plugin/...,
# cli/..., tests/... relative to the checkout; a bare file name, in one of
# core/'s folders) exists.
#
#   tests/core_readme.sh [SOURCE_DIR]   (exit 0: every file found)
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
readme=$src/core/README.md
missing=0 named=0
while read -r name; do
  named=$((named + 1))
  case "$name" in
    plugin/*|cli/*|tests/*|include/*|bench/*|replay/*) path=$src/$name ;;
    */*) path=$src/core/$name ;;
    *) path=$(ls "$src"/core/*/"$name" 2>/dev/null | head -1 || true)
       path=${path:-$src/core/*/$name} ;;
  esac
  if [ ! -f "$path" ]; then
    echo "core/README.md names $name, which is not at $path" >&2
    missing=$((missing + 1))
  fi
done < <(grep -o '`[A-Za-z0-9_./*-]*\.[ch]`' "$readme" | tr -d '`' | grep -v '\*' | sort -u)
if [ "$named" -lt 20 ]; then
  echo "core/README.md: only $named files found to check; the pattern is wrong" >&2
  exit 1
fi
echo "core/README.md: $named files named, $missing missing"
[ "$missing" -eq 0 ]
