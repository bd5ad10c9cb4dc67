#!/usr/bin/env bash
# The whole test suite again on the second engine: SQLCipher 4.6.1 (SQLite 3.46.1),
# Debian's bookworm-backports packages unpacked into .build/sqlcipher4 by
# Scripts/sqlcipher4.sh. A build of its own (scratch path .build/sqlcipher4/build),
# checked to link that library and never the system's SQLCipher 3 before a test runs.
#
#   Scripts/test-sqlcipher4.sh [swift test options, e.g. --filter X]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.build/sqlcipher4
bash Scripts/sqlcipher4.sh "$DIR"
# shellcheck disable=SC1091
source "$DIR/env"
# shellcheck disable=SC2086
swift build --build-tests --scratch-path "$DIR/build" $SQLCIPHER4_SWIFT_FLAGS
bin=$(swift build --scratch-path "$DIR/build" --show-bin-path)
checked=0
for f in "$bin"/*.xctest "$bin"/strongroom "$bin"/reliability-child "$bin"/customer-lookup; do
    [ -f "$f" ] || continue
    libraries=$(ldd "$f")
    if grep -q 'libsqlcipher\.so\.0' <<<"$libraries" || ! grep -q "libsqlcipher\.so\.1 => $(cd "$DIR/lib" && pwd)" <<<"$libraries"; then
        echo "test-sqlcipher4: $f does not link $DIR/lib/libsqlcipher.so.1 alone:" >&2
        grep -i sqlcipher <<<"$libraries" >&2 || true
        exit 1
    fi
    checked=$((checked + 1))
done
[ "$checked" -gt 0 ] || { echo "test-sqlcipher4: no binary found in $bin" >&2; exit 1; }
echo "test-sqlcipher4: $checked binaries link SQLCipher $("$DIR/bin/sqlcipher" :memory: 'PRAGMA cipher_version;') alone"
swift test --skip-build --scratch-path "$DIR/build" "$@"
