#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 31's "files a message's trip from on_send enters and re-enters":
# builds the tree with gcc's -finstrument-functions (-O0, no LTO, so that
# every function is one entry) into BUILD, runs bench/ksb_trip.c (one
# message of a new key staged, collected and flushed into its topic on
# one thread) and names each function entered with addr2line. Counts,
# over the functions of core/ only (the bench's own set-up left out):
#   stops       functions entered, in order
#   files       distinct source files among them
#   entries     stops whose file differs from the previous stop's
#   re-entries  of those, into a file entered before
#
#   bench/ksb_trip.sh [--src DIR] [--build DIR] [--list]
#
# --list also prints the trip, a line a stop: file, function.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=/tmp/keyshift-trip
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --src) src=$(cd "$2" && pwd); shift ;;
    --build) build=$2; shift ;;
    --list) list=1 ;;
    *) echo "usage: bench/ksb_trip.sh [--src DIR] [--build DIR] [--list]" >&2; exit 2 ;;
  esac
  shift
done
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=OFF \
      -DKEYSHIFT_BENCH=ON -DKEYSHIFT_LTO=OFF \
      -DCMAKE_C_FLAGS="-O0 -finstrument-functions" >/dev/null
cmake --build "$build" -j"$(nproc)" --target ksb_trip >/dev/null
exe=$build/bench/ksb_trip
"$exe" > "$build/trip.addr"
addr2line -f -e "$exe" < "$build/trip.addr" | paste - - > "$build/trip.named"
awk -v list=$list -v src="$src/" '
  {
    fn = $1; file = $2; sub(/:[0-9?]+( .*)?$/, "", file); sub(src, "", file)
    if (file !~ /^core\//) next
    stops++
    if (list) printf "%4d  %-40s %s\n", stops, file, fn
    if (!(file in seen)) { seen[file] = 1; files++ }
    if (file != prev) {
      entries++
      if (file in entered) reentries++
      entered[file] = 1
    }
    prev = file
  }
  END {
    printf "trip of one message (core/ only): %d stops, %d files, %d entries, %d re-entries\n",
           stops, files, entries, reentries
  }' "$build/trip.named"
