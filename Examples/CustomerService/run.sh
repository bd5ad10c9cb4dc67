#!/usr/bin/env bash
# Serves the customer service on 127.0.0.1:8080 (PORT=N for another) from a
# release build, on Examples/CustomerService/local/customers.db, with a key
# and a field keyring made there on the first run (mode 0600; never commit them).
set -euo pipefail
cd "$(dirname "$0")"
make -C ../.. --no-print-directory setup
swift build -c release --package-path ../.. --product strongroom
swift build -c release
mkdir -p local && chmod 700 local
strongroom=../../.build/release/strongroom
[ -f local/db.key ] || "$strongroom" keygen --out local/db.key
[ -f local/fields.keyring ] || "$strongroom" keygen --field --out local/fields.keyring
exec .build/release/CustomerService --host 127.0.0.1 --port "${PORT:-8080}" \
  --database local/customers.db --key-file local/db.key --field-keys local/fields.keyring
