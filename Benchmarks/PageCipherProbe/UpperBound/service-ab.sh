#!/usr/bin/env bash
# POST /customers, contenders interleaved: each round starts every contender in
# turn on a new file, seeds 10,000 customers, runs 3 × wrk -t 2 -c 64 -d 10s
# create.lua and stops it; then the medians per contender. One line per run.
#
#   service-ab.sh ROUNDS LABEL=KIND:BINARY[:PRELOAD] ...
#     KIND: grdb (Benchmarks/GRDBService), strongroom (encrypted, a raw key),
#           plain (the example service on a plaintext file, --plaintext)
#     PRELOAD: a library for LD_PRELOAD (preload.c) in that contender only
#   STRONGROOM=path/to/strongroom (keygen), PORT (default 18080)
set -euo pipefail
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

run_one() {
  local label=$1 kind=$2 binary=$3 preload=$4 dir="$work/run" pid
  rm -rf "$dir"; mkdir -m 700 "$dir"
  case "$kind" in
    grdb) "$binary" --host 127.0.0.1 --port "$port" --database "$dir/c.db" >"$dir/log" 2>&1 & ;;
    strongroom) env ${preload:+LD_PRELOAD=$preload} "$binary" --host 127.0.0.1 --port "$port" --database "$dir/c.db" \
                  --key-file "$work/db.key" --field-keys "$work/fields.keyring" --readers 4 --log-level notice \
                  --migrations "$migrations" >"$dir/log" 2>&1 & ;;
    plain) env ${preload:+LD_PRELOAD=$preload} "$binary" --host 127.0.0.1 --port "$port" --database "$dir/c.db" --plaintext \
             --field-keys "$work/fields.keyring" --readers 4 --log-level notice --migrations "$migrations" >"$dir/log" 2>&1 & ;;
    *) echo "service-ab: unknown kind $kind" >&2; exit 2 ;;
  esac
  pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/customers/1" && break; sleep 0.1; done
  wrk -t 1 -c 1 -d 600s -s "$load/seed.lua" "http://127.0.0.1:$port" -- 10000 seed >/dev/null
  for r in 1 2 3; do
    wrk -t 2 -c 64 -d 10s --latency -s "$load/create.lua" "http://127.0.0.1:$port" -- 10000 "n$RANDOM$r" | tail -1 |
      python3 -c 'import json, sys; j = json.load(sys.stdin); print(sys.argv[1], round(j["requests_per_s"]), j["latency_us"]["p99"], j["non2xx"])' "$label"
  done
  kill -TERM "$pid"; wait "$pid" || true
  grep -h '^preload:' "$dir/log" >&2 || true
}

echo "label req/s p99_us non2xx" > "$work/runs"
for _ in $(seq "$rounds"); do
  for contender in "$@"; do
    label=${contender%%=*}; spec=${contender#*=}
    IFS=: read -r kind binary preload <<<"$spec"
    run_one "$label" "$kind" "$binary" "${preload:-}" | tee -a "$work/runs"
  done
done
python3 - "$work/runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]).read().splitlines()[1:]]
labels = list(dict.fromkeys(r[0] for r in rows))
medians = {l: statistics.median(int(r[1]) for r in rows if r[0] == l) for l in labels}
first = labels[0]
for l in labels:
    print(f"{l}: median {medians[l]:.0f} req/s over {sum(r[0] == l for r in rows)} runs, {medians[l] / medians[first]:.2f}x of {first}; non-2xx {sum(int(r[3]) for r in rows if r[0] == l)}")
PY
