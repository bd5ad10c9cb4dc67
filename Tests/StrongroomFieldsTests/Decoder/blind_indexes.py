"""Computes Strongroom blind index values following only the format document
(Sources/StrongroomFields/StrongroomFields.docc/SealedValueFormat.md, "Blind
indexes with names, lengths and transformations"), with Python's standard
library (hmac, hashlib, unicodedata) and `cryptography`'s HKDF.

Usage:
  python3 blind_indexes.py KEYRING < cases.json > results.json
    cases.json: [{"table", "name", "bits", "parts": [{"column", "transformations": [names]}],
                  "values": [{"type": int, "payload": hex} | null], "key_id": int, "context": text or null}]
    results.json: [{"value": hex} | {"null": true} | {"error": text}]
  python3 blind_indexes.py --transform < cases.json > results.json
    cases.json: [{"transformations": [names], "value": {"type", "payload"}}]
    results.json: [{"type", "payload"} | {"error": text}]
  python3 blind_indexes.py --nfkc-casefold-all
    every code point Python's Unicode database assigns (not surrogates), as
    {"unicode": version, "cases": [[code point, hex of the UTF-8 result], …]}
"""
import hashlib
import hmac
import json
import math
import re
import struct
import sys
import unicodedata

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

LABEL = b"strongroom.field.v1"
DERIVATION = b"hmac-sha256-blind-index-v2"
# The White_Space property (PropList.txt): what `trim` removes at both ends.
WHITE_SPACE = set(chr(c) for c in list(range(0x09, 0x0E)) + [0x20, 0x85, 0xA0, 0x1680] + list(range(0x2000, 0x200B))
                  + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def u32(n):
    return struct.pack(">I", n)


def bound(name):
    return bytes(b + 32 if 0x41 <= b <= 0x5A else b for b in name.encode("utf-8"))


def read_keyring(path):
    keys = {}
    for line in open(path, "rb").read().split(b"\n")[1:]:
        if line.startswith(b"key "):
            _, key_id, hex_key = line.split(b" ")
            keys[int(key_id)] = bytes.fromhex(hex_key.decode())
    return keys


class Refused(Exception):
    pass


def as_text(value, allow_integer):
    kind, payload = value
    if kind == 3:
        return payload.decode("utf-8")
    if kind == 1 and allow_integer:
        return str(struct.unpack(">q", payload)[0])
    raise Refused("not text")


def civil_from_days(z):
    # Howard Hinnant's civil_from_days: the proleptic Gregorian calendar.
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if month <= 2 else 0), month


def year_month(value):
    kind, payload = value
    if kind == 3:
        text = payload.decode("utf-8")
        m = re.match(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:\Z|[ T])", text, re.ASCII)
        if not m:
            raise Refused("not a date")
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
        leap = (year % 4 == 0 and year % 100 != 0) or year % 400 == 0
        days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        if not 1 <= month <= 12 or not 1 <= day <= days[month - 1]:
            raise Refused("not a date")
        return year, month
    if kind == 1:
        # Whole days by integer floor division: exact for every INTEGER.
        return civil_from_days(struct.unpack(">q", payload)[0] // 86400)
    if kind == 2:
        seconds = struct.unpack(">d", payload)[0]
        if not math.isfinite(seconds):
            raise Refused("not a date")
    else:
        raise Refused("not a date")
    days = math.floor(seconds / 86400)
    if abs(days) >= 2 ** 52:
        raise Refused("not a date")
    return civil_from_days(days)


def year_text(year):
    return "%04d" % year if 0 <= year < 10000 else str(year)


def transform(name, value):
    text = lambda s: (3, s.encode("utf-8"))
    if name == "trim":
        s = as_text(value, False)
        i, j = 0, len(s)
        while i < j and s[i] in WHITE_SPACE:
            i += 1
        while j > i and s[j - 1] in WHITE_SPACE:
            j -= 1
        return text(s[i:j])
    if name == "nfkc-casefold":
        s = as_text(value, False)
        if any(unicodedata.category(c) == "Cn" for c in s):
            raise Refused("a character Unicode 14.0 does not assign")
        return text(unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", s).casefold()))
    if name == "digits":
        digits = "".join(c for c in as_text(value, True) if "0" <= c <= "9")
        if not digits:
            raise Refused("no digit")
        return text(digits)
    m = re.fullmatch(r"(prefix|suffix):([1-9][0-9]*)", name)
    if m:
        n, s = int(m.group(2)), as_text(value, True)
        return text(s[:n] if m.group(1) == "prefix" else s[-n:])
    if name == "year":
        return text(year_text(year_month(value)[0]))
    if name == "year-month":
        year, month = year_month(value)
        return text(year_text(year) + "-%02d" % month)
    raise ValueError("unknown transformation " + name)


def index_key(master, table, name, bits, parts):
    info = DERIVATION + b"\0" + u32(len(bound(table))) + bound(table) + u32(len(bound(name))) + bound(name)
    info += u32(bits) + u32(len(parts))
    for column, transformations in parts:
        names = ",".join(transformations).encode("ascii")
        info += u32(len(bound(column))) + bound(column) + u32(len(names)) + names
    return HKDF(hashes.SHA256(), 32, LABEL, info).derive(master)


def index_value(keys, key_id, table, name, bits, parts, values, context=None):
    if any(v is None for v in values):
        return None
    message = b"" if context is None else u32(len(context.encode())) + context.encode()
    message += u32(len(parts))
    for (column, transformations), value in zip(parts, values):
        for t in transformations:
            value = transform(t, value)
        encoded = bytes([value[0]]) + value[1]
        message += u32(len(encoded)) + encoded
    tag = bytearray(hmac.new(index_key(keys[key_id], table, name, bits, parts), message, hashlib.sha256).digest()[: (bits + 7) // 8])
    if bits % 8:
        tag[-1] &= (0xFF << (8 - bits % 8)) & 0xFF
    return u32(key_id) + bytes(tag)


def decode_value(v):
    return None if v is None else (v["type"], bytes.fromhex(v["payload"]))


def main():
    if sys.argv[1] == "--nfkc-casefold-all":
        cases = []
        for c in range(0x110000):
            ch = chr(c)
            if unicodedata.category(ch) in ("Cn", "Cs"):
                continue
            cases.append([c, transform("nfkc-casefold", (3, ch.encode("utf-8")))[1].hex()])
        json.dump({"unicode": unicodedata.unidata_version, "cases": cases}, sys.stdout)
        return
    if sys.argv[1] == "--transform":
        results = []
        for case in json.load(sys.stdin):
            value = decode_value(case["value"])
            try:
                for t in case["transformations"]:
                    value = transform(t, value)
                results.append({"type": value[0], "payload": value[1].hex()})
            except Refused as refusal:
                results.append({"error": str(refusal)})
        json.dump(results, sys.stdout)
        return
    keys = read_keyring(sys.argv[1])
    results = []
    for case in json.load(sys.stdin):
        parts = [(p["column"], p["transformations"]) for p in case["parts"]]
        try:
            value = index_value(keys, case["key_id"], case["table"], case["name"], case["bits"], parts,
                                [decode_value(v) for v in case["values"]], case.get("context"))
            results.append({"null": True} if value is None else {"value": value.hex()})
        except Refused as refusal:
            results.append({"error": str(refusal)})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
