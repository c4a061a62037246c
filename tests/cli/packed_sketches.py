#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A reader of the report's packed sketches written from
docs/report-schema.md ("Packed sketches: the layout, version 1") alone,
with Python's base64, struct and zlib: it proves the document describes
what keyshift writes, and checks what the sketches say against the
report's own figures.

    packed_sketches.py REPORT.json

For each topic: every `merge.*.packed` string decodes (canonical base64,
version 1, the kind of its field, length 16 + L, zlib's CRC-32), each
payload holds exactly its entries; then
  - the HyperLogLog: p = 14, registers 0..51; when the key sample is not
    full (every key is in it), the registers are exactly those its keys'
    hash64s set (register: the high 14 bits; value: 1 + the leading zeros
    of the other 50);
  - the key sample: at most `capacity` entries, distinct hash64s; when not
    full, as many as keys.distinct_estimate, messages summing to
    keys.hashed;
  - the hot keys: at most `capacity` counters, busiest first (count
    descending); the topic's hot_keys[] are the first counters: same
    key_hex, key_length, messages (count), messages_error (error), bytes.
Prints one line per topic; exits 1 at the first disagreement.
"""
import base64
import binascii
import json
import struct
import sys
import zlib

P = 14
REG = 1 << P
KINDS = {1: "HyperLogLog", 2: "key sample", 3: "hot keys"}


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def varint(b, at):
    """Unsigned LEB128: 7 bits a byte, low group first, at most 10."""
    v = shift = 0
    for i in range(10):
        if at >= len(b):
            raise ValueError("payload ends in a varint")
        c = b[at]
        at += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            if v >= 1 << 63:
                raise ValueError("varint past 2^63 - 1")
            return v, at
        shift += 7
    raise ValueError("varint longer than 10 bytes")


def unpack(s, kind, where):
    try:
        raw = base64.b64decode(s, validate=True)
    except binascii.Error as e:
        fail(f"{where}: not base64: {e}")
    if base64.b64encode(raw).decode() != s:
        fail(f"{where}: not canonical base64")
    if len(raw) < 16:
        fail(f"{where}: {len(raw)} bytes")
    version, k, form, param, entries, length = struct.unpack_from("<BBBBII", raw)
    if version != 1:
        fail(f"{where}: layout version {version}")
    if k != kind:
        fail(f"{where}: kind {k}, expected {kind} ({KINDS[kind]})")
    if len(raw) != 16 + length:
        fail(f"{where}: {len(raw)} bytes, header says 16 + {length}")
    (crc,) = struct.unpack_from("<I", raw, 12 + length)
    if crc != zlib.crc32(raw[: 12 + length]):
        fail(f"{where}: CRC-32 {crc:08x} != zlib's {zlib.crc32(raw[:12 + length]):08x}")
    return form, param, entries, raw[12 : 12 + length]


def hll_registers(s, where):
    form, param, entries, pl = unpack(s, 1, where)
    if param != P:
        fail(f"{where}: p = {param}")
    reg = [0] * REG
    if form == 0:  # 6 bits a register, one little-endian bit string
        if entries != REG or len(pl) != REG * 6 // 8:
            fail(f"{where}: dense {entries} registers in {len(pl)} bytes")
        bits = int.from_bytes(pl, "little")
        for i in range(REG):
            reg[i] = (bits >> (6 * i)) & 63
    elif form == 1:  # G << 4 | V, varint when G = 15, byte when V = 0
        at, prev = 0, -1
        for _ in range(entries):
            b = pl[at]
            at += 1
            gap, v = b >> 4, b & 15
            if gap == 15:
                extra, at = varint(pl, at)
                gap = 15 + extra
            if v == 0:
                v = pl[at]
                at += 1
            idx = prev + 1 + gap
            if idx >= REG:
                fail(f"{where}: register {idx}")
            reg[idx] = v
            prev = idx
        if at != len(pl):
            fail(f"{where}: {len(pl) - at} bytes after the entries")
    else:
        fail(f"{where}: form {form}")
    if any(v > 64 - P + 1 for v in reg):
        fail(f"{where}: a register above 51")
    return form, reg


def key_sample(s, where):
    form, param, entries, pl = unpack(s, 2, where)
    if form or param:
        fail(f"{where}: form {form}, parameter {param}")
    out, at = [], 0
    for _ in range(entries):
        h64, ph = struct.unpack_from("<QI", pl, at)
        at += 12
        msgs, at = varint(pl, at)
        nbytes, at = varint(pl, at)
        out.append((h64, ph, msgs, nbytes))
    if at != len(pl):
        fail(f"{where}: {len(pl) - at} bytes after the entries")
    return out


def hot_key_rows(cols):
    """A topic's hot_keys, columns in the file, as one dict per key."""
    n = len(cols.get("key", []))
    return [{k: (v[i] if isinstance(v, list) else
                 {c: col[i] for c, col in v.items()} if isinstance(v, dict)
                 else v)
             for k, v in cols.items()} for i in range(n)]


def hot_keys(s, where):
    form, param, entries, pl = unpack(s, 3, where)
    if form or param:
        fail(f"{where}: form {form}, parameter {param}")
    out, at = [], 0
    for _ in range(entries):
        kl, at = varint(pl, at)
        key = pl[at : at + min(kl, 128)]
        at += min(kl, 128)
        h64, ph = struct.unpack_from("<QI", pl, at)
        at += 12
        count, at = varint(pl, at)
        err, at = varint(pl, at)
        nbytes, at = varint(pl, at)
        out.append(dict(key=key, key_length=kl, hash64=h64, phash=ph,
                        count=count, error=err, bytes=nbytes))
    if at != len(pl):
        fail(f"{where}: {len(pl) - at} bytes after the entries")
    return out


def hll_value(h64):
    """The register and value keyshift's HyperLogLog gives a 64-bit key
    hash (core/sketch/ks_hll.c, the usual HyperLogLog): the register is
    the high p bits, the value 1 + the leading zeros of the other 50 (51
    when they are all 0)."""
    rest = h64 & ((1 << (64 - P)) - 1)
    return h64 >> (64 - P), 64 - P + 1 - rest.bit_length()


def check_topic(name, t):
    where = f"topics.{name}.merge"
    m = t["merge"]
    form, reg = hll_registers(m["distinct_hll"]["packed"], where + ".distinct_hll.packed")
    if m["distinct_hll"]["p"] != P:
        fail(f"{where}.distinct_hll.p")
    ks = m["key_sample"]
    sample = key_sample(ks["packed"], where + ".key_sample.packed")
    cap = ks["capacity"]
    if len(sample) > cap or len({e[0] for e in sample}) != len(sample):
        fail(f"{where}.key_sample: {len(sample)} entries, capacity {cap}, or a hash twice")
    nonzero = sum(1 for v in reg if v)
    distinct = t["keys"]["distinct_estimate"]
    full = len(sample) >= cap
    if not full:
        if len(sample) != distinct:
            fail(f"{where}: {len(sample)} sampled keys, distinct_estimate {distinct}")
        if sum(e[2] for e in sample) != t["keys"]["hashed"] and not t.get("analysis", {}).get("sampled"):
            fail(f"{where}: sampled messages {sum(e[2] for e in sample)} != keys.hashed {t['keys']['hashed']}")
        if nonzero > len(sample):
            fail(f"{where}: {nonzero} registers set by {len(sample)} keys")
        # the registers come from the same 64-bit hashes: every sampled
        # key's register holds at least its value, and nothing else is set
        seen = {}
        for e in sample:
            idx, v = hll_value(e[0])
            seen[idx] = max(seen.get(idx, 0), v)
        if any(reg[i] != v for i, v in seen.items()) or nonzero != len(seen):
            fail(f"{where}: the registers are not the sampled keys' hashes'")
    hk = m["hot_keys"]
    hot = hot_keys(hk["packed"], where + ".hot_keys.packed")
    if len(hot) > hk["capacity"]:
        fail(f"{where}.hot_keys: {len(hot)} counters, capacity {hk['capacity']}")
    if any(hot[i]["count"] < hot[i + 1]["count"] for i in range(len(hot) - 1)):
        fail(f"{where}.hot_keys: not busiest first")
    for i, h in enumerate(hot_key_rows(t.get("hot_keys") or {})):
        c = hot[i]
        if (h["key_hex"] != c["key"].hex() or h["key_length"] != c["key_length"]
                or h["messages"] != c["count"] or h["messages_error"] != c["error"]
                or h["bytes"] != c["bytes"]):
            fail(f"topics.{name}.hot_keys[{i}] {h['key_hex']} {h['messages']} is not "
                 f"counter {i} of merge.hot_keys ({c['key'].hex()} {c['count']})")
    print(f"{name}: HyperLogLog {'sparse' if form else 'dense'} ({nonzero} registers set), "
          f"key sample {len(sample)}/{cap}{' full' if full else ''}, "
          f"hot keys {len(hot)}/{hk['capacity']}: ok")


def main():
    report = json.load(open(sys.argv[1]))
    topics = report["topics"]
    if not topics:
        fail("no topic")
    for name, t in topics.items():
        check_topic(name, t)


if __name__ == "__main__":
    main()
