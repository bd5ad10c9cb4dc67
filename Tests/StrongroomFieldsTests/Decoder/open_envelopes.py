"""Opens Strongroom envelopes following only the format document
(Sources/StrongroomFields/StrongroomFields.docc/SealedValueFormat.md) and
the keyring format (Keys/README.md), with Python's `cryptography` package.

Usage: python3 open_envelopes.py KEYRING < cases.json > results.json
cases.json: [{"table", "column", "row_key": [{"type": int, "payload": hex}], "envelope": hex, "context": text or null}]
results.json: [{"type": int, "value": hex} | {"error": text}]
"""
import json
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

LABEL = b"strongroom.field.v1"


def read_keyring(path):
    lines = open(path, "rb").read().split(b"\n")
    assert lines[0] == b"strongroom field keyring 1"
    keys = {}
    for line in lines[1:]:
        if line.startswith(b"key "):
            _, key_id, hex_key = line.split(b" ")
            keys[int(key_id)] = bytes.fromhex(hex_key.decode())
    return keys


def bound(name):
    return bytes(b + 32 if 65 <= b <= 90 else b for b in name.encode("utf-8"))


def subkey(master, purpose, table, column, length):
    info = purpose + b"\0" + table + b"\0" + column
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=LABEL, info=info).derive(master)


def open_envelope(keys, envelope, table, column, row_key, context=None):
    if len(envelope) < 6 or envelope[0] != 1 or envelope[1] not in (1, 2):
        raise ValueError("not an envelope")
    algorithm = envelope[1]
    (key_id,) = struct.unpack(">I", envelope[2:6])
    t, c = bound(table), bound(column)
    ad = envelope[:6] + LABEL + struct.pack(">I", len(t)) + t + struct.pack(">I", len(c)) + c
    if algorithm == 1:
        ad += struct.pack(">I", len(row_key))
        for part in row_key:
            payload = bytes.fromhex(part["payload"])
            ad += bytes([part["type"]]) + struct.pack(">I", len(payload)) + payload
    if context is not None:
        ad += struct.pack(">I", len(context.encode("utf-8"))) + context.encode("utf-8")
    if algorithm == 1:
        key = subkey(keys[key_id], b"aes-256-gcm", t, c, 32)
        plain = AESGCM(key).decrypt(envelope[6:18], envelope[18:], ad)
    else:
        key = subkey(keys[key_id], b"aes-256-siv", t, c, 64)
        plain = AESSIV(key).decrypt(envelope[6:], [ad])
    return plain[0], plain[1:]


def main():
    keys = read_keyring(sys.argv[1])
    results = []
    for case in json.load(sys.stdin):
        try:
            kind, value = open_envelope(keys, bytes.fromhex(case["envelope"]), case["table"], case["column"], case["row_key"], case.get("context"))
            results.append({"type": kind, "value": value.hex()})
        except Exception as error:  # every failure is reported, never a value
            results.append({"error": type(error).__name__})
    json.dump(results, sys.stdout)


main()
