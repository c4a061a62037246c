#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `pip install keyshift`, tested as a user would meet it (ctest
# hosts.wheel). Passes when:
#   1. scripts/build-wheel.sh builds the sdist, the wheel from that sdist
#      (scikit-build-core driving our CMake) and repairs it with
#      auditwheel; `auditwheel show` says the tag is manylinux_*_x86_64
#      (printed);
#   2. the wheel holds the module (py.typed too), the plugin, the command,
#      LICENSE and NOTICE, and the licence of every library auditwheel
#      bundled (keyshift/licenses/<Debian package>); its version is
#      CMakeLists.txt's and its licence Apache-2.0; the plugin exports
#      conf_init only and links no librdkafka; the sdist has the build
#      files and no tests;
#   3. for each confluent-kafka in KS_WHEEL_CLIENTS (default: the newest
#      from PyPI, and 2.3.0), a fresh virtualenv (python3 -m venv) with
#      the wheel and that client, used from a folder outside the
#      repository, with no LD_LIBRARY_PATH or PYTHONPATH, and with the
#      system's librdkafka absent from the loader path (a private mount
#      namespace, `unshare -rm`, puts /dev/null over it; a control proves
#      it cannot be loaded there):
#        - wheel_host.py: keyshift.config() and its errors, a producer
#          with keyshift.PLUGIN + keyshift.config() whose report's figures
#          equal that client's librdkafka's own partitioner
#          (tests/hosts/python_host.py's checks);
#        - the venv's `keyshift show` reads the report, `keyshift
#          --version` and `python -m keyshift --version` say the version,
#          `keyshift scan --help` runs (the bundled librdkafka loads).
# Env: KS_SOURCE_DIR, KS_BUILD_DIR (ctest sets them); KS_PYTHON (default
# python3 first on PATH); KS_WHEEL_CLIENTS (confluent-kafka versions,
# "latest" for the newest). Needs PyPI (pip's own cache is used).
set -euo pipefail
src=${KS_SOURCE_DIR:?}
out=${KS_BUILD_DIR:?}/tests/wheel
here=$(cd "$(dirname "$0")" && pwd)
py=${KS_PYTHON:-python3}
clients=${KS_WHEEL_CLIENTS:-latest 2.3.0}
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$out"
version=$(sed -n 's/^project(keyshift VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

# 1. build, repair, show
t0=$SECONDS
scripts_out=$("$src/scripts/build-wheel.sh" "$out/build" 2>"$out/build.log") ||
  { tail -30 "$out/build.log"; fail "scripts/build-wheel.sh (see $out/build.log)"; }
sdist=$(sed -n 1p <<<"$scripts_out")
wheel=$(sed -n 2p <<<"$scripts_out")
echo "built in $((SECONDS - t0)) s: $(basename "$sdist"), $(basename "$wheel") ($(stat -c %s "$wheel") bytes)"
tools=$out/build/tools/bin
"$tools/auditwheel" show "$wheel" | tee "$out/auditwheel-show.txt"
# (auditwheel wraps its lines)
tr -s '\n ' '  ' <"$out/auditwheel-show.txt" |
  grep -Eq 'consistent with the following platform tag: "manylinux_[0-9]+_[0-9]+_x86_64"' ||
  fail "auditwheel show: no manylinux tag"
[[ "$(basename "$wheel")" == keyshift-$version-py3-none-manylinux_*_x86_64.whl ]] ||
  fail "$(basename "$wheel"): not keyshift-$version-py3-none-manylinux_*_x86_64"

# 2. what is in it
x=$out/unpacked
rm -rf "$x" && mkdir -p "$x"
"$py" -m zipfile -e "$wheel" "$x"
for f in keyshift/__init__.py keyshift/_cli.py keyshift/__main__.py \
         keyshift/py.typed keyshift/libkeyshift.so keyshift/bin/keyshift \
         "keyshift-$version.dist-info/licenses/LICENSE" \
         "keyshift-$version.dist-info/licenses/NOTICE"; do
  [ -f "$x/$f" ] || fail "the wheel lacks $f"
done
meta=$x/keyshift-$version.dist-info/METADATA
grep -qx "Version: $version" "$meta" || fail "METADATA: no Version: $version"
grep -qx "License-Expression: Apache-2.0" "$meta" || fail "METADATA: not Apache-2.0"
grep -qx "keyshift = keyshift._cli:main" "$x/keyshift-$version.dist-info/entry_points.txt" ||
  fail "no keyshift console script"
plugin=$x/keyshift/libkeyshift.so
! readelf -d "$plugin" | grep -i 'NEEDED.*rdkafka' || fail "the plugin links librdkafka"
[ "$(nm -D --defined-only "$plugin" | awk '{print $3}')" = conf_init ] ||
  fail "the plugin exports more than conf_init"
bundled=0
for lib in "$x"/keyshift.libs/*; do
  base=$(basename "$lib" | sed 's/-[0-9a-f]\{8\}\.so.*//')
  sys=$(ls /usr/lib/x86_64-linux-gnu/"$base".so.* 2>/dev/null | head -1)
  pkg=$(dpkg -S "$(readlink -f "$sys")" 2>/dev/null | head -1 | cut -d: -f1)
  [ -n "$pkg" ] && [ -f "$x/keyshift/licenses/$pkg" ] ||
    fail "$(basename "$lib") is bundled without its licence (package '${pkg:-?}')"
  bundled=$((bundled + 1))
done
[ "$bundled" -gt 0 ] || fail "auditwheel bundled nothing (jansson at least)"
[ -f "$x/keyshift/licenses/libdeflate0" ] || fail "no licence for libdeflate (linked in)"
tar tzf "$sdist" >"$out/sdist.txt"
for f in pyproject.toml CMakeLists.txt python/CMakeLists.txt python/keyshift/__init__.py \
         plugin/ks_plugin.c LICENSE NOTICE; do
  grep -qx "keyshift-$version/$f" "$out/sdist.txt" || fail "the sdist lacks $f"
done
! grep -q "^keyshift-$version/tests/" "$out/sdist.txt" || fail "the sdist holds tests/"
echo "ok: contents: module, plugin (conf_init only, no librdkafka), command, $bundled bundled libraries with their licences; sdist $(wc -l <"$out/sdist.txt") files"

# 3. in fresh virtualenvs, away from the repository and the system's librdkafka
sysrdk=$(readlink -f "$(pkg-config --variable=libdir rdkafka)/librdkafka.so.1")
isolated() { # dir cmd...: cmd in dir, no LD_LIBRARY_PATH/PYTHONPATH, system librdkafka hidden
  local dir=$1; shift
  unshare -rm sh -c 'mount --bind /dev/null "$1" && shift && cd "$1" && shift && exec "$@"' \
    sh "$sysrdk" "$dir" env -u LD_LIBRARY_PATH -u PYTHONPATH -u PYTHONHOME "$@"
}
hidden=1
if ! isolated / true 2>/dev/null; then
  hidden=0
  # a container without user namespaces: the rest is still checked, from a
  # folder outside the repository with no LD_LIBRARY_PATH, but the system's
  # librdkafka stays loadable; said, not hidden
  echo "NOTE: unshare -rm (a private mount namespace) is not available here:" \
       "the system's librdkafka is NOT hidden in this run"
  isolated() {
    local dir=$1; shift
    (cd "$dir" && exec env -u LD_LIBRARY_PATH -u PYTHONPATH -u PYTHONHOME "$@")
  }
fi
failed=0
for c in $clients; do
  venv=$out/venv-$c run=$(mktemp -d "${TMPDIR:-/tmp}/keyshift-wheel-$c-XXXXXX")
  spec=confluent-kafka
  [ "$c" = latest ] || spec="confluent-kafka==$c"
  echo "== confluent-kafka $c: $venv, run in $run"
  rm -rf "$venv"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    --only-binary=:all: "$wheel" "$spec" >"$out/pip-$c.log" 2>&1 ||
    { cat "$out/pip-$c.log"; fail "pip install $spec and the wheel"; }
  # the control: the system's librdkafka cannot be loaded in there
  if [ "$hidden" = 1 ] &&
     isolated "$run" "$venv/bin/python" -c 'import ctypes; ctypes.CDLL("librdkafka.so.1")' 2>/dev/null; then
    fail "the system's librdkafka is still loadable in the isolated run"
  fi
  # the scripts are copied out of the repository: wheel_host.py finds
  # python_host.py at ../hosts from its own folder
  mkdir -p "$run/wheel" "$run/hosts" "$run/reports"
  cp "$here/wheel_host.py" "$run/wheel/"
  cp "$src/tests/hosts/python_host.py" "$run/hosts/"
  if ! isolated "$run" "$venv/bin/python" wheel/wheel_host.py "$run/reports" "$version" \
      2>"$out/host-$c.stderr"; then
    tail -5 "$out/host-$c.stderr"; failed=1; continue
  fi
  report=$run/reports/report-consistent_random.json
  isolated "$run" "$venv/bin/keyshift" show "$report" >"$out/show-$c.txt" 2>&1 ||
    { cat "$out/show-$c.txt"; fail "the venv's keyshift show $report"; }
  grep -q 'ships' "$out/show-$c.txt" || fail "keyshift show: no topic ships (see $out/show-$c.txt)"
  for cmd in "$venv/bin/keyshift --version" "$venv/bin/python -m keyshift --version"; do
    # shellcheck disable=SC2086
    isolated "$run" $cmd | grep -q "^keyshift $version " || fail "$cmd does not say $version"
  done
  isolated "$run" "$venv/bin/keyshift" scan --help >/dev/null ||
    fail "the venv's keyshift scan --help (the bundled librdkafka)"
  echo "ok: the venv's keyshift show, --version, python -m keyshift, scan --help"
  rm -rf "$run"
done
exit $failed
