#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds (once, cached outside the source tree) and runs KeyshiftJavaOracle,
# the Java client's own serializers / murmur2 / default partitioner.
#
#   tests/broker/java-oracle.sh build            # build only; prints the classpath
#   tests/broker/java-oracle.sh MODE [options]   # run, e.g.
#   printf 'string:a\nint32:7\n' | tests/broker/java-oracle.sh keys --counts 6,12
#   ... | tests/broker/java-oracle.sh produce --bootstrap 127.0.0.1:39092 --topic t
#   tests/broker/java-oracle.sh help
#
# Env: KS_KAFKA_VERSION (default in common.sh), XDG_CACHE_HOME, JAVA (java).
set -euo pipefail
KS_PROG=java-oracle
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

JAVA=${JAVA:-java}
JAR=$KS_ORACLE_BUILD/keyshift-java-oracle.jar
CP="$JAR:$KS_ORACLE_BUILD/libs/*"

oracle_stamp() {
    {
        echo "kafka=$KS_KAFKA_VERSION"
        cat "$KS_BROKER_DIR/java/pom.xml"
        find "$KS_BROKER_DIR/java/src" -type f -name '*.java' | LC_ALL=C sort | xargs cat
    } | sha256sum | cut -d' ' -f1
}

oracle_build() {
    local want
    want=$(oracle_stamp)
    if [[ -f $JAR && -f $KS_ORACLE_BUILD/.stamp && $(cat "$KS_ORACLE_BUILD/.stamp") == "$want" ]]; then
        return 0
    fi
    ks_lock "$KS_KAFKA_HOME/.oracle.lock"
    # Re-check: another process may have built it while we waited.
    if [[ -f $JAR && -f $KS_ORACLE_BUILD/.stamp && $(cat "$KS_ORACLE_BUILD/.stamp") == "$want" ]]; then
        return 0
    fi
    ks_log "building KeyshiftJavaOracle against kafka-clients $KS_KAFKA_VERSION into $KS_ORACLE_BUILD"
    rm -rf "$KS_ORACLE_BUILD"
    mkdir -p "$KS_KAFKA_HOME"
    ks_mvn "$KS_KAFKA_HOME/oracle-build.log" -f "$KS_BROKER_DIR/java/pom.xml" \
        -Dkafka.version="$KS_KAFKA_VERSION" -Dks.build.dir="$KS_ORACLE_BUILD" package \
        || ks_die "building the Java oracle failed"
    [[ -f $JAR ]] || ks_die "build finished but $JAR is missing"
    echo "$want" >"$KS_ORACLE_BUILD/.stamp"
}

command -v "$JAVA" >/dev/null 2>&1 || ks_die "java not found (set JAVA=...)"
[[ $# -ge 1 ]] || { echo "usage: $0 build | MODE [options]  (MODE: keys, produce, create-topic, add-partitions, describe, version, help)" >&2; exit 2; }

oracle_build
if [[ $1 == build ]]; then
    echo "$CP"
    exit 0
fi
exec 9>&- # drop the build lock (if taken) before running
exec "$JAVA" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$CP" KeyshiftJavaOracle "$@"
