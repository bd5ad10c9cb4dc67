#!/usr/bin/env python3
"""A second, independent reader and writer of Strongroom's wrapped key files,
written from the format in Keys/README.md alone (Python's hashlib.scrypt and
the `cryptography` package's AES-GCM; no Strongroom code).

  wrapped_key_file.py open FILE        passphrase on stdin (first line); prints
                                       the kind and the SHA-256 of the plain
                                       bytes, never the bytes themselves
  wrapped_key_file.py wrap KIND PLAIN OUT
                                       passphrase on stdin; KIND 1 (key file) or
                                       2 (field keyring); scrypt N=2^10, r=8, p=1
"""
import hashlib
import os
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MAGIC = b"strongroom wrapped key 1\n"
HEADER = len(MAGIC) + 5 + 16 + 12  # magic, contents, kdf, log2 N, r, p, salt, nonce
TAG = 16


def passphrase():
    line = sys.stdin.buffer.readline()
    return line[:-1] if line.endswith(b"\n") else line


def open_file(path):
    data = open(path, "rb").read()
    if not data.startswith(MAGIC) or len(data) < HEADER + TAG:
        sys.exit("not a whole wrapped file")
    m = len(MAGIC)
    contents, kdf, log2n, r, p = data[m], data[m + 1], data[m + 2], data[m + 3], data[m + 4]
    salt, nonce = data[m + 5:m + 21], data[m + 21:HEADER]
    if kdf != 1:
        sys.exit("unknown KDF")
    key = hashlib.scrypt(passphrase(), salt=salt, n=1 << log2n, r=r, p=p, dklen=32,
                         maxmem=128 * r * (1 << log2n) + 128 * r * p + (1 << 20))
    plain = AESGCM(key).decrypt(nonce, data[HEADER:], data[:HEADER])
    print(contents, hashlib.sha256(plain).hexdigest())


def wrap(kind, plain_path, out_path):
    plain = open(plain_path, "rb").read()
    salt, nonce = os.urandom(16), os.urandom(12)
    log2n, r, p = 10, 8, 1
    key = hashlib.scrypt(passphrase(), salt=salt, n=1 << log2n, r=r, p=p, dklen=32)
    header = MAGIC + bytes([kind, 1, log2n, r, p]) + salt + nonce
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(header + AESGCM(key).encrypt(nonce, plain, header))


if __name__ == "__main__":
    if sys.argv[1:2] == ["open"] and len(sys.argv) == 3:
        open_file(sys.argv[2])
    elif sys.argv[1:2] == ["wrap"] and len(sys.argv) == 5:
        wrap(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
