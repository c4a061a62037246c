#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A burst right after the producer is created loses nothing to keyshift's
# start-up (issue "Trust the figures"): a C producer (host_burst, Debian's
# librdkafka), Debian's python3-confluent-kafka and the newest PyPI wheel
# in KS_BURST_WHEEL (its own librdkafka) each create a producer with
# keyshift on its default settings and, with no pause, produce
# KS_BURST_MESSAGES (200,000) keyed messages as fast as they can, in
# KS_BURST_RUNS (10) runs: every run must leave 0 messages unanalysed and
# every exact figure equal to that librdkafka's own partitioner function
# (host_burst.c, python_burst.py).
#
#   test_burst.sh mock     librdkafka's mock cluster (ctest hosts.burst)
#   test_burst.sh broker   the broker tests' Kafka broker (ctest broker.burst)
#
# Env: KS_PLUGIN, KS_BUILD_DIR (ctest sets them); KS_BROKER_STATE (broker:
# the fixture's folder, with the bootstrap address) or KS_KAFKA_BOOTSTRAP.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=wheels.sh
. "$src/wheels.sh"
plugin=${KS_PLUGIN:?}
burst=${KS_BUILD_DIR:?}/tests/hosts/host_burst
runs=${KS_BURST_RUNS:-10}
n=${KS_BURST_MESSAGES:-200000}
wheel=${KS_BURST_WHEEL:-2.16.1}
case "${1:-}" in
  mock) bootstrap=mock ;;
  broker) bootstrap=${KS_KAFKA_BOOTSTRAP:-$(cat "${KS_BROKER_STATE:?}/bootstrap")} ;;
  *) echo "usage: test_burst.sh mock|broker" >&2; exit 2 ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keyshift-burst-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

failed=0
echo "== C producer, Debian's librdkafka, $bootstrap"
"$burst" "$plugin" "$tmp" "$bootstrap" "$runs" "$n" 2>"$tmp/c.stderr" ||
  { failed=1; tail -5 "$tmp/c.stderr"; }
echo "== Debian's python3-confluent-kafka, $bootstrap"
$py -s "$src/python_burst.py" "$plugin" "$tmp" "$bootstrap" "$runs" "$n" \
  2>"$tmp/debian.stderr" || { failed=1; tail -5 "$tmp/debian.stderr"; }
echo "== confluent-kafka $wheel (PyPI wheel), $bootstrap"
PYTHONPATH=$(wheel_dir "$wheel") $py "$src/python_burst.py" "$plugin" "$tmp" \
  "$bootstrap" "$runs" "$n" 2>"$tmp/wheel.stderr" ||
  { failed=1; tail -5 "$tmp/wheel.stderr"; }
# every report written, against the published schema (issue 29)
/usr/bin/python3 "$(cd "$(dirname "$0")/../support" && pwd)/validate_report.py" --under "$tmp" || failed=1
exit $failed
