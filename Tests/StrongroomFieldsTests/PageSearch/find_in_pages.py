#!/usr/bin/env python3
"""Finds byte strings in the decrypted pages of a SQLCipher database, freed
space and freelist pages included, as someone holding the database key reads
the file: what a test of "no replaced plaintext is left in the file" needs.

usage: find_in_pages.py KEY_FILE DATABASE NEEDLES_FILE

KEY_FILE holds the raw key in hex (never on the command line); NEEDLES_FILE
one needle a line (UTF-8). Each page is decrypted with AES-256-CBC and its
IV from the reserved bytes; SQLCipher 3's defaults (1024-byte pages, 48
reserved bytes) and SQLCipher 4's (4096, 80) are tried, and the settings
under which page 1 decrypts to a header of that page size are used. No HMAC
is checked: only the bytes matter. Prints JSON: {"page_size": N, "pages": N,
"found": {"needle": [page, ...]}} with only the needles found. It only reads.
"""
import json
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def decrypt(data, key, page_size, reserve, n):
    page = data[(n - 1) * page_size:n * page_size]
    iv = page[page_size - reserve:page_size - reserve + 16]
    start = 16 if n == 1 else 0
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    return decryptor.update(page[start:page_size - reserve]) + decryptor.finalize()


def main():
    key = bytes.fromhex(open(sys.argv[1]).read().strip())
    data = open(sys.argv[2], "rb").read()
    needles = [line.rstrip("\n").encode() for line in open(sys.argv[3], encoding="utf-8") if line.strip()]
    for page_size, reserve in ((1024, 48), (4096, 80)):
        if len(data) < page_size:
            continue
        header = decrypt(data, key, page_size, reserve, 1)
        if header[0:2] == page_size.to_bytes(2, "big") and header[4] == reserve:
            break
    else:
        sys.exit("find_in_pages.py: page 1 decrypts to no header under SQLCipher 3's or 4's page settings: wrong key or settings")
    # Every window of each needle length, looked up in a set: thousands of
    # needles cost no more than one.
    by_length = {}
    for needle in needles:
        by_length.setdefault(len(needle), set()).add(needle)
    found = {}
    for n in range(1, len(data) // page_size + 1):
        plain = decrypt(data, key, page_size, reserve, n)
        hits = set()
        for length, wanted in by_length.items():
            for i in range(len(plain) - length + 1):
                window = plain[i:i + length]
                if window in wanted:
                    hits.add(window)
        for needle in sorted(hits):
            found.setdefault(needle.decode(), []).append(n)
    print(json.dumps({"page_size": page_size, "pages": len(data) // page_size, "found": found}))


if __name__ == "__main__":
    main()
