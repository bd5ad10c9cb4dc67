#!/usr/bin/env bash
# The whole suite (swift test) under one sanitizer, in its own build:
#
#   Scripts/sanitize.sh thread     ThreadSanitizer, .build/tsan
#   Scripts/sanitize.sh address    AddressSanitizer with LeakSanitizer, .build/asan
#
# Run by `make sanitize` (both, one after the other). On the engine the
# environment names: the system's SQLCipher 3 by default, or with
# STRONGROOM_ENGINE=sqlcipher4 (exported by .build/sqlcipher4/env, which
# `make sanitize ENGINE=sqlcipher4` sources) SQLCipher 4.6.1, in builds of
# their own (.build/sqlcipher4/tsan, .build/sqlcipher4/asan), checked with ldd
# to link that engine's library alone. Every process the tests
# start inherits the options: the `strongroom` command and the example
# programs come from the same sanitized build and are checked too; Python,
# the sqlcipher shell, sqlite3 and strace are not instrumented and ignore them.
# Each report goes to its own file (log_path, one per process), so a report
# from a child whose output a test swallows, or that a test kills after the
# report, still counts. The run fails when the suite fails or when any report was written;
# halt_on_error also makes the reporting process exit at once.
#
# On success writes Reliability/results/<engine>/sanitizers/<sanitizer>.json:
# {"sanitizer", "tests", "suites", "seconds" (swift-testing's own summary
# line), "findings" (reports, 0), "suppressions", "run" (STRONGROOM_RELIABILITY_RUN,
# set by make sanitize for both sanitizers)}. "suppressions" counts the
# entries of the suppression files below plus the places in Tests/ marked
# "SANITIZER EXEMPTION(<sanitizer>)" (a check turned off for some process);
# each one is justified where it is written.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

sanitizer=${1:-}
case "$sanitizer" in
    thread) scratch=.build/tsan; runtime=__tsan_init; suppression_files=(Scripts/tsan.supp) ;;
    address) scratch=.build/asan; runtime=__asan_init; suppression_files=(Scripts/lsan.supp) ;;
    *) echo "usage: Scripts/sanitize.sh thread|address" >&2; exit 2 ;;
esac
engine=${STRONGROOM_ENGINE:-sqlcipher3}
build_flags=()
case "$engine" in
    sqlcipher3) library='libsqlcipher\.so\.0 => ' other='libsqlcipher\.so\.1' ;;
    sqlcipher4)
        scratch=.build/sqlcipher4/${scratch#.build/}
        library="libsqlcipher\.so\.1 => $root/.build/sqlcipher4/lib" other='libsqlcipher\.so\.0'
        read -r -a build_flags <<<"${SQLCIPHER4_SWIFT_FLAGS:?source .build/sqlcipher4/env first (make sanitize ENGINE=sqlcipher4)}"
        ;;
    *) echo "sanitize: STRONGROOM_ENGINE is sqlcipher3 or sqlcipher4, not $engine" >&2; exit 2 ;;
esac

# The suite is swift-testing only, run with --disable-xctest: the XCTest pass
# would run no test of ours, and XCTest's own harness leaks at exit
# (LeakSanitizer: XCTestSuiteRun objects made by XCTMainMisc in libXCTest.so,
# 368 bytes in 6 objects, with 0 XCTest tests). A suppression for it would
# also hide leaks under any XCTest test, so instead: no XCTest test may exist.
if grep -rlE '^[[:space:]]*(@testable[[:space:]]+)?import[[:space:]]+XCTest' Tests >/dev/null; then
    echo "sanitize: Tests/ imports XCTest; run its pass too (drop --disable-xctest) and review the XCTest leak note above." >&2
    exit 1
fi

results=Reliability/results/$engine/sanitizers
result=$results/$sanitizer.json
logs=$root/$scratch/sanitizer-reports
output=$root/$scratch/sanitize.log
mkdir -p "$results" "$scratch"
rm -f "$result"
rm -rf "$logs" && mkdir -p "$logs"

suppressions=$(printf '%s\n' "${suppression_files[@]}" | xargs cat | grep -cvE '^[[:space:]]*(#|$)' || true)
exemptions=$({ grep -rhoF "SANITIZER EXEMPTION($sanitizer)" Tests || true; } | wc -l)
suppressions=$((suppressions + exemptions))

# Tests that cannot run under a sanitizer check this (each marked
# SANITIZER EXEMPTION(<sanitizer>) where it is written).
export STRONGROOM_SANITIZER=$sanitizer
case "$sanitizer" in
    thread)
        export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$root/Scripts/tsan.supp:log_path=$logs/report"
        ;;
    address)
        export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:log_path=$logs/report"
        export LSAN_OPTIONS="suppressions=$root/Scripts/lsan.supp:print_suppressions=0"
        ;;
esac

if [ "$sanitizer" = address ]; then
    # The leak canary (see Scripts/lsan-canary.swift): under the suite's options
    # and suppressions, ten leaked cycles must be reported, and the Process.run()
    # suppression must be the one that matched the side table.
    canary=$root/$scratch/lsan-canary
    swiftc -Onone -sanitize=address Scripts/lsan-canary.swift -o "$canary" 2> "$canary.build.log" \
        || { cat "$canary.build.log" >&2; exit 1; }
    if (ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="$LSAN_OPTIONS:print_suppressions=1" "$canary" > "$canary.log" 2>&1); then
        echo "sanitize: the leak canary's leaked cycles were not reported under Scripts/lsan.supp (see $canary.log): a suppression hides real leaks" >&2
        exit 1
    fi
    leaked=$(sed -nE 's/.*leaked in ([0-9]+) allocation.*/\1/p' "$canary.log" | tail -1)
    if [ "${leaked:-0}" -lt 20 ] || ! grep -q "10Foundation7ProcessC3runyyKF" "$canary.log"; then
        echo "sanitize: the leak canary's report is not the expected one (its 20 nodes leaked, the Process.run() suppression used); see $canary.log" >&2
        exit 1
    fi
    echo "sanitize: leak canary reported under Scripts/lsan.supp"
fi

swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" "${build_flags[@]}"
# The build must really carry the sanitizer, in the tests and in the command
# they run, and link the engine's SQLCipher alone.
for binary in "$scratch/debug/StrongroomPackageTests.xctest" "$scratch/debug/strongroom"; do
    if [ "$(nm -D "$binary" 2>/dev/null | grep -c " $runtime\$")" = 0 ]; then
        echo "sanitize: $binary is not built with the $sanitizer sanitizer ($runtime missing)" >&2
        exit 1
    fi
    libraries=$(ldd "$binary")
    if ! grep -q "$library" <<<"$libraries" || grep -q "$other" <<<"$libraries"; then
        echo "sanitize: $binary does not link $engine's SQLCipher alone:" >&2
        grep -i sqlcipher <<<"$libraries" >&2 || true
        exit 1
    fi
done

# One test at a time (--no-parallel). Swift runs tests on its cooperative
# pool, one thread per core; many tests block their thread on a child process
# (make docs in a scratch copy, the crash trials), for minutes once sanitized.
# Run side by side on a 2-core machine they held both threads, every other
# test waited, and the waiting counted against swift-testing's time limits
# (a 0.05 s test "exceeded" its 1 minute). Each test's own threads, queues and
# child processes are still checked as they run.
echo "sanitize: $engine: swift test --sanitize=$sanitizer --scratch-path $scratch --disable-xctest --no-parallel --skip-build (reports: $logs)"
set +e
swift test --sanitize="$sanitizer" --scratch-path "$scratch" "${build_flags[@]}" --disable-xctest --no-parallel --skip-build 2>&1 | tee "$output"
status=${PIPESTATUS[0]}
set -e

# One finding per report: each ends with a SUMMARY line; a file without one
# (a sanitizer's fatal error) counts once.
findings=0
for report in "$logs"/report.*; do
    [ -s "$report" ] || continue
    n=$(grep -c '^SUMMARY: ' "$report" || true)
    findings=$((findings + (n > 0 ? n : 1)))
done

summary=$(sed -nE 's/.*Test run with ([0-9]+) tests? in ([0-9]+) suites? passed after ([0-9.]+) seconds.*/\1 \2 \3/p' "$output" | tail -1)

if [ "$findings" -gt 0 ]; then
    for report in "$logs"/report.*; do
        [ -s "$report" ] || continue
        echo "==== $report" >&2
        head -n 80 "$report" >&2
    done
fi
if [ "$status" -ne 0 ] || [ -z "$summary" ] || [ "$findings" -gt 0 ]; then
    echo "sanitize: $sanitizer: FAILED (swift test status $status, findings $findings; output in $output)" >&2
    exit 1
fi

read -r tests suites seconds <<<"$summary"
if [ "$tests" -eq 0 ]; then
    echo "sanitize: $sanitizer: no test ran" >&2
    exit 1
fi
python3 - "$result" "$sanitizer" "$tests" "$suites" "$seconds" "$findings" "$suppressions" "${STRONGROOM_RELIABILITY_RUN:-}" <<'EOF'
import json, sys
path, sanitizer, tests, suites, seconds, findings, suppressions, run = sys.argv[1:]
summary = {"sanitizer": sanitizer, "tests": int(tests), "suites": int(suites), "seconds": round(float(seconds), 1),
           "findings": int(findings), "suppressions": int(suppressions), "run": run}
with open(path, "w") as f:
    json.dump(summary, f, indent=2, sort_keys=True)
    f.write("\n")
EOF
echo "sanitize: $sanitizer: $tests tests in $suites suites passed in $seconds s, $findings findings, $suppressions suppressions; wrote $result"
