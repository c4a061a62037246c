#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what keyshift needs from Debian 12 (bookworm), once.
#   scripts/deps.sh build   compiler, CMake, librdkafka-dev, jansson, zlib, libdeflate
#                           (libdeflate: bench/ksb_crc32.c measures its CRC-32)
#   scripts/deps.sh test    + CUnit, kcat, prometheus (promtool), Java 17 + Maven (broker tests),
#                           pip and python3-confluent-kafka, Go (the
#                           Python and Go host tests, tests/hosts/),
#                           python3-jsonschema (reports checked against
#                           docs/keyshift.report.v2.schema.json), venv
#                           (the Python wheel's test, tests/wheel/),
#                           clang and libclang-rt-dev (the fuzz targets,
#                           tests/fuzz/: libFuzzer and its sanitizer
#                           runtimes, only a Recommends of clang's)
#   scripts/deps.sh fuzz    build + clang only (tests/fuzz/run)
set -euo pipefail

want=(build-essential cmake pkg-config librdkafka-dev libjansson-dev zlib1g-dev libdeflate-dev)
if [ "${1:-build}" = test ]; then
  want+=(libcunit1-dev kcat prometheus python3 python3-pip python3-venv
         python3-confluent-kafka python3-jsonschema
         default-jdk-headless maven golang-go clang libclang-rt-dev)
fi
if [ "${1:-build}" = fuzz ]; then
  want+=(clang libclang-rt-dev)
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A JDK, Maven and Go installed outside Debian count too.
if [ "${1:-build}" = test ]; then
  filtered=()
  for p in "${missing[@]}"; do
    case "$p" in
      default-jdk-headless) command -v javac >/dev/null || filtered+=("$p") ;;
      maven) command -v mvn >/dev/null || filtered+=("$p") ;;
      golang-go) command -v go >/dev/null || filtered+=("$p") ;;
      *) filtered+=("$p") ;;
    esac
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "keyshift: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
