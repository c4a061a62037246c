#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Validates keyshift reports against docs/keyshift.report.v2.schema.json
with Debian's python3-jsonschema (Draft 2020-12).

Usage: validate_report.py [--schema FILE] REPORT.json...
       validate_report.py [--schema FILE] --under DIR...
Prints one line per report that is off-schema ("FILE: PATH: problem") and
exits 1 if any is, 0 when all are valid, 2 on usage or unreadable input.
--under validates every *.json file below each DIR whose top level is a
keyshift report ("schema": "keyshift.report...."), and says how many.

An integer is a JSON number written without fraction or exponent, as
keyshift writes counts and as its own report check (cli/ks_cli_schema.h)
reads the schema: 1.0 is refused where the schema says "integer".
"""
import json
import os
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "docs", "keyshift.report.v2.schema.json")


def validator(schema_path):
    with open(schema_path) as f:
        schema = json.load(f)
    base = jsonschema.Draft202012Validator
    base.check_schema(schema)
    checker = base.TYPE_CHECKER.redefine(
        "integer", lambda _c, v: isinstance(v, int) and not isinstance(v, bool))
    cls = jsonschema.validators.extend(base, type_checker=checker)
    return cls(schema)


def where(err):
    out = ""
    for p in err.absolute_path:
        out += "[%d]" % p if isinstance(p, int) else ("." if out else "") + str(p)
    return out or "(top)"


def is_report(path):
    try:
        with open(path) as f:
            head = f.read(64)
    except OSError:
        return False
    return head.lstrip().startswith("{") and '"keyshift.report.' in head


def main(argv):
    schema = SCHEMA
    if len(argv) > 2 and argv[1] == "--schema":
        schema = argv[2]
        argv = argv[2:]
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    v = validator(schema)
    bad = 0
    paths = argv[1:]
    if paths[0] == "--under":
        paths = []
        for top in argv[2:]:
            for d, _, files in os.walk(top):
                for name in sorted(files):
                    if name.endswith(".json") and is_report(os.path.join(d, name)):
                        paths.append(os.path.join(d, name))
        print("%d keyshift reports under %s" % (len(paths), " ".join(argv[2:])))
    for path in paths:
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: cannot read: %s" % (path, e))
            return 2
        err = jsonschema.exceptions.best_match(v.iter_errors(report))
        if err is not None:
            print("%s: %s: %s" % (path, where(err), err.message[:300]))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
