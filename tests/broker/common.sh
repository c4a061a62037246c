# SPDX-License-Identifier: Apache-2.0
# Sourced by kafka-broker.sh and java-oracle.sh: the Kafka version, the cache
# layout outside the source tree, and a quiet Maven runner.
# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this

KS_BROKER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The Apache Kafka release used for the broker and for kafka-clients in the
# Java oracle. 4.1.2 resolves whole from Maven Central here.
KS_KAFKA_VERSION=${KS_KAFKA_VERSION:-4.1.2}
# log4j-slf4j-impl version to pair with the log4j-core that kafka_2.13 pulls
# in (2.25.3 for 4.1.2); only needed when switching KS_KAFKA_VERSION.
KS_KAFKA_LOG4J_VERSION=${KS_KAFKA_LOG4J_VERSION:-2.25.3}

KS_CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/keyshift
KS_KAFKA_HOME=$KS_CACHE_ROOT/kafka-$KS_KAFKA_VERSION
KS_KAFKA_LIBS=$KS_KAFKA_HOME/libs
KS_ORACLE_BUILD=$KS_KAFKA_HOME/oracle

ks_log() { printf '%s: %s\n' "${KS_PROG:-keyshift}" "$*" >&2; }
ks_die() { ks_log "error: $*"; exit 1; }

# ks_mvn LOGFILE ARGS...: runs Maven in batch mode with its output in LOGFILE,
# shown (tail) only when it fails.
ks_mvn() {
    local log=$1; shift
    command -v mvn >/dev/null 2>&1 || ks_die "mvn (Maven) not found; apt-get install maven"
    if ! mvn -B -q -Dstyle.color=never "$@" >"$log" 2>&1; then
        ks_log "mvn $* failed; last lines of $log:"
        tail -n 40 "$log" | sed 's/\x1b\[[0-9;]*m//g' >&2
        return 1
    fi
}

# ks_lock FILE: holds an exclusive lock on FILE on fd 9 until the shell exits
# (serializes concurrent fetch/build/start/stop).
ks_lock() {
    mkdir -p "$(dirname "$1")"
    exec 9>"$1"
    if command -v flock >/dev/null 2>&1; then
        flock -w "${2:-600}" 9 || ks_die "timed out waiting for lock $1"
    fi
}
