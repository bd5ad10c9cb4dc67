#!/usr/bin/env bash
# Builds the DocC archive of every library module (or of the modules named
# as arguments) with warnings as errors, so a broken symbol link fails, and
# fails when a public symbol has no doc comment. Run by `make docs`, which
# `make test` runs. Archives: .build/plugins/Swift-DocC/outputs/*.doccarchive
set -euo pipefail
cd "$(dirname "$0")/.."

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
    modules=(StrongroomCrypto Strongroom StrongroomFields StrongroomMigrations StrongroomMacros)
fi

# Members a protocol conformance supplies, documented by the protocol.
inherited='^(!=\(_:_:\)|==\(_:_:\)|hash\(into:\)|hashValue|init\(from:\)|encode\(to:\)|init\(rawValue:\)|rawValue|allCases|localizedDescription|errorDescription|failureReason|helpAnchor|recoverySuggestion)$'

status=0
for module in "${modules[@]}"; do
    log=$(mktemp)
    if ! swift package generate-documentation --target "$module" --warnings-as-errors \
            --experimental-documentation-coverage --coverage-summary-level detailed >"$log" 2>&1; then
        grep -E -A8 '^(warning|error):' "$log" >&2 || cat "$log" >&2
        echo "make docs: $module: the documentation does not build (warnings are errors)." >&2
        rm -f "$log"
        exit 1
    fi
    # The detailed coverage table: symbol | kind | has abstract | … | path.
    undocumented=$(awk -F'|' -v inherited="$inherited" '
        NF > 6 {
            symbol = $1; kind = $2; abstract = $3; path = $NF
            gsub(/^ +| +$/, "", symbol); gsub(/^ +| +$/, "", kind); gsub(/ /, "", abstract); gsub(/^ +| +$/, "", path)
            if (abstract != "false") next
            if (kind ~ /CollectionGroup|Extended|Article|Module/) next
            sub(/.*\//, "", path)
            if (path ~ inherited) next
            print "  " kind ": " $NF
        }' "$log" | sed 's|doc://[A-Za-z]*/documentation/||')
    rm -f "$log"
    if [ -n "$undocumented" ]; then
        echo "make docs: $module: public symbols without a doc comment:" >&2
        echo "$undocumented" >&2
        status=1
    else
        echo "make docs: $module: built, every public symbol documented"
    fi
done
exit $status
