#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""docs/report-schema.md and docs/keyshift.report.v2.schema.json agree:
every field the document names is in the schema (issue 29).

A field is a `backticked` snake_case name in the document's field tables
and lists (a path such as `proposals[].moved` or `scan.partitions` counts
each of its names); it must be a member name somewhere in the schema, or
a value the schema allows (an enum or const: `metadata`, `murmur2`). Names
that are not report fields are skipped: `keyshift.*` properties, warning
codes (upper case), file names, and the few words listed in NOT_FIELDS.

Usage: test_report_doc.py [DOC.md] [SCHEMA.json]  (exit 0: every field found)
"""
import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DOC = os.path.join(ROOT, "docs", "report-schema.md")
SCHEMA = os.path.join(ROOT, "docs", "keyshift.report.v2.schema.json")

# backticked words of the document that are not members of a report: C
# functions, librdkafka's and Kafka's settings, the CLI's commands, the
# temporary file's name, what an array's entries hold
NOT_FIELDS = {
    "rd_kafka_name", "partitioner_cb", "rd_kafka_topic_new", "rd_crc32",
    "rd_fnv1a", "crc32", "o_tmpfile", "rename", "hash64_hex",
    "partitioner_hash", "index", "value", "from", "to", "null", "true",
    "false", "ks_report_sampling_settle", "report", "tmp", "n", "v1", "v2",
    "increase", "cleanup", "policy", "compact", "refresh", "ms", "show",
    "html", "metrics", "keyshift",
    # v1's sketch members, named in "What changed from v1"; what the packed
    # sketches' payloads hold (docs: "Packed sketches"), not JSON members
    "registers_hex", "registers_nonzero", "entries", "hash64", "phash",
}


def schema_names(node, names, values):
    if isinstance(node, dict):
        for k, v in node.get("properties", {}).items():
            names.add(k)
        for k in ("enum",):
            for x in node.get(k, []):
                if isinstance(x, str):
                    values.add(x)
        if isinstance(node.get("const"), str):
            values.add(node["const"])
        for v in node.values():
            schema_names(v, names, values)
    elif isinstance(node, list):
        for v in node:
            schema_names(v, names, values)


def doc_fields(text):
    """Backticked names of the document, with their line numbers."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for tok in re.findall(r"`([^`]+)`", line):
            tok = tok.strip()
            if tok.startswith("keyshift.") or tok.startswith("keyshift_") \
                    or "/" in tok or " " in tok or tok.upper() == tok:
                continue
            for part in re.split(r"[.\[\]{}\"<>]+", tok):
                if re.fullmatch(r"[a-z][a-z0-9_]*", part) and \
                        part not in NOT_FIELDS:
                    out.append((n, part))
    return out


def main(argv):
    doc = argv[1] if len(argv) > 1 else DOC
    schema = argv[2] if len(argv) > 2 else SCHEMA
    with open(schema) as f:
        s = json.load(f)
    names, values = set(), set()
    schema_names(s, names, values)
    with open(doc) as f:
        fields = doc_fields(f.read())
    missing = [(n, w) for n, w in fields if w not in names and w not in values]
    for n, w in missing:
        print("%s:%d: `%s` is not in %s" % (doc, n, w, os.path.basename(schema)))
    print("%d field names of the document checked, %d missing from the schema"
          % (len(fields), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
