#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The ctest fixture of the broker tests (label `broker`, see CMakeLists.txt):
#
#   ctest-fixture.sh setup     check java/mvn, fetch Kafka, build the Java
#                              reference, start the broker; write its address
#                              to $KS_BROKER_STATE/bootstrap, and that of its
#                              SASL/PLAIN listener to .../sasl_bootstrap
#   ctest-fixture.sh cleanup   stop the broker (also after failed tests: ctest
#                              runs FIXTURES_CLEANUP whatever happened), then
#                              print the tests' summary tables and the time
#                              since setup began
#
# Env (set by CMakeLists.txt): KS_BROKER_STATE (a folder in the build tree),
# KS_KAFKA_PORT, KS_BROKER_SASL_PORT (its SASL/PLAIN listener's). From the
# caller: KS_KAFKA_BOOTSTRAP (use that cluster, start and stop nothing), CI,
# JAVA.
#
# Never skips: when Java or Maven is missing this FAILS with a message that
# says what to install. Leaving the broker tests out is the caller's choice
# (tests/run --unit-only, refused when CI=true), never this script's.
set -euo pipefail
KS_PROG=broker-fixture
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$HERE/common.sh"

STATE=${KS_BROKER_STATE:?KS_BROKER_STATE must be set (ctest sets it)}
JAVA=${JAVA:-java}

now_ms() { date +%s%3N; }

# fail WHAT: a missing prerequisite, explained once, in full.
fail_missing() {
    {
        echo
        echo "broker tests: FAILED: $1"
        echo "  The broker tests (ctest -L broker) run a real Apache Kafka $KS_KAFKA_VERSION broker"
        echo "  and the Java client as a reference; they need Java 17+ and Maven"
        echo "  (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless maven)."
        echo "  KS_KAFKA_BOOTSTRAP=host:port points them at an existing cluster, but"
        echo "  the Java reference still needs Java and Maven."
        if [[ ${CI:-} == true ]]; then
            echo "  CI=true: the broker tests are required in CI; install the tools in the CI image."
        else
            echo "  These tests never skip themselves. To run without them (outside CI"
            echo "  only), use tests/run --unit-only, which says that it skips them."
        fi
        echo
    } >&2
    exit 1
}

check_tools() {
    local v major
    command -v "$JAVA" >/dev/null 2>&1 || fail_missing "java not found (PATH=$PATH; JAVA=$JAVA)"
    v=$("$JAVA" -version 2>&1 | awk -F'"' '/version/ { print $2; exit }')
    major=${v%%.*}
    [[ $major == 1 ]] && major=$(echo "$v" | cut -d. -f2)
    [[ $major =~ ^[0-9]+$ ]] || fail_missing "cannot tell the Java version (\`$JAVA -version\` said: $("$JAVA" -version 2>&1 | head -1))"
    ((major >= 17)) || fail_missing "Java $v is too old; Java 17 or newer is needed"
    # Maven is needed only to fill the cache; say so up front rather than
    # halfway through a fetch.
    if ! command -v mvn >/dev/null 2>&1; then
        if [[ -z ${KS_KAFKA_BOOTSTRAP:-} && ! -f $KS_KAFKA_LIBS/.complete ]] \
            || [[ ! -f $KS_ORACLE_BUILD/keyshift-java-oracle.jar ]]; then
            fail_missing "mvn (Maven) not found, and the Kafka jars or the Java reference are not cached yet"
        fi
        ks_log "mvn not found; using the cached jars in $KS_KAFKA_HOME"
    fi
    ks_log "java $v at $(command -v "$JAVA")"
}

step() {   # step SCRIPT ARG...: runs it, logs how long it took
    local t0 rc=0 name
    name="$(basename "$1" .sh) ${2:-}"
    t0=$(now_ms)
    "$@" || rc=$?
    ks_log "$name: $(( $(now_ms) - t0 ))ms (exit $rc)"
    printf '%s\t%s\n' "$name" "$(( $(now_ms) - t0 ))" >>"$STATE/steps.tsv"
    return "$rc"
}

do_setup() {
    rm -rf "$STATE"
    mkdir -p "$STATE/summary"
    now_ms >"$STATE/started_ms"
    check_tools
    if [[ -z ${KS_KAFKA_BOOTSTRAP:-} ]]; then
        step "$HERE/kafka-broker.sh" fetch || { ks_log "error: fetching Kafka failed"; exit 1; }
    fi
    step "$HERE/java-oracle.sh" build >/dev/null || { ks_log "error: building the Java reference failed"; exit 1; }
    local boot
    # the SASL/PLAIN listener of broker.fleet_sasl, on the same broker
    boot=$(KS_KAFKA_SASL_PORT=${KS_BROKER_SASL_PORT:-} step "$HERE/kafka-broker.sh" start) \
        || { ks_log "error: the broker did not start"; exit 1; }
    [[ -n $boot ]] || { ks_log "error: kafka-broker.sh start printed no address"; exit 1; }
    echo "$boot" >"$STATE/bootstrap"
    if [[ -z ${KS_KAFKA_BOOTSTRAP:-} && -n ${KS_BROKER_SASL_PORT:-} ]]; then
        echo "127.0.0.1:$KS_BROKER_SASL_PORT" >"$STATE/sasl_bootstrap"
    fi
    printf 'setup total\t%s\n' "$(( $(now_ms) - $(cat "$STATE/started_ms") ))" >>"$STATE/steps.tsv"
    echo "broker ready at $boot"
}

do_cleanup() {
    local rc=0 t0 f
    t0=$(now_ms)
    "$HERE/kafka-broker.sh" stop || rc=$?
    if [[ -z ${KS_KAFKA_BOOTSTRAP:-} ]] && "$HERE/kafka-broker.sh" status >/dev/null 2>&1; then
        ks_log "error: the broker is still running after stop"
        rc=1
    fi
    # broker.fleet_late's own broker, left running if that test was
    # killed (a ctest timeout skips its atexit handler)
    if [[ -n ${KS_BROKER_LATE_PORT:-} ]]; then
        env -u KS_KAFKA_BOOTSTRAP KS_KAFKA_PORT="$KS_BROKER_LATE_PORT" \
            "$HERE/kafka-broker.sh" stop || rc=$?
    fi
    rm -f "$STATE/bootstrap" "$STATE/sasl_bootstrap"
    # The summary goes to stdout (ctest -V shows it) and to a file, since
    # ctest shows nothing of a test that passed.
    mkdir -p "$STATE"
    {
        echo "## keyshift broker tests: summary"
        echo
        echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), Kafka $KS_KAFKA_VERSION at ${KS_KAFKA_BOOTSTRAP:-127.0.0.1:${KS_KAFKA_PORT:-39092} (started by the fixture)}, $(nproc) CPUs"
        for f in "$STATE"/summary/*.md; do
            [[ -f $f ]] && { echo; cat "$f"; }
        done
        echo
        if [[ -f $STATE/started_ms ]]; then
            echo "setup steps: $(awk -F'\t' '{ printf("%s%s %.1f s", (NR > 1 ? ", " : ""), $1, $2 / 1000) }' "$STATE/steps.tsv" 2>/dev/null)"
            echo "broker stop: $(awk -v a="$t0" -v b="$(now_ms)" 'BEGIN { printf("%.1f s", (b - a) / 1000) }')"
            echo "broker suite wall time (setup start to cleanup end): $(awk -v a="$(cat "$STATE/started_ms")" -v b="$(now_ms)" 'BEGIN { printf("%.1f s", (b - a) / 1000) }')"
        fi
    } >"$STATE/summary.md.tmp"
    mv "$STATE/summary.md.tmp" "$STATE/summary.md"
    echo
    cat "$STATE/summary.md"
    echo
    echo "(saved in $STATE/summary.md)"
    return "$rc"
}

case ${1:-} in
    setup) do_setup ;;
    cleanup) do_cleanup ;;
    *) echo "usage: $0 setup|cleanup" >&2; exit 2 ;;
esac
