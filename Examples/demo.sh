#!/usr/bin/env bash
# make demo: a key, an encrypted copy of a real plaintext database, its status,
# and proof that the file without the key reveals nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
strongroom="$1"
key=Keys/demo.key
plain=Examples/chinook.sqlite
db=demo/chinook.db
customer="Gonçalves"   # a customer's surname in the Chinook data

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. A database key (Keys/ is kept out of git)"
if [ -f "$key" ]; then
  echo "Using the existing key file $key"
else
  "$strongroom" keygen --out "$key"
fi
ls -l "$key" | awk '{print $1, $NF}'

step "2. Encrypt the plaintext Chinook database into $db"
mkdir -p demo
rm -f "$db" "$db-wal" "$db-shm"
"$strongroom" import --from "$plain" --database "$db" --key-file "$key"

step "3. Status"
"$strongroom" status --database "$db" --key-file "$key"

step "4. Without the key the file reveals nothing"
printf 'first 16 bytes of %s:  ' "$plain"; head -c 16 "$plain" | od -An -c | tr -s ' '
printf 'first 16 bytes of %s:  ' "$db"; head -c 16 "$db" | od -An -tx1 | tr -s ' '
count_in() { grep -c -a -F "$1" "$2" || true; }
echo "'SQLite format 3' in $plain: $(count_in 'SQLite format 3' "$plain"); in $db: $(count_in 'SQLite format 3' "$db")"
echo "'$customer' in $plain: $(count_in "$customer" "$plain"); in $db: $(count_in "$customer" "$db")"
if [ "$(count_in 'SQLite format 3' "$db")" != 0 ] || [ "$(count_in "$customer" "$db")" != 0 ]; then
  echo "FAIL: plaintext found in $db" >&2; exit 1
fi
echo "The stock sqlcipher shell without a key:"
sqlcipher "$db" "SELECT count(*) FROM Customer;" 2>&1 | sed 's/^/  /' || true

step "5. With the key, any SQLCipher tool reads it (key passed on stdin, never argv)"
printf "PRAGMA key = \"x'%s'\";\nSELECT FirstName || ' ' || LastName FROM Customer WHERE LastName = '%s';\n" "$(cat "$key")" "$customer" \
  | sqlcipher "$db" | sed 's/^/  /'

step "6. Adopt the imported schema as version 1 of Migrations/"
"$strongroom" baseline --database "$db" --version 1 --key-file "$key"

step "7. Plan, then migrate: a new table, a new column, an index, and Customer.Fax dropped by a rebuild of a parent table"
"$strongroom" migrate --database "$db" --key-file "$key" --dry-run
"$strongroom" migrate --database "$db" --key-file "$key"

step "8. Verify: history, checksums, drift against a replay of Migrations/, integrity"
"$strongroom" verify --database "$db" --key-file "$key"

step "9. Status after migrating: Invoice and CustomerNote (children of Customer) kept every row"
"$strongroom" status --database "$db" --key-file "$key" | grep -E "Customer|Invoice |schema|tables"

step "10. A new app: migrate creates its encrypted database from Migrations/ and applies every version"
rm -f demo/new-app.db demo/new-app.db-wal demo/new-app.db-shm demo/new-app.db-migrate.lock
"$strongroom" migrate --database demo/new-app.db --key-file "$key"
"$strongroom" verify --database demo/new-app.db --key-file "$key"
echo
echo "Demo complete: $db is encrypted with $key and at the latest schema version."
