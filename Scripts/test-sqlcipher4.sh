#!/usr/bin/env bash
# The whole test suite again on the second engine: SQLCipher 4.6.1 (SQLite 3.46.1),
# Debian's bookworm-backports packages unpacked into .build/sqlcipher4 by
# Scripts/sqlcipher4.sh.
#
# The suite's objects are the ones `swift test` compiled in .build against the system's
# SQLCipher headers, with no PKG_CONFIG_PATH and the SWIFT_BUILD_FLAGS make test passes
# both (the environment's, default none); this script links them again against 4.6.1's library (SwiftPM sees
# only the link commands change, so it recompiles nothing) and checks every binary loads
# 4.6.1 alone before a test runs. A later `swift test` links them back to the system's
# SQLCipher. Compiled once for both engines, a cold `make test` builds the package and
# swift-syntax once, not twice (issue 51: CI had reached 41 minutes of its 40).
# In place of compiling against 4.6.1's own header, a check first: every SQLite and
# SQLCipher name the sources use that the system's header declares is declared by 4.6.1's
# header too (names, not their types; SQLite does not change a signature). `make bench`
# compiles the library against 4.6.1's header, in release.
#
#   Scripts/test-sqlcipher4.sh [swift test options, e.g. --filter X]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.build/sqlcipher4
bash Scripts/sqlcipher4.sh "$DIR"
# shellcheck disable=SC1091
source "$DIR/env"

# Every name (function, type, constant) the sources and tests use, among those the system's
# header declares, must be declared by 4.6.1's header: the shim included as the build
# includes it, 4.6.1's include folder first.
include="$DIR/root/usr/include"
# -I only puts a folder first: without 4.6.1's header there, the system's would answer.
if ! printf '#include "%s"\n_Static_assert(SQLITE_VERSION_NUMBER >= 3046000, "not 4.6.1");\n' "$PWD/Sources/CSQLCipher/shim.h" \
        | cc -fsyntax-only -w -I"$include" -x c - 2>/dev/null; then
    echo "test-sqlcipher4: $include/sqlcipher/sqlite3.h is not SQLite 3.46's header (rm -rf $DIR and run again)" >&2
    exit 1
fi
declared() { # declared INCLUDE_DIR NAME ("" for the system's header)
    printf '#include "%s"\n__typeof__(%s) *strongroom_check;\n' "$PWD/Sources/CSQLCipher/shim.h" "$2" \
        | cc -fsyntax-only -w ${1:+-I"$1"} -x c - 2>/dev/null
}
used=0
missing=()
for name in $(grep -rhoE '\b(sqlite3|sqlcipher)_[a-z0-9_]+\b|\bSQLITE_[A-Z0-9_]+\b' Sources Tests \
                  --include=*.swift --include=*.c --include=*.h | sort -u); do
    declared "" "$name" || continue
    used=$((used + 1))
    declared "$include" "$name" || missing+=("$name")
done
if [ "$used" -lt 50 ] || [ ${#missing[@]} -gt 0 ]; then
    echo "test-sqlcipher4: of the $used SQLite names the sources use, 4.6.1's header ($include) lacks: ${missing[*]:-(none; too few names found)}" >&2
    exit 1
fi
echo "test-sqlcipher4: 4.6.1's header declares all $used SQLite and SQLCipher names the sources use"

# The system's compile flags (so no object is compiled again), 4.6.1's library.
relink="$DIR/pkgconfig-relink"
mkdir -p "$relink"
system_cflags=$(env -u PKG_CONFIG_PATH pkg-config --cflags sqlcipher) \
    || { echo "test-sqlcipher4: pkg-config --cflags sqlcipher failed for the system's SQLCipher" >&2; exit 1; }
cat > "$relink/sqlcipher.pc" <<EOF
libdir=$PWD/$DIR/lib

Name: SQLCipher
Description: SQLCipher 4.6.1's library (Debian bookworm-backports, unpacked); the system's SQLCipher headers
Version: 4.6.1
Libs: -L\${libdir} -l:libsqlcipher.so.1
Cflags: $system_cflags
EOF
# shellcheck disable=SC2086
PKG_CONFIG_PATH="$PWD/$relink" swift build --build-tests ${SWIFT_BUILD_FLAGS:-} $SQLCIPHER4_SWIFT_FLAGS
# shellcheck disable=SC2086
bin=$(swift build ${SWIFT_BUILD_FLAGS:-} --show-bin-path)
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
# shellcheck disable=SC2086
swift test --skip-build ${SWIFT_BUILD_FLAGS:-} "$@"
