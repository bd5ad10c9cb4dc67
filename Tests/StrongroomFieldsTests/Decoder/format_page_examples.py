"""Checks the worked examples of "The sealed value format"
(Sources/StrongroomFields/StrongroomFields.docc/SealedValueFormat.md).

Every value the page gives is recomputed here from the inputs the page states,
following the page's rules (written again here, not taken from the library),
with Python's `cryptography` package, and compared with the page's hex: the
demo keyring, the name, plaintext and row key encodings, and each worked
example (HKDF info and subkeys, plaintext, associated data, ciphertext, tag or
synthetic IV, envelope, blind index, row signature). The page's own Python code is then run
on each example too, and a few bindings the page promises are checked (the
row key in table order, another mode, another context do not open).

Usage: python3 format_page_examples.py [PAGE] [--json]
Exit status 0 when everything matches, 1 otherwise (each mismatch printed).
With --json, prints the demo keyring and the examples as read from the page,
as JSON on standard output, for FormatPageTests.swift (which has Strongroom
itself open them); the summary line then goes to standard error.
"""
import hashlib
import hmac as hmac_module
import json
import re
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import blind_indexes  # the transformations, as the page specifies them

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

DEFAULT_PAGE = Path(__file__).resolve().parents[3] / "Sources/StrongroomFields/StrongroomFields.docc/SealedValueFormat.md"
LABEL = b"strongroom.field.v1"

failures = []
compared = 0
definition_checks = []


def expect(where, computed, page_hex):
    """Compares computed bytes with the page's hex (spaces ignored)."""
    global compared
    compared += 1
    text = "".join(page_hex.split())
    if not re.fullmatch(r"(?:[0-9a-f]{2})*", text):
        failures.append(f"{where}: the page's value is not lowercase hex: {page_hex!r}")
    elif text != computed.hex():
        failures.append(f"{where}: the page says {text}, recomputed {computed.hex()}")


def check(where, condition, message):
    global compared
    compared += 1
    if not condition:
        failures.append(f"{where}: {message}")


# The page

def code_blocks(text):
    """(heading, lines) of every fenced code block, with the nearest heading above it."""
    blocks, heading, inside = [], "", None
    for line in text.split("\n"):
        if inside is None:
            if line.startswith("```"):
                inside = []
            elif line.startswith("#"):
                heading = line.lstrip("#").strip()
        elif line.startswith("```"):
            blocks.append((heading, inside))
            inside = None
        else:
            inside.append(line)
    return blocks


def blocks_under(blocks, heading):
    found = [lines for h, lines in blocks if h == heading]
    if not found:
        raise SystemExit(f"format_page_examples: the page has no code block under the heading {heading!r}")
    return found


def entries(lines):
    """`label = value` lines; an indented line continues the value above."""
    items = []
    for line in lines:
        if not line.strip():
            continue
        if line[0].isspace():
            if not items:
                raise SystemExit(f"format_page_examples: a continuation line with nothing above: {line!r}")
            items[-1][1] += " " + line.strip()
            continue
        match = re.fullmatch(r"(.*?)\s+=\s+(.*?)\s*", line)
        if not match:
            raise SystemExit(f"format_page_examples: not a `label = value` line: {line!r}")
        items.append([match.group(1), match.group(2)])
    return items


LITERAL = re.compile(r'INTEGER (-?[0-9]+)|REAL ([-+0-9.eE]+)|TEXT ("(?:[^"\\]|\\.)*")|BLOB x\'((?:[0-9a-f]{2})*)\'|(NULL)')


def literal(text, position=0):
    """A typed value written as the page writes them: (type byte, payload), NULL as (0, b'')."""
    match = LITERAL.match(text, position)
    if not match:
        raise SystemExit(f"format_page_examples: not a typed value: {text[position:]!r}")
    integer, real, string, blob, null = match.groups()
    if integer is not None:
        value = (1, struct.pack(">q", int(integer)))
    elif real is not None:
        value = (2, struct.pack(">d", float(real)))
    elif string is not None:
        value = (3, json.loads(string).encode("utf-8"))
    elif blob is not None:
        value = (4, bytes.fromhex(blob))
    else:
        value = (0, b"")
    return value, match.end()


def literal_list(text):
    """`(A, B, ...)`: a row key."""
    if not (text.startswith("(") and text.endswith(")")):
        raise SystemExit(f"format_page_examples: not a row key: {text!r}")
    body, parts, position = text[1:-1], [], 0
    while position < len(body):
        part, position = literal(body, position)
        parts.append(part)
        if body.startswith(", ", position):
            position += 2
        elif position != len(body):
            raise SystemExit(f"format_page_examples: not a row key: {text!r}")
    return parts


def single_literal(text):
    value, end = literal(text)
    if end != len(text):
        raise SystemExit(f"format_page_examples: not one typed value: {text!r}")
    return value


# The format, as the page gives it

def u32(n):
    return struct.pack(">I", n)


def bound(name):
    return bytes(b + 0x20 if 0x41 <= b <= 0x5A else b for b in name.encode("utf-8"))


def plaintext(value):
    kind, payload = value
    return bytes([kind]) + payload


def row_key_part(parts):
    out = u32(len(parts))
    for kind, payload in parts:
        out += bytes([kind]) + u32(len(payload)) + payload
    return out


def context_part(context):
    return b"" if context is None else u32(len(context.encode("utf-8"))) + context.encode("utf-8")


def info(purpose, table, column):
    return purpose + b"\x00" + bound(table) + b"\x00" + bound(column)


def hkdf(master, info_bytes, length):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=LABEL, info=info_bytes).derive(master)


def associated_data(header, table, column, row_key, context):
    t, c = bound(table), bound(column)
    ad = header + LABEL + u32(len(t)) + t + u32(len(c)) + c
    if header[1] == 1 and row_key is not None:   # None: as if bound to no row, for the checks
        ad += row_key_part(row_key)
    return ad + context_part(context)


def parse_keyring(text):
    """The keyring rules of the page's "The field keyring"; raises on any violation."""
    lines = text.encode("ascii").split(b"\n")
    if lines[0] != b"strongroom field keyring 1":
        raise ValueError("line 1")
    active, keys = None, {}
    for line in lines[1:]:
        if not line:
            continue
        fields = line.decode("ascii").split(" ")
        ident = fields[1] if len(fields) > 1 and re.fullmatch(r"[1-9][0-9]{0,9}", fields[1]) and int(fields[1]) <= 0xFFFFFFFF else None
        if fields[0] == "active" and len(fields) == 2 and ident and active is None:
            active = int(ident)
        elif fields[0] == "key" and len(fields) == 3 and ident and int(ident) not in keys and re.fullmatch(r"[0-9a-f]{64}", fields[2]):
            keys[int(ident)] = bytes.fromhex(fields[2])
        else:
            raise ValueError(f"line {line!r}")
    if active not in keys:
        raise ValueError("active")
    return active, keys


ALGORITHM = {"randomized": 1, "indexed": 1, "deterministic": 2}
INPUTS = {"mode", "key id", "table", "column", "index column", "row key", "context", "value", "nonce"}
OUTPUTS = {"header", "plaintext", "info", "subkey", "AD", "ciphertext", "tag", "synthetic IV", "envelope",
           "index info", "index subkey", "HMAC input", "HMAC-SHA256", "blind index"}


def check_example(name, items, keys, page_code):
    labels = [label for label, _ in items]
    for label in labels:
        check(name, label in INPUTS | OUTPUTS, f"unknown line {label!r}")
        check(name, labels.count(label) == 1, f"{label!r} given more than once")
    given = dict(items)
    mode = given["mode"]
    check(name, mode in ALGORITHM, f"unknown mode {mode!r}")
    algorithm = ALGORITHM.get(mode, 1)
    required = {"mode", "key id", "table", "column", "value", "header", "plaintext", "info", "subkey", "AD", "ciphertext", "envelope"}
    required |= {"row key", "nonce", "tag"} if algorithm == 1 else {"synthetic IV"}
    if mode == "indexed":
        required |= {"index column", "index info", "index subkey", "HMAC input", "HMAC-SHA256", "blind index"}
    missing = required - set(labels)
    if missing:
        failures.append(f"{name}: the page lacks {sorted(missing)}")
        return None
    allowed = required | {"context"}
    for label in set(labels) - allowed:
        failures.append(f"{name}: {label!r} does not belong to a {mode} example")

    key_id = int(given["key id"])
    master = keys[key_id]
    table, column = json.loads(given["table"]), json.loads(given["column"])
    context = json.loads(given["context"]) if "context" in given else None
    value = single_literal(given["value"])
    row_key = literal_list(given["row key"]) if algorithm == 1 else []

    header = bytes([1, algorithm]) + u32(key_id)
    expect(f"{name}, header", header, given["header"])
    plain = plaintext(value)
    expect(f"{name}, plaintext", plain, given["plaintext"])
    purpose, length = (b"aes-256-gcm", 32) if algorithm == 1 else (b"aes-256-siv", 64)
    info_bytes = info(purpose, table, column)
    expect(f"{name}, info", info_bytes, given["info"])
    key = hkdf(master, info_bytes, length)
    expect(f"{name}, subkey", key, given["subkey"])
    ad = associated_data(header, table, column, row_key, context)
    expect(f"{name}, AD", ad, given["AD"])
    if algorithm == 1:
        nonce = bytes.fromhex("".join(given["nonce"].split()))
        check(name, len(nonce) == 12, "the nonce is not 12 bytes")
        sealed = AESGCM(key).encrypt(nonce, plain, ad)
        expect(f"{name}, ciphertext", sealed[:-16], given["ciphertext"])
        expect(f"{name}, tag", sealed[-16:], given["tag"])
        envelope = header + nonce + sealed
    else:
        sealed = AESSIV(key).encrypt(plain, [ad])
        expect(f"{name}, synthetic IV", sealed[:16], given["synthetic IV"])
        expect(f"{name}, ciphertext", sealed[16:], given["ciphertext"])
        envelope = header + sealed
    check(name, len(envelope) == 6 + (12 + 16 if algorithm == 1 else 16) + len(plain), "the envelope is not header, body and plaintext-long ciphertext")
    expect(f"{name}, envelope", envelope, given["envelope"])

    blind = None
    if mode == "indexed":
        index_info = info(b"hmac-sha256-blind-index", table, column)
        expect(f"{name}, index info", index_info, given["index info"])
        index_key = hkdf(master, index_info, 32)
        expect(f"{name}, index subkey", index_key, given["index subkey"])
        message = context_part(context) + plain
        expect(f"{name}, HMAC input", message, given["HMAC input"])
        mac = hmac.HMAC(index_key, hashes.SHA256())
        mac.update(message)
        tag = mac.finalize()
        expect(f"{name}, HMAC-SHA256", tag, given["HMAC-SHA256"])
        blind = u32(key_id) + tag[:16]
        expect(f"{name}, blind index", blind, given["blind index"])
        # The companion column's name plays no part: the same index whatever it is.
        check(name, json.loads(given["index column"]) != column, "the index column is the sealed column")

    # What the page promises about bindings: these must not open.
    def opens(ad_bytes):
        try:
            if algorithm == 1:
                AESGCM(key).decrypt(envelope[6:18], envelope[18:], ad_bytes)
            else:
                AESSIV(key).decrypt(envelope[6:], [ad_bytes])
            return True
        except InvalidTag:
            return False

    check(name, opens(ad), "the envelope does not open with its own AD")
    if len(row_key) > 1:
        check(name, not opens(associated_data(header, table, column, list(reversed(row_key)), context)),
              "the envelope opens with the row key in another order")
    check(name, not opens(associated_data(header, table, column, row_key, None if context else "other-tenant")),
          "the envelope opens with another context")
    if algorithm == 1:
        check(name, not opens(associated_data(header, table, column, None, context)), "the envelope opens bound to no row")

    # The page's own Python code, on the page's example.
    python_row_key = [python_value(part) for part in row_key]
    python_value_ = python_value(value)
    try:
        kind, payload = page_code["open_envelope"]({key_id: master}, envelope, table, column, mode, python_row_key, context)
        check(name, bytes([kind]) + payload == plain, "the page's open_envelope opens it to another value")
    except Exception as error:
        failures.append(f"{name}: the page's open_envelope fails: {type(error).__name__}: {error}")
    other_mode = "deterministic" if algorithm == 1 else "randomized"
    try:
        page_code["open_envelope"]({key_id: master}, envelope, table, column, other_mode, python_row_key, context)
        failures.append(f"{name}: the page's open_envelope opens it as a {other_mode} value")
    except ValueError:
        pass
    if blind is not None:
        computed = page_code["blind_index"]({key_id: master}, key_id, python_value_, table, column, context)
        check(name, computed == blind, "the page's blind_index gives another index")

    return {
        "name": name, "mode": mode, "key_id": key_id, "table": table, "column": column, "context": context,
        "row_key": [{"type": kind, "payload": payload.hex()} for kind, payload in row_key],
        "value": {"type": value[0], "payload": value[1].hex()},
        "envelope": envelope.hex(), "blind_index": blind.hex() if blind is not None else None,
    }


def check_index_example(name, items, keys):
    """Example 5 and on: a named blind index, recomputed line by line from its inputs."""
    given = dict(items)
    required = {"key id", "table", "name", "bits", "parts", "index info", "index key", "HMAC input", "HMAC-SHA256", "index value"}
    missing = required - set(given)
    check(name, not missing and ("value" in given) != ("values" in given), f"the page lacks {sorted(missing)} or a value")
    if missing:
        return
    key_id, bits = int(given["key id"]), int(given["bits"])
    table, index_name = json.loads(given["table"]), json.loads(given["name"])
    parts = []
    for part in given["parts"].split("; "):
        column, _, names = part.partition(": ")
        parts.append((column, [n for n in names.split(",") if n]))
    if "value" in given:
        values = [single_literal(given["value"])]
    else:
        values, position, text = [], 0, given["values"]
        while position < len(text):
            value, position = literal(text, position)
            values.append(value)
            if text.startswith(", ", position):
                position += 2
    check(name, len(values) == len(parts), "one value per part")
    index_info = b"hmac-sha256-blind-index-v2\x00" + u32(len(bound(table))) + bound(table) + u32(len(bound(index_name))) + bound(index_name)
    index_info += u32(bits) + u32(len(parts))
    for column, names in parts:
        t = ",".join(names).encode("ascii")
        index_info += u32(len(bound(column))) + bound(column) + u32(len(t)) + t
    expect(f"{name}, index info", index_info, given["index info"])
    key = hkdf(keys[key_id], index_info, 32)
    expect(f"{name}, index key", key, given["index key"])
    message = u32(len(parts))
    for (column, names), value in zip(parts, values):
        for transformation in names:
            value = blind_indexes.transform(transformation, value)
        encoded = plaintext(value)
        message += u32(len(encoded)) + encoded
    if "transformed" in given and len(values) == 1:
        expect(f"{name}, transformed", encoded, given["transformed"])
    expect(f"{name}, HMAC input", message, given["HMAC input"])
    mac = hmac_module.new(key, message, hashlib.sha256).digest()
    expect(f"{name}, HMAC-SHA256", mac, given["HMAC-SHA256"])
    tag = bytearray(mac[: (bits + 7) // 8])
    if bits % 8:
        tag[-1] &= (0xFF << (8 - bits % 8)) & 0xFF
    expect(f"{name}, index value", u32(key_id) + bytes(tag), given["index value"])
    if "definition check" in given:
        check_mac = hmac_module.new(key, b"strongroom blind index definition check", hashlib.sha256).digest()
        expect(f"{name}, definition check", u32(key_id) + check_mac[:16], given["definition check"])
        definition_checks.append({"keyID": key_id, "table": table, "name": index_name, "bits": bits,
                                  "check": (u32(key_id) + check_mac[:16]).hex()})


def check_signature_example(name, items, keys):
    """Example 7: a row signature, recomputed line by line from its inputs."""
    given = dict(items)
    required = {"key id", "table", "signature column", "row key", "covered", "header", "info", "mac key", "message", "HMAC-SHA256", "signature"}
    missing = required - set(given)
    check(name, not missing and set(given) == required, f"the page lacks {sorted(missing)} or has more")
    if missing:
        return None
    key_id = int(given["key id"])
    table, column = json.loads(given["table"]), json.loads(given["signature column"])
    row_key = literal_list(given["row key"])
    covered, position, text = [], 0, given["covered"]
    while position < len(text):
        match = re.compile(r"([^:\s]+): ").match(text, position)
        if not match:
            raise SystemExit(f"format_page_examples: not `name: value` in covered: {text[position:]!r}")
        value, position = literal(text, match.end())
        covered.append((match.group(1), value))
        if text.startswith(" ", position):
            position += 1
    names = [bound(n) for n, _ in covered]
    check(name, names == sorted(names), "the covered columns are not in the byte order of their bound names")
    header = bytes([1, 3]) + u32(key_id)
    expect(f"{name}, header", header, given["header"])
    info_bytes = info(b"hmac-sha256-row-signature", table, column)
    expect(f"{name}, info", info_bytes, given["info"])
    key = hkdf(keys[key_id], info_bytes, 32)
    expect(f"{name}, mac key", key, given["mac key"])
    t, c = bound(table), bound(column)
    message = header + LABEL + u32(len(t)) + t + u32(len(c)) + c + row_key_part(row_key) + u32(len(covered))
    for (column_name, (kind, payload)) in covered:
        n = bound(column_name)
        message += u32(len(n)) + n + bytes([kind]) + u32(len(payload)) + payload
    expect(f"{name}, message", message, given["message"])
    mac = hmac_module.new(key, message, hashlib.sha256).digest()
    expect(f"{name}, HMAC-SHA256", mac, given["HMAC-SHA256"])
    expect(f"{name}, signature", header + mac, given["signature"])
    check(name, len(header + mac) == 38, "a row signature is 38 bytes")
    # Bound to the row: another key, another value, another order do not verify.
    other = message.replace(row_key_part(row_key), row_key_part([(1, struct.pack(">q", 43))]))
    check(name, hmac_module.new(key, other, hashlib.sha256).digest() != mac, "verifies under another row key")
    return {"table": table, "signatureColumn": column, "rowKey": [{"type": k, "payload": p.hex()} for k, p in row_key],
            "covered": [{"name": n, "type": k, "payload": p.hex()} for n, (k, p) in covered], "signature": (header + mac).hex()}


def python_value(value):
    """A typed value as the page's Python code takes it."""
    kind, payload = value
    if kind == 1:
        return struct.unpack(">q", payload)[0]
    if kind == 2:
        return struct.unpack(">d", payload)[0]
    if kind == 3:
        return payload.decode("utf-8")
    return payload


def main():
    arguments = [a for a in sys.argv[1:] if a != "--json"]
    as_json = "--json" in sys.argv[1:]
    page = Path(arguments[0]) if arguments else DEFAULT_PAGE
    text = page.read_text(encoding="utf-8")
    blocks = code_blocks(text)

    # Names, plaintexts and row key parts.
    for label, value in entries(blocks_under(blocks, "Names")[0]):
        expect(f"Names, {label}", bound(json.loads(label)), value)
    for label, value in entries(blocks_under(blocks, "Plaintext")[0]):
        expect(f"Plaintext, {label}", plaintext(single_literal(label)), value)
    row_key_blocks = blocks_under(blocks, "The row key part")
    for label, value in entries(row_key_blocks[-1]):
        if label.startswith("("):
            expect(f"Row key, {label}", row_key_part(literal_list(label)), value)
        else:
            kind, payload = single_literal(label)
            expect(f"Row key part, {label}", bytes([kind]) + u32(len(payload)) + payload, value)

    # The demo keyring.
    keyring_text = "\n".join(blocks_under(blocks, "Worked examples")[0]) + "\n"
    active, keys = parse_keyring(keyring_text)
    check("Demo keyring", active == 1 and keys[1] == bytes(range(32)), "is not key 1 = 00 01 ... 1f, active")

    # The check value of "The keys the database knows".
    key_checks = []
    given = dict(entries(blocks_under(blocks, "The keys the database knows")[-1]))
    check_info = b"key-check\x00" + u32(1)
    expect("The keys the database knows, info", check_info, given.get("info", ""))
    check_value = hkdf(keys[1], check_info, 16)
    expect("The keys the database knows, check value", check_value, given.get("check value", ""))
    key_checks.append({"keyID": 1, "check": check_value.hex()})

    # The page's Python code.
    page_code = {}
    exec("\n".join(blocks_under(blocks, "Example in Python")[0]), page_code)

    examples, signatures = [], []
    for heading, lines in blocks:
        if heading.startswith("Example ") and heading != "Example in Python":
            if any(label == "bits" for label, _ in entries(lines)):
                check_index_example(heading, entries(lines), keys)
                continue
            if any(label == "signature column" for label, _ in entries(lines)):
                signature = check_signature_example(heading, entries(lines), keys)
                if signature:
                    signatures.append(signature)
                continue
            example = check_example(heading, entries(lines), keys, page_code)
            if example:
                examples.append(example)
    modes = {example["mode"] for example in examples}
    check("Worked examples", modes == set(ALGORITHM), f"not one example per mode: {sorted(modes)}")
    check("Worked examples", len(signatures) >= 1, "no row signature example")

    if failures:
        for failure in failures:
            print(failure, file=sys.stderr)
        print(f"{len(failures)} of {compared} checks do not match the page", file=sys.stderr)
        sys.exit(1)
    summary = f"{len(examples)} examples checked ({compared} checks against {page.name})"
    if as_json:
        json.dump({"keyring": keyring_text, "examples": examples, "signatures": signatures,
                   "keyChecks": key_checks, "definitionChecks": definition_checks}, sys.stdout)
        print(summary, file=sys.stderr)
    else:
        print(summary)


main()
