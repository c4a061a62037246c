#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libkeyshift.so links no librdkafka and exports only conf_init: no NEEDED
# librdkafka, no undefined rd_kafka_* symbol (every call goes through the
# table ks_host.c binds at run time), one defined dynamic symbol.
# Env: KS_PLUGIN (ctest sets it).
set -euo pipefail
plugin=${KS_PLUGIN:?}
needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "NEEDED: $(echo $needed)"
if grep -q rdkafka <<<"$needed"; then echo "test_linkage: FAIL: NEEDED librdkafka"; exit 1; fi
undefined=$(nm -D --undefined-only "$plugin" | awk '{print $2}' | grep '^rd_kafka' || true)
if [ -n "$undefined" ]; then echo "test_linkage: FAIL: undefined $undefined"; exit 1; fi
exported=$(nm -D --defined-only "$plugin" | awk '{print $3}')
if [ "$exported" != conf_init ]; then echo "test_linkage: FAIL: exports $(echo $exported)"; exit 1; fi
echo "ok: no librdkafka NEEDED, no undefined rd_kafka_*, exports conf_init only"
