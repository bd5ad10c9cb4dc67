#!/usr/bin/env bash
# Builds the customer service example (Examples/CustomerService, its own package: Hummingbird)
# on one engine and runs its tests (swift test ARGS...): the `strongroom` command they call
# comes from the library's build on the same engine.
#   bash Scripts/test-example.sh sqlcipher3 [swift test options]   the system's SQLCipher 3.4.1
#   bash Scripts/test-example.sh sqlcipher4 [swift test options]   SQLCipher 4.6.1 (Scripts/sqlcipher4.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
engine="${1:?usage: test-example.sh sqlcipher3|sqlcipher4 [swift test options]}"
shift
package=Examples/CustomerService
case "$engine" in
sqlcipher3)
    swift build --product strongroom
    cli="$PWD/.build/debug/strongroom"
    scratch=()
    flags=()
    ;;
sqlcipher4)
    DIR=.build/sqlcipher4
    bash Scripts/sqlcipher4.sh "$DIR" >/dev/null
    source "$DIR/env"
    swift build --product strongroom --scratch-path "$DIR/build" $SQLCIPHER4_SWIFT_FLAGS
    cli="$PWD/$DIR/build/debug/strongroom"
    scratch=(--scratch-path "$package/.build-sqlcipher4")
    read -r -a flags <<<"$SQLCIPHER4_SWIFT_FLAGS"
    ;;
*)
    echo "test-example.sh: the engine is sqlcipher3 or sqlcipher4, not $engine" >&2
    exit 64
    ;;
esac
swift build --build-tests --package-path "$package" "${scratch[@]}" "${flags[@]}"
bin=$(swift build --package-path "$package" "${scratch[@]}" --show-bin-path)
# One SQLCipher in each process, the engine's own.
libraries=$(ldd "$bin/CustomerService")
if [ "$engine" = sqlcipher4 ] && grep -q 'libsqlcipher\.so\.0' <<<"$libraries"; then
    echo "test-example.sh: $bin/CustomerService links the system's SQLCipher 3 on the SQLCipher 4 build" >&2
    exit 1
fi
if grep -q 'libsqlite3\.so' <<<"$libraries"; then
    echo "test-example.sh: $bin/CustomerService links the system's libsqlite3 beside SQLCipher" >&2
    exit 1
fi
STRONGROOM_CLI="$cli" swift test --skip-build --package-path "$package" "${scratch[@]}" "$@"
