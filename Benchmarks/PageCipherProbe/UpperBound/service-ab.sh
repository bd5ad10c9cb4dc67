#!/usr/bin/env bash
# POST /customers, contenders interleaved: each round starts every contender in
# turn on a new file, seeds 10,000 customers, runs 3 × wrk -t 2 -c 64 -d 10s
# create.lua and stops it; then the medians per contender. One line per run.
#
#   service-ab.sh ROUNDS LABEL=KIND:BINARY[:PRELOAD] ...
#     KIND: grdb (Benchmarks/GRDBService), strongroom (encrypted, a raw key),
#           plain (the example service on a plaintext file, --plaintext)
#     PRELOAD: a library for LD_PRELOAD (preload.c) in a Strongroom contender only;
#       its run counts only when the provider reports at exit that no call of it failed
#   STRONGROOM=path/to/strongroom (keygen), PORT (default 18080)
# A run with a non-2xx answer or a socket error stops the script, as does a
# service that does not come up; no service outlives it.
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
load="$root/Examples/CustomerService/Load"
migrations="$root/Examples/CustomerService/Sources/CustomerService/Migrations"
port=${PORT:-18080}
rounds=${1:?usage: service-ab.sh ROUNDS LABEL=KIND:BINARY[:PRELOAD] ...}
shift
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "service-ab: ROUNDS must be a whole number of at least 1" >&2; exit 2; }
[ $# -ge 1 ] || { echo "service-ab: name at least one contender" >&2; exit 2; }
for tool in wrk curl python3; do command -v $tool >/dev/null || { echo "service-ab: $tool is missing" >&2; exit 2; }; done
work=$(mktemp -d); chmod 700 "$work"
trap 'rm -rf "$work"' EXIT
strongroom=${STRONGROOM:-$root/.build/release/strongroom}
"$strongroom" keygen --out "$work/db.key" >/dev/null
"$strongroom" keygen --field --out "$work/fields.keyring" >/dev/null

fail() { echo "service-ab: $*" >&2; exit 1; }

# Prints "LABEL REQ/S P99_US" for each of the 3 runs; runs in a subshell.
run_one() {
  local label=$1 kind=$2 binary=$3 preload=$4 dir="$work/run" pid result
  rm -rf "$dir"; mkdir -m 700 "$dir"
  [ -z "$preload" ] || [ "$kind" != grdb ] || fail "$label: a preload applies to a Strongroom contender only"
  [ -z "$preload" ] || [ -f "$preload" ] || fail "$label: no preload library at $preload"
  local common=(--host 127.0.0.1 --port "$port" --database "$dir/c.db" --readers 4 --log-level notice)
  # TMPDIR: where preload.c keeps its anchor file, the run's own folder.
  case "$kind" in
    grdb) "$binary" "${common[@]}" >"$dir/log" 2>&1 & ;;
    strongroom) env TMPDIR="$dir" ${preload:+"LD_PRELOAD=$preload"} "$binary" "${common[@]}" --key-file "$work/db.key" \
                  --field-keys "$work/fields.keyring" --migrations "$migrations" >"$dir/log" 2>&1 & ;;
    plain) env TMPDIR="$dir" ${preload:+"LD_PRELOAD=$preload"} "$binary" "${common[@]}" --plaintext \
             --field-keys "$work/fields.keyring" --migrations "$migrations" >"$dir/log" 2>&1 & ;;
    *) fail "unknown kind $kind" ;;
  esac
  pid=$!
  trap 'kill -KILL "$pid" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/customers/1" && break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && curl -s -o /dev/null "http://127.0.0.1:$port/customers/1" ||
    { cat "$dir/log" >&2; fail "$label: the service did not come up on port $port"; }
  timeout 900 wrk -t 1 -c 1 -d 600s -s "$load/seed.lua" "http://127.0.0.1:$port" -- 10000 seed >/dev/null ||
    fail "$label: seeding failed"
  for r in 1 2 3; do
    result=$(wrk -t 2 -c 64 -d 10s --latency -s "$load/create.lua" "http://127.0.0.1:$port" -- 10000 "n$RANDOM$r" | tail -1)
    python3 -c '
import json, sys
j = json.loads(sys.argv[2])
errors = j["non2xx"] + sum(j["socket_errors"].values())
if errors: sys.exit(f"service-ab: {sys.argv[1]}: {errors} failed requests")
print(sys.argv[1], round(j["requests_per_s"]), j["latency_us"]["p99"])' "$label" "$result" >>"$dir/rows"
  done
  kill -TERM "$pid"; wait "$pid" || true
  trap - EXIT
  if [ -n "$preload" ]; then
    grep -h '^preload:' "$dir/log" >&2 || true
    grep -q '^preload: .*a call failed: no$' "$dir/log" || fail "$label: the preloaded provider did not run, or a call of it failed"
  fi
  cat "$dir/rows"
}

echo "label req/s p99_us" > "$work/runs"
for _ in $(seq "$rounds"); do
  for contender in "$@"; do
    label=${contender%%=*}; spec=${contender#*=}
    IFS=: read -r kind binary preload <<<"$spec"
    rows=$(run_one "$label" "$kind" "$binary" "${preload:-}")
    echo "$rows" | tee -a "$work/runs"
  done
done
python3 - "$work/runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]).read().splitlines()[1:]]
labels = list(dict.fromkeys(r[0] for r in rows))
medians = {l: statistics.median(int(r[1]) for r in rows if r[0] == l) for l in labels}
first = labels[0]
for l in labels:
    print(f"{l}: median {medians[l]:.0f} req/s over {sum(r[0] == l for r in rows)} runs, {medians[l] / medians[first]:.2f}x of {first}")
PY
