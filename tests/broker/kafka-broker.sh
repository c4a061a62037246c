#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real single-node Apache Kafka broker (KRaft, combined broker+controller)
# for keyshift's broker tests, run from jars resolved off Maven Central.
#
#   tests/broker/kafka-broker.sh fetch    # resolve kafka_2.13 + runtime deps into the cache (idempotent)
#   tests/broker/kafka-broker.sh start    # format + start in the background, wait until it answers;
#                                         # prints the bootstrap address (only that) on stdout
#   tests/broker/kafka-broker.sh status   # "running <bootstrap> pid <pid>" (exit 0) or "stopped" (exit 3)
#   tests/broker/kafka-broker.sh stop     # stop it and remove its run dir (safe after a failed start)
#
# Env:
#   KS_KAFKA_BOOTSTRAP   use this existing cluster: start/stop do nothing and print it
#   KS_KAFKA_VERSION     Kafka release (default in common.sh)
#   KS_KAFKA_PORT        client listener port on 127.0.0.1 (default 39092)
#   KS_KAFKA_CONTROLLER_PORT  controller listener port (default KS_KAFKA_PORT+1)
#   KS_KAFKA_RUN_DIR     config, data and logs (default ${TMPDIR:-/tmp}/keyshift-kafka-<port>)
#   KS_KAFKA_HEAP        JVM heap options (default "-Xms256m -Xmx512m")
#   KS_KAFKA_START_TIMEOUT / KS_KAFKA_STOP_TIMEOUT  seconds (default 90 / 30)
#   KS_KAFKA_NUM_PARTITIONS  partitions of auto-created topics (default 1)
#   KS_KAFKA_SASL_PORT   also a SASL_PLAINTEXT listener (PLAIN) on this port, with
#                        ACLs enforced (server-sasl.properties, kafka_server_jaas.conf);
#                        unset: none
#   XDG_CACHE_HOME       cache root (jars go to $XDG_CACHE_HOME/keyshift/kafka-<ver>/libs)
set -euo pipefail
KS_PROG=kafka-broker
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

JAVA=${JAVA:-java}
PORT=${KS_KAFKA_PORT:-39092}
CPORT=${KS_KAFKA_CONTROLLER_PORT:-$((PORT + 1))}
RUN_DIR=${KS_KAFKA_RUN_DIR:-${TMPDIR:-/tmp}/keyshift-kafka-$PORT}
HEAP=${KS_KAFKA_HEAP:--Xms256m -Xmx512m}
START_TIMEOUT=${KS_KAFKA_START_TIMEOUT:-90}
STOP_TIMEOUT=${KS_KAFKA_STOP_TIMEOUT:-30}
SASL_PORT=${KS_KAFKA_SASL_PORT:-}
BOOTSTRAP=127.0.0.1:$PORT
PID_FILE=$RUN_DIR/kafka.pid
MARKER=$RUN_DIR/.keyshift-kafka-run-dir
LOCK_FILE=$KS_CACHE_ROOT/locks/kafka-$PORT.lock

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
    exit 2
}

# ------------------------------------------------------------------ fetch

do_fetch() {
    if [[ -f $KS_KAFKA_LIBS/.complete ]]; then
        ks_log "kafka $KS_KAFKA_VERSION already in $KS_KAFKA_LIBS"
        return 0
    fi
    ks_lock "$KS_KAFKA_HOME/.fetch.lock"
    if [[ -f $KS_KAFKA_LIBS/.complete ]]; then
        return 0
    fi
    ks_log "resolving org.apache.kafka:kafka_2.13:$KS_KAFKA_VERSION and its runtime dependencies into $KS_KAFKA_LIBS"
    local tmp=$KS_KAFKA_HOME/libs.partial
    rm -rf "$tmp" "$KS_KAFKA_LIBS"
    mkdir -p "$tmp"
    ks_mvn "$KS_KAFKA_HOME/fetch.log" -f "$KS_BROKER_DIR/pom.xml" \
        -Dkafka.version="$KS_KAFKA_VERSION" -Dlog4j.version="$KS_KAFKA_LOG4J_VERSION" \
        -Dks.build.dir="$KS_KAFKA_HOME/mvn-build" \
        dependency:copy-dependencies -DoutputDirectory="$tmp" \
        || ks_die "fetching Kafka $KS_KAFKA_VERSION failed (is Maven Central reachable?)"
    [[ -f $tmp/kafka_2.13-$KS_KAFKA_VERSION.jar && -f $tmp/kafka-clients-$KS_KAFKA_VERSION.jar ]] \
        || ks_die "Maven finished but the Kafka jars are missing from $tmp"
    mv "$tmp" "$KS_KAFKA_LIBS"
    rm -rf "$KS_KAFKA_HOME/mvn-build"
    touch "$KS_KAFKA_LIBS/.complete"
    ks_log "fetched $(find "$KS_KAFKA_LIBS" -name '*.jar' | wc -l) jars ($(du -sh "$KS_KAFKA_LIBS" | cut -f1))"
    exec 9>&-
}

# ------------------------------------------------------------ processes

# Is something accepting TCP connections on 127.0.0.1:$1?
port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pids of JVMs started by this script for this run dir (the broker, or a
# storage format still running): their command line names our config file.
our_pids() {
    local f pid
    for f in /proc/[0-9]*/cmdline; do
        pid=${f#/proc/}; pid=${pid%/cmdline}
        [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
        if tr '\0' '\n' <"$f" 2>/dev/null | grep -Fqx -- "$RUN_DIR/server.properties"; then
            echo "$pid"
        fi
    done
}

pid_alive() {
    [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null
}

broker_pid() {
    local pid
    [[ -f $PID_FILE ]] || return 1
    pid=$(cat "$PID_FILE" 2>/dev/null) || return 1
    pid_alive "$pid" || return 1
    tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -Fqx -- "$RUN_DIR/server.properties" || return 1
    echo "$pid"
}

# Does the broker answer a metadata request with itself as a live broker?
broker_ready() {
    port_open "$PORT" || return 1
    [[ -z $SASL_PORT ]] || port_open "$SASL_PORT" || return 1
    if command -v kcat >/dev/null 2>&1; then
        # (All-topics metadata: asking for a missing topic could auto-create it.)
        kcat -b "$BOOTSTRAP" -L -m 5 2>/dev/null | grep -q "broker 1 at 127.0.0.1:$PORT"
    else
        # No kcat: the broker logs this once it is registered and unfenced.
        grep -q "Kafka Server started" "$RUN_DIR/logs/server.log" 2>/dev/null
    fi
}

# ------------------------------------------------------------------- stop

do_stop() {
    local pids pid waited=0
    pids=$( { [[ -f $PID_FILE ]] && cat "$PID_FILE"; our_pids; } 2>/dev/null | sort -u)
    for pid in $pids; do
        pid_alive "$pid" || continue
        # Only JVMs whose command line names this run dir's config.
        tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -Fqx -- "$RUN_DIR/server.properties" || continue
        ks_log "stopping kafka (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in $pids; do
        while pid_alive "$pid" && tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -Fqx -- "$RUN_DIR/server.properties"; do
            if ((waited >= STOP_TIMEOUT * 10)); then
                ks_log "pid $pid did not stop in ${STOP_TIMEOUT}s; killing it"
                kill -KILL "$pid" 2>/dev/null || true
                sleep 0.5
                break
            fi
            sleep 0.1
            waited=$((waited + 1))
        done
    done
    if [[ -d $RUN_DIR ]]; then
        if [[ -f $MARKER ]]; then
            rm -rf "$RUN_DIR"
        else
            ks_log "warning: $RUN_DIR exists but was not made by this script; left in place"
        fi
    fi
}

# ------------------------------------------------------------------ start

write_config() {
    local cluster_id=$1
    local listeners="PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT"
    local advertised="PLAINTEXT://127.0.0.1:$PORT"
    local map="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
    if [[ -n $SASL_PORT ]]; then
        listeners+=",SASL_PLAINTEXT://127.0.0.1:$SASL_PORT"
        advertised+=",SASL_PLAINTEXT://127.0.0.1:$SASL_PORT"
        map+=",SASL_PLAINTEXT:SASL_PLAINTEXT"
    fi
    {
        echo "# Written by tests/broker/kafka-broker.sh from $KS_BROKER_DIR/server.properties"
        sed -e "s|@CPORT@|$CPORT|g" -e "s|@LISTENERS@|$listeners|g" \
            -e "s|@ADVERTISED_LISTENERS@|$advertised|g" -e "s|@PROTOCOL_MAP@|$map|g" \
            -e "s|@RUN_DIR@|$RUN_DIR|g" -e "s|@NUM_PARTITIONS@|${KS_KAFKA_NUM_PARTITIONS:-1}|g" \
            "$KS_BROKER_DIR/server.properties"
        if [[ -n $SASL_PORT ]]; then
            echo
            cat "$KS_BROKER_DIR/server-sasl.properties"
        fi
    } >"$RUN_DIR/server.properties"
    ! grep -q '@[A-Z_]*@' "$RUN_DIR/server.properties" \
        || ks_die "unfilled placeholders in $RUN_DIR/server.properties"
    cat >"$RUN_DIR/log4j2.properties" <<'EOF'
# log4j2 (Kafka 4.x): everything to logs/server.log, warnings also to stdout.log.
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
appender.out.filter.threshold.type = ThresholdFilter
appender.out.filter.threshold.level = warn
rootLogger.level = info
rootLogger.appenderRef.file.ref = FILE
rootLogger.appenderRef.out.ref = STDOUT
logger.raft.name = org.apache.kafka.raft
logger.raft.level = warn
logger.state.name = state.change.logger
logger.state.level = warn
EOF
    echo "$cluster_id" >"$RUN_DIR/cluster.id"
}

random_cluster_id() {
    # A Kafka Uuid: 16 random bytes, URL-safe base64 without padding (22 chars).
    head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'
}

jvm_opts() {
    # shellcheck disable=SC2206
    local heap=($HEAP)
    printf '%s\n' "${heap[@]}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExplicitGCInvokesConcurrent \
        -Djava.awt.headless=true -Dkafka.logs.dir="$RUN_DIR/logs" \
        -Dlog4j2.configurationFile="$RUN_DIR/log4j2.properties"
    if [[ -n $SASL_PORT ]]; then
        echo "-Djava.security.auth.login.config=$KS_BROKER_DIR/kafka_server_jaas.conf"
    fi
}

START_OK=0
on_start_exit() {
    local rc=$?
    if ((START_OK == 0)); then
        ks_log "start failed; cleaning up"
        do_stop || true
        ((rc != 0)) || rc=1
    fi
    exit "$rc"
}

do_start() {
    local pid
    command -v "$JAVA" >/dev/null 2>&1 || ks_die "java not found (set JAVA=...)"
    do_fetch
    ks_lock "$LOCK_FILE"

    if pid=$(broker_pid) && broker_ready; then
        if [[ -n $SASL_PORT ]] && ! grep -Fq "SASL_PLAINTEXT://127.0.0.1:$SASL_PORT" "$RUN_DIR/server.properties"; then
            ks_die "the broker on $BOOTSTRAP (pid $pid) runs without the SASL listener on port $SASL_PORT; stop it first"
        fi
        ks_log "already running (pid $pid)"
        echo "$BOOTSTRAP"
        return 0
    fi

    trap on_start_exit EXIT
    trap 'exit 130' INT TERM HUP
    if [[ -d $RUN_DIR && ! -f $MARKER ]]; then
        START_OK=1   # not ours: leave it alone
        ks_die "$RUN_DIR exists but was not made by this script (set KS_KAFKA_RUN_DIR)"
    fi
    do_stop   # leftovers of an earlier run on this port

    port_open "$PORT" && ks_die "port $PORT on 127.0.0.1 is already in use (set KS_KAFKA_PORT)"
    port_open "$CPORT" && ks_die "controller port $CPORT on 127.0.0.1 is already in use (set KS_KAFKA_CONTROLLER_PORT)"
    if [[ -n $SASL_PORT ]] && port_open "$SASL_PORT"; then
        ks_die "SASL port $SASL_PORT on 127.0.0.1 is already in use (set KS_KAFKA_SASL_PORT)"
    fi

    mkdir -p "$RUN_DIR/logs" "$RUN_DIR/data"
    touch "$MARKER"
    write_config "$(random_cluster_id)"

    local -a opts
    mapfile -t opts < <(jvm_opts)
    ks_log "formatting storage in $RUN_DIR/data"
    "$JAVA" "${opts[@]}" -Xms64m -cp "$KS_KAFKA_LIBS/*" kafka.tools.StorageTool format \
        -t "$(cat "$RUN_DIR/cluster.id")" -c "$RUN_DIR/server.properties" \
        >"$RUN_DIR/logs/format.log" 2>&1 9>&- \
        || { cat "$RUN_DIR/logs/format.log" >&2; ks_die "formatting storage failed"; }

    ks_log "starting kafka $KS_KAFKA_VERSION on $BOOTSTRAP (controller 127.0.0.1:$CPORT${SASL_PORT:+, SASL_PLAINTEXT 127.0.0.1:$SASL_PORT}, heap: $HEAP)"
    # setsid: own session, so the broker outlives a closed terminal and a
    # caller's process-group signals; fd 9 (our lock) is not inherited.
    setsid "$JAVA" "${opts[@]}" -cp "$KS_KAFKA_LIBS/*" kafka.Kafka "$RUN_DIR/server.properties" \
        </dev/null >"$RUN_DIR/logs/stdout.log" 2>&1 9>&- &
    pid=$!
    echo "$pid" >"$PID_FILE"

    local t0=$SECONDS
    until broker_ready; do
        if ! pid_alive "$pid"; then
            ks_log "kafka exited during startup; last lines of its logs:"
            tail -n 30 "$RUN_DIR/logs/stdout.log" "$RUN_DIR/logs/server.log" >&2 2>/dev/null || true
            exit 1
        fi
        if ((SECONDS - t0 >= START_TIMEOUT)); then
            ks_log "kafka did not answer on $BOOTSTRAP within ${START_TIMEOUT}s; last lines of its logs:"
            tail -n 30 "$RUN_DIR/logs/stdout.log" "$RUN_DIR/logs/server.log" >&2 2>/dev/null || true
            exit 1
        fi
        sleep 0.25
    done
    echo "$BOOTSTRAP" >"$RUN_DIR/bootstrap"
    START_OK=1
    trap - EXIT INT TERM HUP
    ks_log "kafka is up on $BOOTSTRAP (pid $pid, $((SECONDS - t0))s after launch); logs in $RUN_DIR/logs"
    echo "$BOOTSTRAP"
}

do_status() {
    local pid
    if pid=$(broker_pid); then
        if broker_ready; then
            echo "running $BOOTSTRAP pid $pid"
            return 0
        fi
        echo "starting $BOOTSTRAP pid $pid (not answering yet)"
        return 1
    fi
    echo "stopped"
    return 3
}

# ------------------------------------------------------------------- main

[[ $# -eq 1 ]] || usage
cmd=$1

if [[ -n ${KS_KAFKA_BOOTSTRAP:-} ]]; then
    case $cmd in
        start|stop)
            ks_log "KS_KAFKA_BOOTSTRAP is set: using the existing cluster, nothing to $cmd"
            echo "$KS_KAFKA_BOOTSTRAP"
            exit 0 ;;
        status)
            if command -v kcat >/dev/null 2>&1; then
                if kcat -b "$KS_KAFKA_BOOTSTRAP" -L -m 10 >/dev/null 2>&1; then
                    echo "external $KS_KAFKA_BOOTSTRAP"; exit 0
                fi
                echo "external $KS_KAFKA_BOOTSTRAP (not answering)"; exit 1
            fi
            echo "external $KS_KAFKA_BOOTSTRAP"; exit 0 ;;
    esac
fi

case $cmd in
    fetch) do_fetch ;;
    start) do_start ;;
    stop) ks_lock "$LOCK_FILE" 120; do_stop; ks_log "stopped" ;;
    status) do_status ;;
    -h|--help|help) usage ;;
    *) usage ;;
esac
