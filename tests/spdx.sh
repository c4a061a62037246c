#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file carries `SPDX-License-Identifier: Apache-2.0` in its
# first comment, within its first three lines (ctest unit.spdx):
#   C and headers, the plugin's version script   /* SPDX-License-Identifier: Apache-2.0 */
#   Go, Java, JavaScript                          // SPDX-License-Identifier: Apache-2.0
#   scripts (after the #! line), Python, CMake,
#   TOML, Dockerfile                              # SPDX-License-Identifier: Apache-2.0
#   Maven's pom.xml (after <?xml ...?>)           <!-- SPDX-License-Identifier: Apache-2.0 -->
#   manual pages                                  .\" SPDX-License-Identifier: Apache-2.0
# Data, documents and fixtures are not source files (tests/data/ and
# tests/unit/data/ hold other projects' files and generated ones).
#
#   tests/spdx.sh [SOURCE_DIR]    lists the files without it; exit 1 if any
#
# The files are git's (git ls-files) in a checkout, else every file.
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  list() { git ls-files; }
else
  list() { find . -type f -not -path './.git/*' -not -path './build*' | sed 's|^\./||'; }
fi

is_source() { # path
  case "$1" in
    tests/data/*|tests/unit/data/*.tsv) return 1 ;;
    *.c|*.h|*.map|*.go|*.java|*.js|*.sh|*.py|*.cmake|*.toml|*.1) return 0 ;;
    CMakeLists.txt|*/CMakeLists.txt|*/Dockerfile|Dockerfile|pom.xml|*/pom.xml) return 0 ;;
  esac
  # extensionless scripts: tests/run, bench/run, .ci/run, ...
  [ -f "$1" ] && [ "$(head -c 2 "$1")" = '#!' ]
}

missing=0 checked=0
while IFS= read -r f; do
  [ -f "$f" ] && is_source "$f" || continue
  checked=$((checked + 1))
  if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0'; then
    echo "no SPDX line in the first comment: $f"
    missing=$((missing + 1))
  fi
done < <(list)
if [ "$missing" -gt 0 ]; then
  echo "FAIL: $missing of $checked source files lack 'SPDX-License-Identifier: Apache-2.0' (see tests/spdx.sh for the form)"
  exit 1
fi
echo "ok: $checked source files, each with SPDX-License-Identifier: Apache-2.0"
