#!/usr/bin/env bash
# Builds probe.c for both engines (SQLCipher 3.4.1, the system's; 4.6.1 from
# Scripts/sqlcipher4.sh) and runs it: per engine, plaintext / stock provider /
# caching provider, ROUNDS times each, interleaved, then prints each mode's
# median µs per insert. Checks first that a file the caching provider wrote
# passes each engine's own shell's integrity check with the stock provider.
#
#   Benchmarks/PageCipherProbe/run.sh [ROWS [GROUP [ROUNDS]]]   (50000 16 3)
#
# Run it on an otherwise idle machine: it measures time. Each engine is named
# by its own paths (the system's shell and headers for 3.4.1), so a shell set
# up for SQLCipher 4 (.build/sqlcipher4/env) changes nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${1:-50000} GROUP=${2:-16} ROUNDS=${3:-3}
for value in "$ROWS" "$GROUP" "$ROUNDS"; do
    [[ "$value" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: ROWS, GROUP and ROUNDS are whole numbers of at least 1, not \"$value\"" >&2; exit 2; }
done
for tool in "${CC:-cc}" pkg-config python3 /usr/bin/sqlcipher; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing (make test-setup installs what the probe needs)" >&2; exit 2; }
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
bash Scripts/sqlcipher4.sh .build/sqlcipher4 >/dev/null
S4=.build/sqlcipher4
S3_SHELL=/usr/bin/sqlcipher S4_SHELL="$S4/bin/sqlcipher"
for check in "$S3_SHELL 3.4.1" "$S4_SHELL 4.6.1"; do
    set -- $check
    "$1" :memory: 'PRAGMA cipher_version;' | grep -q "^$2" || { echo "run.sh: $1 is not SQLCipher $2" >&2; exit 1; }
done
"${CC:-cc}" -O2 -Wall -o "$OUT/probe3" Benchmarks/PageCipherProbe/probe.c $(env -u PKG_CONFIG_PATH pkg-config --cflags sqlcipher) -lsqlcipher -lcrypto
"${CC:-cc}" -O2 -Wall -DPROBE_SQLCIPHER4 -o "$OUT/probe4" Benchmarks/PageCipherProbe/probe.c -I"$S4/root/usr/include/sqlcipher" \
    -Wl,-rpath,"$(pwd)/$S4/lib" "$S4/lib/libsqlcipher.so.1" -lcrypto

# A fresh raw key for this run, in an owner-only file (never in an argument).
KEY_FILE="$OUT/probe.key"
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d " \n" > "$KEY_FILE")
shell_check() { # the engine's shell, its statements on stdin after the key
    { printf 'PRAGMA key = "x'"'"'%s'"'"'";\n' "$(cat "$KEY_FILE")"; cat; } | "$@"
}
"$OUT/probe3" "$OUT/check3.db" caching "$KEY_FILE" 2000 >/dev/null
printf 'PRAGMA integrity_check;\nSELECT count(*) FROM customer;\n' | shell_check "$S3_SHELL" "$OUT/check3.db" | tr '\n' ' ' | grep -q '^ok 2000 $' \
    || { echo "3.4.1: the stock shell does not open what the caching provider wrote" >&2; exit 1; }
"$OUT/probe4" "$OUT/check4.db" caching "$KEY_FILE" 2000 >/dev/null
# 4.x answers PRAGMA key with "ok"; cipher_integrity_check prints a row only for a page that fails.
printf 'PRAGMA cipher_integrity_check;\nPRAGMA integrity_check;\nSELECT count(*) FROM customer;\n' | shell_check "$S4_SHELL" "$OUT/check4.db" | tr '\n' ' ' | grep -q '^ok ok 2000 $' \
    || { echo "4.6.1: the stock shell does not open what the caching provider wrote" >&2; exit 1; }
echo "both engines' stock shells open and verify what the caching provider wrote"

for round in $(seq "$ROUNDS"); do
    for engine in 3 4; do
        for mode in plaintext stock caching; do
            "$OUT/probe$engine" "$OUT/db$engine" "$mode" "$KEY_FILE" "$ROWS" "$GROUP" | sed "s/^{/{\"engine\":$engine,\"round\":$round,/"
        done
    done
done | tee "$OUT/runs.jsonl"
python3 - "$OUT/runs.jsonl" <<'EOF'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
for engine in (3, 4):
    medians = {m: statistics.median(r["us_per_insert"] for r in runs if r["engine"] == engine and r["mode"] == m)
               for m in ("plaintext", "stock", "caching")}
    print(f"SQLCipher {'3.4.1' if engine == 3 else '4.6.1'}: µs per insert, median of {len([r for r in runs if r['engine'] == engine]) // 3}: "
          + ", ".join(f"{m} {v:.1f}" for m, v in medians.items())
          + f"; the cipher's cost {medians['stock'] - medians['plaintext']:.1f} µs (stock), {medians['caching'] - medians['plaintext']:.1f} µs (caching)")
EOF
