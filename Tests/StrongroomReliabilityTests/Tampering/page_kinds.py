#!/usr/bin/env python3
"""Prints the kind of every page of a SQLCipher database, as JSON.

usage: page_kinds.py KEY_FILE DATABASE [PAGE_SIZE RESERVED_BYTES]

The tampering tests flip bytes in pages of each kind; SQLCipher 3.4.1 has no
dbstat table, so this decrypts each page (AES-256-CBC with the raw key from
the key file, SQLCipher 3's defaults: 1024-byte pages, 48 reserved bytes:
IV then HMAC) and reads the b-tree page type, the freelist from the header,
and the overflow chains from the b-tree cells' absence: any page that is not
a b-tree page or on the freelist is an overflow page. Prints
{"1": "header page", "2": "table leaf", ...}. It only reads. SQLCipher 4's
defaults are 4096 80 (the IV, then a 64-byte HMAC-SHA512): pass them. Page
decryption needs no HMAC key, so only the sizes differ.
"""
import json
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

PAGE, RESERVE = 1024, 48


def main():
    global PAGE, RESERVE
    if len(sys.argv) == 5:
        PAGE, RESERVE = int(sys.argv[3]), int(sys.argv[4])
    key = bytes.fromhex(open(sys.argv[1]).read().strip())
    data = open(sys.argv[2], "rb").read()
    pages = len(data) // PAGE

    def plain(n):
        page = data[(n - 1) * PAGE:n * PAGE]
        iv = page[PAGE - RESERVE:PAGE - RESERVE + 16]
        start = 16 if n == 1 else 0
        decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
        body = decryptor.update(page[start:PAGE - RESERVE]) + decryptor.finalize()
        return (b"SQLite format 3\0" + body) if n == 1 else body

    first = plain(1)
    if first[16:18] != PAGE.to_bytes(2, "big"):
        sys.exit("page_kinds.py: page 1 does not decrypt to a header of the given page size: wrong key or settings")
    kinds = {1: "header page (page 1: salt, schema root)"}
    trunk = int.from_bytes(first[32:36], "big")
    while trunk:
        kinds[trunk] = "freelist trunk"
        page = plain(trunk)
        count = int.from_bytes(page[4:8], "big")
        for i in range(count):
            kinds[int.from_bytes(page[8 + 4 * i:12 + 4 * i], "big")] = "freelist leaf"
        trunk = int.from_bytes(page[0:4], "big")
    names = {0x0D: "table leaf", 0x05: "table interior", 0x0A: "index leaf", 0x02: "index interior"}
    for n in range(2, pages + 1):
        if n in kinds:
            continue
        kinds[n] = names.get(plain(n)[0], "overflow")
    print(json.dumps({str(n): kind for n, kind in sorted(kinds.items())}))


if __name__ == "__main__":
    main()
