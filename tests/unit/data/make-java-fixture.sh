#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates tests/unit/data/java-keys.tsv, the fixture of
# tests/unit/test_keyenc.c and tests/unit/test_clients.c: real key bytes from
# Apache Kafka's own serializers and the partition Kafka's Java producer
# gives each of them, so the unit tests need no Java at run time.
#
#   tests/unit/data/make-java-fixture.sh          # writes the fixture
#   tests/unit/data/make-java-fixture.sh -        # writes it to stdout
#
# Needs python3 (builds the corpus), Go (tests/oracles/avro: Schema Registry
# framed Avro keys through github.com/hamba/avro) and what
# tests/broker/java-oracle.sh needs (java 17, mvn; kafka-clients from Maven
# Central). The corpus is seeded: the output only changes when this script,
# the Avro library or kafka-clients (KS_KAFKA_VERSION) changes.
#
# Each corpus row states what the classifier must say and the logical value
# it must give, by construction (an int32 row is `int32_be` with the value
# in decimal, a json.dumps() row is `json_string`, ...). Where a row's bytes
# fall under a precedence rule of core/model/ks_keyenc.h instead (an int32 whose
# four bytes are printable is text), the row says so explicitly; random
# values are drawn so that they do not.
#
# Output columns: enc, logical_hex ("-": no logical value), then the
# java-oracle `keys` columns: line, type, serializer, key_hex, murmur2,
# positive, and the partition at each count (header "n=<count>").
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$here/java-keys.tsv}
counts=1,2,3,4,5,6,7,8,9,10,11,12,16,24,32,64,100,1000

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The corpus: rows.tsv (enc, logical, type, value) and avro.in (the
#    Schema Registry rows, id<TAB>avro type<TAB>value).
python3 - "$tmp" <<'PY'
import json, random, re, struct, sys, unicodedata, uuid

tmp = sys.argv[1]
rnd = random.Random(20250601)
rows = []   # (enc, logical or None, type, value)
avro = []   # (schema id, avro type, value)

def clean_text(b):
    """Valid UTF-8 without Unicode Cc characters (rule 2 of ks_keyenc.h)."""
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any(unicodedata.category(c) == "Cc" for c in s)

def text_expect(b):
    """Rules 2-4 of ks_keyenc.h for clean text: (encoding, logical)."""
    s = b.decode("utf-8")
    if re.fullmatch(r"0|-?[1-9][0-9]{0,18}", s) and -2**63 <= int(s) < 2**63:
        return "decimal", s
    if len(s) >= 2 and s[0] == s[-1] == '"':
        try:
            v = json.loads(s)
            v.encode("utf-8")           # a lone surrogate cannot be
        except (ValueError, UnicodeEncodeError):
            v = None
        if isinstance(v, str):
            return "json_string", canon(v) if v and "\0" not in v else None
    return "text", canon(s)

def canon(s):
    """UUID-shaped text is lower-cased, as UUID.toString() writes it."""
    if re.fullmatch(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", s):
        return s.lower()
    return s

def row(enc, logical, typ, value):
    # Cross-check the hand-written expectation of every text row.
    if typ in ("string", "uuid") and value and clean_text(value.encode()):
        assert (enc, logical) == text_expect(value.encode()), (enc, logical, value)
    rows.append((enc, logical, typ, value))

def sr(schema_id, typ, value, logical):
    avro.append((schema_id, typ, value))
    row("schema_registry", logical, "avro", len(avro) - 1)

def as_int(typ, v):
    """An int32/int64 row: int32_be/int64_be, or what rule 2 makes of its
    bytes when they are clean text (an MMSI >= 2^29 often is)."""
    b = struct.pack(">i" if typ == "int32" else ">q", v)
    if clean_text(b):
        row(*text_expect(b), typ, str(v))
    else:
        row("int32_be" if typ == "int32" else "int64_be", str(v), typ, str(v))

def number(v, ids=(1,)):
    """One number through every serializer that can write it."""
    s = str(v)
    row("decimal", s, "string", s)
    row("json_string", s, "string", json.dumps(s))
    if -2**31 <= v < 2**31:
        as_int("int32", v)
        sr(rnd.choice(ids), "int", s, s)
    as_int("int64", v)
    sr(rnd.choice(ids), "long", s, s)
    sr(rnd.choice(ids), "string", s, s)

def no_text_int(bits):
    while True:
        v = rnd.randrange(-2**(bits - 1), 2**(bits - 1))
        if not clean_text(struct.pack(">i" if bits == 32 else ">q", v)):
            return v

ids = (1, 42, 100001, 2147483647)

# MMSIs (ship identities, 9 digits, MID 201..775), the motivating case.
for m in [211234567, 366999999, 244123456] + [
        rnd.randrange(201000000, 776000000) for _ in range(25)]:
    number(m, ids)
# Small, negative and edge ints and longs.
for v in [0, 1, -1, 42, -42, 127, 128, 255, 256, 65535, 2147483647,
          -2147483648, -211234567, 2**31, -2**31 - 1, 1717171717171,
          1790000000000000000, 2**63 - 1, -2**63]:
    number(v, ids)
for _ in range(12):
    number(no_text_int(32), ids)
for _ in range(12):
    number(no_text_int(64), ids)

# UUIDs: Kafka's UUIDSerializer writes the 36-char text; raw 16 bytes are
# uuid_binary; upper case text and JSON map to the same logical value.
uuids = [uuid.UUID(int=rnd.getrandbits(128), version=4) for _ in range(20)]
uuids += [uuid.UUID(int=0), uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff"),
          uuid.UUID("c232ab00-9414-11ec-b3c8-9f6bdeced846"),   # v1, RFC 9562
          uuid.UUID("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"),   # v7
          uuid.UUID("00000000-7fff-4abc-8def-0123456789ab")]   # 0x00 + id 0
for u in uuids:
    s = str(u)
    row("text", s, "uuid", s)
    row("text", s, "string", s.upper())
    row("json_string", s, "string", json.dumps(s))
    row("uuid_binary", s, "hex", u.hex)
    sr(rnd.choice(ids), "string", s.upper(), s)
# 16 bytes that start like a Schema Registry key (0x00, id 1): an RFC 9562
# v4 UUID stays uuid_binary; without the UUID bits it is schema_registry.
row("uuid_binary", "00000000-014d-4abc-8def-0123456789ab", "hex",
    "00000000014d4abc8def0123456789ab")
row("schema_registry", None, "hex", "0000000001ff00aa00bb00cc00dd00ee")

# Unicode text, as StringSerializer and as JSON (raw and \u-escaped).
for s in ["München", "東京都", "🚢 MS Ærøskøbing", "Ελλάδα", "مرحبا",
          "naïve café", "e\u0301", "👨\u200d👩\u200d👧", "𝄞 clef", "ℵ₀",
          "abc", "A", "vessel-42", "order/2024/0001", " 42", "a b"]:
    row("text", s, "string", s)
    row("json_string", s, "string", json.dumps(s, ensure_ascii=False))
    row("json_string", s, "string", json.dumps(s))  # \uXXXX, surrogates
    sr(rnd.choice(ids), "string", s, s)

# Strings that are text, not numbers (rule 3) and not JSON (rule 4).
for s in ["007", "+7", "-0", "00", "1e3", "1.5", "0x1f", "١٢٣",
          "12345678901234567890", "9223372036854775808",
          "-9223372036854775809", '"unterminated', 'a"b"', '"a\\qb"',
          '"\\ud83d"', '"\\udc00x"', '"\\u12"', '"abc\\"', '"x"y"', '"']:
    row("text", s, "string", s)
for s in ["9223372036854775807", "-9223372036854775808", "1234", "0"]:
    row("decimal", s, "string", s)
# JSON string literals with escapes, and values that have no logical key.
row("json_string", "line\nbreak", "string", json.dumps("line\nbreak"))
row("json_string", 'say "hi" \\ /', "string", '"say \\"hi\\" \\\\ \\/"')
row("json_string", "\b\f\r\t", "string", '"\\b\\f\\r\\t"')
row("json_string", "😀", "string", '"\\uD83D\\uDE00"')
row("json_string", None, "string", '""')
row("json_string", None, "string", '"\\u0000"')
row("empty", None, "string", "")
# Control characters make a string binary (rules 2 and 8).
row("binary", None, "string", "a\tb")
row("binary", None, "string", "next\u0085line")
row("binary", None, "string", "delete\u007f")

# Precedence: text wins over int32/int64 (rule 2).
row("decimal", "1234", "int32", str(0x31323334))
row("text", "ABCD", "int32", str(0x41424344))
row("text", "éé", "int32", str(struct.unpack(">i", "éé".encode())[0]))
row("decimal", "12345678", "int64", str(0x3132333435363738))
row("text", "abcdefgh", "int64", str(0x6162636465666768))
# Not text, so fixed widths: F4 90 80 80 is above U+10FFFF.
row("int32_be", str(struct.unpack(">i", bytes.fromhex("f4908080"))[0]),
    "hex", "f4908080")
row("int32_be", "0", "hex", "00000000")
# 8 bytes starting like a Schema Registry key are int64_be (rule 5), even
# a real one: Avro "DE" (a 2-letter string) and the Avro int 65535.
row("int64_be", str(0x010a0b0c), "hex", "00000000010a0b0c")
sr(1, "string", "DE", None)
sr(1, "int", "65535", None)
# Schema Registry framing: id bounds, the shortest key, Avro ambiguities.
row("binary", None, "hex", "0000000001")          # 5 bytes: no payload
row("binary", None, "hex", "000000000002")        # id 0
row("binary", None, "hex", "008000000002")        # id > 2^31-1
row("schema_registry", "1", "hex", "000000000102")
row("schema_registry", None, "hex", "00000000010800")       # protobuf-like
row("schema_registry", None, "hex", "000000000102808080")   # not one value
row("schema_registry", None, "hex", "00000000018000")       # overlong varint
sr(7, "string", "", "0")                  # Avro "" is 0x00: read as int 0
sr(7, "string", "ABCDEFGHIJ", "ABCDEFGHIJ")  # 16 bytes, not a UUID layout
sr(7, "string", "aébcdefgh", "aébcdefgh")    # 16 bytes in UUID layout too
# Invalid UTF-8 and noise.
for h in ["ff", "c080", "eda080", "80", "fe0102", "c3", "e282"]:
    row("binary", None, "hex", h)
for n in list(range(1, 41)) + [64, 100]:
    b = bytes([0xff]) + bytes(rnd.randrange(256) for _ in range(n - 1))
    if n == 4:
        row("int32_be", str(struct.unpack(">i", b)[0]), "hex", b.hex())
    elif n == 8:
        row("int64_be", str(struct.unpack(">q", b)[0]), "hex", b.hex())
    elif n == 16:
        row("uuid_binary", str(uuid.UUID(bytes=b)), "hex", b.hex())
    else:
        row("binary", None, "hex", b.hex())

with open(f"{tmp}/rows.tsv", "w", encoding="utf-8") as f:
    for enc, logical, typ, value in rows:
        lh = logical.encode().hex() if logical is not None else "-"
        if "\n" in str(value):
            raise SystemExit(f"corpus value with a newline: {value!r}")
        f.write(f"{enc}\t{lh}\t{typ}\t{value}\n")
with open(f"{tmp}/avro.in", "w", encoding="utf-8") as f:
    for schema_id, typ, value in avro:
        f.write(f"{schema_id}\t{typ}\t{value}\n")
PY

# 2. Schema Registry framed Avro keys, through hamba/avro.
(cd "$root/tests/oracles/avro" && go run .) <"$tmp/avro.in" >"$tmp/avro.hex"

# 3. The Java corpus (avro rows become hex:), through kafka-clients.
python3 - "$tmp" <<'PY'
import sys
tmp = sys.argv[1]
framed = open(f"{tmp}/avro.hex").read().split()
rows = [l.rstrip("\n").split("\t", 3)
        for l in open(f"{tmp}/rows.tsv", encoding="utf-8")]
with open(f"{tmp}/rows.tsv", "w", encoding="utf-8") as f, \
     open(f"{tmp}/corpus.txt", "w", encoding="utf-8") as c:
    for enc, lh, typ, value in rows:
        if typ == "avro":
            typ, value = "hex", framed[int(value)]
            if len(value) == 16:
                # Rule 5: any 8-byte key that is not text is int64_be, a
                # Schema Registry key with a 3-byte payload too.
                v = int.from_bytes(bytes.fromhex(value), "big", signed=True)
                enc, lh = "int64_be", str(v).encode().hex()
        f.write(f"{enc}\t{lh}\t{typ}\t{value}\n")
        c.write(f"{typ}:{value}\n")
PY
"$root/tests/broker/java-oracle.sh" keys --counts "$counts" \
    <"$tmp/corpus.txt" >"$tmp/java.tsv"

# 4. Join the expectations with Java's answers, line by line.
python3 - "$tmp" "$root" <<'PY' >"$tmp/out.tsv"
import subprocess, sys
tmp, root = sys.argv[1], sys.argv[2]
exp = [l.rstrip("\n").split("\t", 3)[:2]
       for l in open(f"{tmp}/rows.tsv", encoding="utf-8")]
ver = subprocess.run([f"{root}/tests/broker/java-oracle.sh", "version"],
                     capture_output=True, text=True).stdout.strip()
print("# keyshift key-encoding fixture: Apache Kafka serializers and "
      "BuiltInPartitioner.partitionForKey()")
print(f"# java-oracle version: {ver or 'unknown'}")
print("# regenerate: tests/unit/data/make-java-fixture.sh")
java = [l.rstrip("\n") for l in open(f"{tmp}/java.tsv", encoding="utf-8")]
header = [l for l in java if l.startswith("#line")]
body = [l for l in java if l and not l.startswith("#")]
if len(header) != 1 or len(body) != len(exp):
    raise SystemExit(f"java-oracle printed {len(body)} rows for {len(exp)} keys")
print("#enc\tlogical_hex\t" + header[0][1:])
for i, ((enc, lh), l) in enumerate(zip(exp, body)):
    assert int(l.split("\t", 1)[0]) == i + 1, l  # java's line number
    print(f"{enc}\t{lh}\t{l}")
PY
if [[ $out == - ]]; then cat "$tmp/out.tsv"; else mv "$tmp/out.tsv" "$out"; fi
