#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package, built and used (ctest e2e.packaging_deb). Passes when:
#   - packaging/build-deb.sh makes keyshift_<version>_<arch>.deb;
#   - `dpkg-deb -c` lists libkeyshift.so (the bare-name link) in
#     /usr/lib/<multiarch>, /usr/bin/keyshift, the docs and the copyright
#     file, and nothing outside /usr;
#   - `dpkg-deb -I`: Package keyshift, that version, Depends on libjansson4
#     and zlib1g (the plugin's, the command's and keyshift-replay's NEEDED
#     libraries, checked with readelf) and librdkafka1 (keyshift's scan and
#     keyshift-replay),
#     the plugin links no librdkafka, the copyright file
#     says Apache-2.0 (the source tree's LICENSE);
#   - lintian, when installed, finds no error (its tags are printed) but
#     bogus-mail-host while the maintainer is the placeholder;
#   - installed into a scratch root with `dpkg -x`, kcat loads the plugin
#     from there (full path, and by its bare name with the library folder
#     on LD_LIBRARY_PATH) on the mock cluster and the report counts every
#     line; the packaged `keyshift show` reads that report;
#   - in CI (CI=true) or with KS_DEB_INSTALL=1: `apt-get install ./x.deb`
#     on this machine, kcat loads `plugin.library.paths=libkeyshift` by its
#     bare name, /usr/bin/keyshift reads the report, `apt-get purge`.
#
# Environment (set by ctest): KS_SOURCE_DIR, KS_BUILD_DIR, KS_PRELOAD.
set -euo pipefail

src=${KS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
out=${KS_BUILD_DIR:-$src/build}/deb
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v kcat >/dev/null || fail "kcat missing: scripts/deps.sh test"

deb=$("$src/packaging/build-deb.sh" "$out" | tail -n 1)
[ -f "$deb" ] || fail "no package"
echo "package: $deb"
version=$(sed -n 's/^project(keyshift VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
  gcc -print-multiarch)
[ "$(basename "$deb")" = "keyshift_${version}_${arch}.deb" ] ||
  fail "file name $(basename "$deb"), want keyshift_${version}_${arch}.deb"

# 1. Contents
dpkg-deb -c "$deb" | awk '{ print $6 }' >"$out/contents.txt"
for f in "./usr/lib/$multiarch/libkeyshift.so" ./usr/bin/keyshift \
  ./usr/bin/keyshift-replay ./usr/share/doc/keyshift/copyright \
  ./usr/share/doc/keyshift/README.md ./usr/share/doc/keyshift/metrics.md \
  ./usr/share/doc/keyshift/report-schema.md \
  ./usr/share/doc/keyshift/keyshift.report.v2.schema.json \
  ./usr/share/doc/keyshift/keyshift-cli.md; do
  grep -qx "$f" "$out/contents.txt" || fail "$f not in the package"
done
if grep -v '^\./usr/' "$out/contents.txt" | grep -vx './' | grep -q .; then
  fail "files outside /usr: $(grep -v '^\./usr/' "$out/contents.txt" | grep -vx './')"
fi
echo "ok: contents ($(wc -l <"$out/contents.txt") entries)"

# 2. Control fields
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = keyshift ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version)"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture: $(field Architecture)"
depends=$(field Depends)
echo "Depends: $depends"
root=$out/root
rm -rf "$root"
dpkg -x "$deb" "$root"
for bin in "$root/usr/lib/$multiarch/libkeyshift.so" "$root/usr/bin/keyshift" \
  "$root/usr/bin/keyshift-replay"; do
  for lib in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case "$lib" in
      libjansson.so.*) pkg=libjansson4 ;;
      libz.so.*) pkg=zlib1g ;;
      librdkafka.so.*) pkg=librdkafka1 ;;
      libc.so.*|libm.so.*|ld-linux*) pkg=libc6 ;;
      *) fail "$bin needs $lib: which package?" ;;
    esac
    grep -Eq "(^|, )$pkg( |,|$)" <<<"$depends" ||
      fail "$(basename "$bin") needs $lib but Depends lacks $pkg"
  done
done
# the plugin binds to its host's librdkafka at run time (the keyshift
# command links it: `keyshift scan` is a consumer)
if readelf -d "$root/usr/lib/$multiarch/libkeyshift.so" | grep -q 'librdkafka'; then
  fail "the plugin links librdkafka"
fi
grep -q '^License: Apache-2.0$' "$root/usr/share/doc/keyshift/copyright" ||
  fail "the copyright file does not say Apache-2.0"
dpkg-deb -I "$deb" >"$out/info.txt"
grep -q '^ Description: rehearse a Kafka partition' "$out/info.txt" ||
  fail "no description (see $out/info.txt)"
echo "ok: control fields"

# 3. lintian, when installed
if command -v lintian >/dev/null; then
  lintian --no-tag-display-limit "$deb" >"$out/lintian.txt" 2>&1 || true
  cat "$out/lintian.txt"
  # The maintainer's address is not decided yet (KEYSHIFT_DEB_MAINTAINER,
  # a placeholder at localhost): lintian's bogus-mail-host errors are
  # allowed for that placeholder only; any other error fails.
  errors=$(grep '^E:' "$out/lintian.txt" || true)
  if [[ "$(field Maintainer)" == *@localhost\> ]]; then
    errors=$(grep -v 'bogus-mail-host' <<<"$errors" || true)
    echo "note: the maintainer address is a placeholder ($(field Maintainer))"
  fi
  [ -z "$errors" ] || fail "lintian errors (see $out/lintian.txt): $errors"
  echo "ok: lintian: no error but the placeholder address's ($(grep -c '^W:' "$out/lintian.txt" || true) warnings)"
else
  echo "lintian not installed: skipped"
fi

# 4. The installed plugin in kcat on the mock cluster
plugin=$root/usr/lib/$multiarch/libkeyshift.so
pre=()
[ -n "${KS_PRELOAD:-}" ] && pre=(env "LD_PRELOAD=$KS_PRELOAD")
seq 1 2000 | awk '{ printf "key-%d:value-%d\n", $1 % 97, $1 }' >"$out/in.txt"
run_kcat() { # report plugin.library.paths [env...]
  local report=$1 paths=$2
  shift 2
  env "$@" "${pre[@]}" kcat -b localhost:9 -X test.mock.num.brokers=1 \
    -X plugin.library.paths="$paths" -X keyshift.partitions.proposed=8 \
    -X keyshift.report.path="$report" -P -t pkg -K: -l "$out/in.txt" \
    2>"$report.log" || fail "kcat with $paths (see $report.log)"
  python3 - "$report" <<'PY' || fail "report $report"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["topics"]["pkg"]
assert t["messages"] == 2000, t["messages"]
assert t["acknowledged"]["matched"] == 2000, t["acknowledged"]
print("ok: %s: 2000 messages, 2000 deliveries matched" % sys.argv[1])
PY
}
run_kcat "$out/full.json" "$plugin"
# by the bare name, as after installation (the library folder is searched
# by the loader; here it is the scratch root's)
run_kcat "$out/bare.json" libkeyshift \
  "LD_LIBRARY_PATH=$root/usr/lib/$multiarch"
"$root/usr/bin/keyshift" show --color never "$out/full.json" >"$out/show.txt" ||
  fail "the packaged keyshift show"
grep -q 'topic pkg' "$out/show.txt" || fail "keyshift show: no topic pkg"
echo "ok: the packaged plugin and command work"

# 5. Installed for real (CI, or KS_DEB_INSTALL=1: it changes the machine):
# apt-get install ./x.deb, kcat loads the plugin by its bare name from the
# multiarch folder, /usr/bin/keyshift reads the report; removed after.
if [ "${CI:-}" = true ] || [ "${KS_DEB_INSTALL:-}" = 1 ]; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo -n)
  if dpkg-query -W -f='${Status}' keyshift 2>/dev/null | grep -q 'ok installed'; then
    fail "a keyshift package is installed already: this test installs and removes its own"
  fi
  trap '"${sudo[@]}" apt-get purge -y -q keyshift >/dev/null 2>&1 || true' EXIT
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" \
    >"$out/apt.txt" 2>&1 || fail "apt-get install $deb (see $out/apt.txt)"
  [ -f "/usr/lib/$multiarch/libkeyshift.so" ] || fail "not installed in /usr/lib/$multiarch"
  run_kcat "$out/installed.json" libkeyshift
  /usr/bin/keyshift show --color never "$out/installed.json" >"$out/show-installed.txt" ||
    fail "the installed keyshift show"
  grep -q 'topic pkg' "$out/show-installed.txt" || fail "installed keyshift show: no topic pkg"
  "${sudo[@]}" apt-get purge -y -q keyshift >"$out/apt-remove.txt" 2>&1 ||
    fail "apt-get purge keyshift (see $out/apt-remove.txt)"
  trap - EXIT
  [ ! -e "/usr/lib/$multiarch/libkeyshift.so" ] || fail "apt-get purge left the plugin"
  echo "ok: apt-get install ./$(basename "$deb"), kcat with plugin.library.paths=libkeyshift, purged"
else
  echo "not installed system-wide (CI=true or KS_DEB_INSTALL=1 runs apt-get install ./$(basename "$deb") and kcat by the bare name)"
fi
