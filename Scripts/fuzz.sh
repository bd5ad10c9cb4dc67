#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets of Fuzz/ (coverage and AddressSanitizer
# over the whole library) and runs each for FUZZ_RUNS executions (default
# 1,000,000) on a copy of its committed corpus, Fuzz/Corpus/<target>/; the inputs
# that reach new code are merged back (libFuzzer's -merge=1). Writes
# Reliability/results/fuzz/<target>.json for each, with the run id make fuzz
# gives (STRONGROOM_RELIABILITY_RUN; empty when run by hand, and then not shown
# in RELIABILITY.md).
#
# A crash (a trap, an AddressSanitizer report, a broken invariant, a leak, a
# timeout) saves the input under Fuzz/Crashes/ and makes the script fail once
# every target has run. Turn each into a regression test
# (Tests/<module>Tests/FuzzRegressionTests.swift, its doc comment starting
# with the target's Swift name, e.g. `/// FuzzKeyring: ...`), then fix it.
#
# usage: Scripts/fuzz.sh [TARGET...]      the targets below, all by default
#        Scripts/fuzz.sh --seeds [TARGET...]
#            writes the seeds each target makes with the library (real
#            envelopes, keyrings, the repository's migrations and CREATE
#            statements, ...) and merges them into Fuzz/Corpus/<target>/
# env:   FUZZ_RUNS=N   executions per target (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${FUZZ_RUNS:-1000000}
SCRATCH=Fuzz/.build/fuzzer
RESULTS=Reliability/results/fuzz

# target name | Swift executable | longest input | what it feeds (one sentence)
# (SQL inputs are kept short, scripts to 512 bytes and statements to 1 KiB: the
# splitter and the tokenizer run over every byte several times, and longer
# inputs only repeat what short ones reach.)
TARGETS=(
  "envelope|FuzzEnvelope|4096|Sealed-value envelopes opened with a fixed keyring, and values sealed, opened and edited with fuzzed names, row keys and modes."
  "key-file|FuzzKeyFile|4096|Database key files, key environment variables and passphrase lines, read as keys and written back."
  "keyring|FuzzKeyring|4096|Field keyring files, read, written back, and changed by adding, activating and retiring keys."
  "migration-file|FuzzMigrationFile|512|Migration file names and SQL scripts, split into statements with their directives, checksums and line numbers."
  "ddl-parser|FuzzDDLParser|1024|CREATE TABLE, VIEW, INDEX and TRIGGER and ALTER TABLE statements for the rebuild and schema-diff parsers, compared with SQLite's own reading."
  "row-decoder|FuzzRowDecoder|4096|Rows of NULL, INTEGER, REAL, TEXT (UTF-8 or not) and BLOB values, read as 16 Swift types by every row-reading path."
)

seeds=0
if [ "${1:-}" = "--seeds" ]; then seeds=1; shift; fi
selected=("$@")
for name in "${selected[@]}"; do
  printf '%s\n' "${TARGETS[@]}" | cut -d'|' -f1 | grep -qxF -- "$name" \
    || { echo "fuzz: no target named $name (targets: $(printf '%s\n' "${TARGETS[@]}" | cut -d'|' -f1 | tr '\n' ' '))" >&2; exit 2; }
done

# What -sanitize=fuzzer instruments, without libFuzzer's main (see
# Fuzz/Sources/FuzzSupport/FuzzMain.swift): the targets have their own.
resources=$(swiftc -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["runtimeResourcePath"])')
libfuzzer="$resources/clang/lib/linux/libclang_rt.fuzzer_no_main-$(uname -m).a"
[ -f "$libfuzzer" ] || { echo "fuzz: libFuzzer not found at $libfuzzer" >&2; exit 1; }
echo "Building the fuzz targets (release, -enable-testing, AddressSanitizer, libFuzzer coverage)"
mkdir -p "$SCRATCH"
swift build -c release --package-path Fuzz --scratch-path "$SCRATCH" \
  -Xswiftc -enable-testing -Xswiftc -sanitize=address \
  -Xswiftc -sanitize-coverage=edge,indirect-calls,trace-cmp,inline-8bit-counters,pc-table \
  -Xlinker "$libfuzzer" -Xlinker -lstdc++ > "$SCRATCH/build.log" 2>&1 \
  || { grep -v "Cannot export local symbol" "$SCRATCH/build.log" | tail -40 >&2; exit 1; }
bin="$SCRATCH/release"

# A Swift trap goes to libFuzzer's handler, not to Swift's backtracer (which
# would keep the process, and the run, waiting).
export SWIFT_BACKTRACE=enable=no
# Allocation stacks are kept two frames deep (full ones cost a third of the
# time of the SQL targets): a report still shows where the bad access
# happened; run the saved input again with ASAN_OPTIONS= for the allocation's
# whole stack. Not 0 or 1: with those LeakSanitizer reports no leak at all
# (the leak canary below checks that leaks are reported, whatever is set).
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=2}


mkdir -p "$RESULTS" Fuzz/Crashes
failed=()
ran=0
for entry in "${TARGETS[@]}"; do
  IFS='|' read -r name executable max_len what <<<"$entry"
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " =~ " $name " ]]; then continue; fi
  [ -x "$bin/$executable" ] || { echo "fuzz: $bin/$executable was not built" >&2; exit 1; }
  corpus="Fuzz/Corpus/$name"
  work="$SCRATCH/run/$name"
  rm -rf "$work" && mkdir -p "$work/corpus" "$corpus"

  if [ $seeds = 1 ]; then
    # The working directory is the repository: targets read its migrations.
    STRONGROOM_FUZZ_SEEDS="$work/seeds" "$bin/$executable"
    # The seeds that reach code the corpus does not, under their own names
    # (libFuzzer's merge names what it keeps by its SHA-1).
    mkdir -p "$work/merged"
    "$bin/$executable" -merge=1 "$work/merged" "$corpus" "$work/seeds" > "$work/merge.log" 2>&1 \
      || { tail -20 "$work/merge.log" >&2; exit 1; }
    for seed in "$work/seeds"/*; do
      if [ -e "$work/merged/$(sha1sum "$seed" | cut -d' ' -f1)" ]; then cp "$seed" "$corpus/"; fi
    done
    echo "$name: $(ls "$corpus" | wc -l) files in $corpus"
    continue
  fi

  # The leak canary: the target leaking on every input must fail with a
  # LeakSanitizer report, or this run could not see a leak (see FuzzMain).
  rm -f "$RESULTS/$name.json"
  canary="$SCRATCH/run/$name-canary"
  rm -rf "$canary" && mkdir -p "$canary"
  if STRONGROOM_FUZZ_LEAK_CANARY=1 "$bin/$executable" -runs=20 -artifact_prefix="$canary/" > "$canary/log" 2>&1 \
     || ! grep -q "ERROR: LeakSanitizer" "$canary/log"; then
    echo "fuzz: $name: a leaking input was not reported (ASAN_OPTIONS=$ASAN_OPTIONS turns leak detection off?); see $canary/log" >&2
    exit 1
  fi

  cp -R "$corpus/." "$work/corpus/"
  echo "Fuzzing $name ($executable) for $RUNS executions"
  start=$(date +%s.%N)
  status=0
  "$bin/$executable" -runs="$RUNS" -max_len="$max_len" -timeout=60 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" > "$work/fuzz.log" 2>&1 || status=$?
  seconds=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)

  crashes=0
  for artifact in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$work"/slow-unit-*; do
    [ -e "$artifact" ] || continue
    crashes=$((crashes + 1))
    cp "$artifact" "Fuzz/Crashes/$name-$(basename "$artifact")"
  done
  if [ $status != 0 ] && [ $crashes = 0 ]; then crashes=1; fi
  if [ $crashes != 0 ]; then
    failed+=("$name")
    grep -E -m 5 "INVARIANT FAILED|Fatal error|ERROR: AddressSanitizer|ERROR: LeakSanitizer|ERROR: libFuzzer|SUMMARY" "$work/fuzz.log" || true
    echo "$name: $crashes crash(es); input(s) in Fuzz/Crashes/, log in $work/fuzz.log" >&2
  fi

  # Merge back what reached new code (the corpus only grows by coverage).
  "$bin/$executable" -merge=1 "$corpus" "$work/corpus" > "$work/merge.log" 2>&1 \
    || { echo "fuzz: merging $name's corpus failed; see $work/merge.log" >&2; exit 1; }
  corpus_files=$(ls "$corpus" | wc -l)
  regression_tests=$(python3 - "$executable" <<'PY'
import glob, re, sys
count = 0
for path in glob.glob("Tests/*/FuzzRegressionTests.swift"):
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("@Test"):
            j = i - 1
            while j >= 0 and lines[j].strip().startswith("///"):
                j -= 1
            if j + 1 < i and re.match(r"\s*/// " + re.escape(sys.argv[1]) + r"\b", lines[j + 1]):
                count += 1
print(count)
PY
)
  python3 - "$RESULTS/$name.json" <<PY
import json, sys
json.dump({"target": "$name", "what": """$what""", "executions": int("${executions:-0}"), "seconds": $seconds,
           "crashes": $crashes, "corpus_files": $corpus_files, "regression_tests": $regression_tests,
           "run": "${STRONGROOM_RELIABILITY_RUN:-}"},
          open(sys.argv[1], "w"), indent=2)
open(sys.argv[1], "a").write("\n")
PY
  echo "$name: ${executions:-0} executions in ${seconds}s, $crashes crash(es), $corpus_files corpus files, $regression_tests regression test(s)"
  ran=$((ran + 1))
done

if [ $seeds = 0 ] && [ $ran = 0 ]; then
  echo "fuzz: no target ran" >&2
  exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}: see Fuzz/Crashes/" >&2
  exit 1
fi
