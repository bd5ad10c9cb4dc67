#!/usr/bin/env bash
# make demo: a key, an encrypted copy of a real plaintext database, its status,
# and proof that the file without the key reveals nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
strongroom="$1"
lookup="$(dirname "$1")/customer-lookup"
model="${2:-.build/debug/chinook-model}"
fields=Keys/demo-fields.keyring
sealed=demo/sealed.db
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

step "11. The app's Swift model (@Table types in Examples/ChinookModel) validates the migrated database and reads it"
"$model" validate "$db" "$key"

step "12. A model change: the app adds a TrackReview type; strongroom diff writes the migration from it"
rm -rf demo/Migrations && cp -r Migrations demo/Migrations
"$model" schema --next demo/Migrations/schema.sql
if "$strongroom" diff --migrations demo/Migrations --check; then
  echo "FAIL: diff --check found no change" >&2; exit 1
fi
"$strongroom" diff --migrations demo/Migrations --name track_reviews
sed 's/^/  /' demo/Migrations/0006_track_reviews.sql
"$strongroom" diff --migrations demo/Migrations --check
"$strongroom" migrate --database "$db" --key-file "$key" --migrations demo/Migrations
"$model" validate --next "$db" "$key"
step "13. Sealed columns: customers' and employees' personal data, under a field keyring kept apart from the database key"
if [ -f "$fields" ]; then echo "Using the existing field keyring $fields"; else "$strongroom" keygen --field --out "$fields"; fi
rm -f "$sealed" "$sealed-wal" "$sealed-shm"
"$strongroom" import --from "$plain" --database "$sealed" --key-file "$key" --field-keys "$fields" \
  --seal Customer.Email:indexed --seal Customer.Phone --seal Customer.Fax --seal Customer.Address \
  --seal Employee.Email:indexed --seal Employee.Phone --seal Employee.Fax --seal Employee.Address --seal Employee.BirthDate
"$strongroom" status --database "$sealed" --key-file "$key" | grep -E "^sealed"

step "14. Whoever holds the database key but not the keyring sees no personal value"
shell_query() { printf "PRAGMA key = \"x'%s'\";\n%s\n" "$(cat "$key")" "$1" | sqlcipher "$sealed"; }
shell_query "SELECT CustomerId, FirstName, hex(substr(Email, 1, 10)) || '…', typeof(Phone) FROM Customer LIMIT 3;" | sed 's/^/  /'
leaks=$(shell_query "SELECT count(*) FROM Customer WHERE CAST(Email AS TEXT) LIKE '%@%' OR CAST(Phone AS TEXT) GLOB '*[0-9][0-9][0-9]*';")
echo "customer e-mails or phone numbers readable with the database key alone: $leaks"
born=$(shell_query "SELECT count(*) FROM Employee WHERE CAST(BirthDate AS TEXT) LIKE '19%';")
echo "employee birth dates readable with the database key alone: $born"
if [ "$leaks" != 0 ] || [ "$born" != 0 ]; then echo "FAIL: a sealed value is readable without the keyring" >&2; exit 1; fi

step "15. The app, with the keyring, finds a customer by e-mail (blind index) and reads the plain values"
"$lookup" "$sealed" "$key" "$fields" luisg@embraer.com.br | sed 's/^/  /'

step "16. Values per field key, per sealed column"
"$strongroom" fields status --database "$sealed" --key-file "$key"

step "17. Whoever holds the database key plants a view to have the app open every e-mail for them: the app's connection has no such function"
# (A trigger on writes would do as much; this app only reads, so the plant is a
# view standing in for the table it reads. The app seals, updates and looks up
# in Swift: no SQL function on its connection sees a key.)
"$strongroom" sql --write --database "$sealed" --key-file "$key" "ALTER TABLE Customer RENAME TO Customer_rows;
  CREATE VIEW Customer AS SELECT *, strongroom_open(Email, 'Customer', 'Email', CustomerId) AS Leak FROM Customer_rows;"
if "$lookup" "$sealed" "$key" "$fields" luisg@embraer.com.br > demo/lookup.out 2>&1; then
  echo "FAIL: the app ran with a planted view that opens sealed values" >&2; exit 1
fi
sed 's/^/  /' demo/lookup.out
"$strongroom" sql --write --database "$sealed" --key-file "$key" "DROP VIEW Customer; ALTER TABLE Customer_rows RENAME TO Customer;"
echo "  view removed, table back:"
"$lookup" "$sealed" "$key" "$fields" luisg@embraer.com.br | head -n 1 | sed 's/^/    /'
step "18. Whoever holds the database key rewrites the registry, so that the next rotation would write an exact index of every phone: the tools refuse"
"$strongroom" sql --write --database "$sealed" --key-file "$key" "ALTER TABLE Customer ADD COLUMN Leak BLOB;
  UPDATE strongroom_sealed_columns SET mode = 'indexed', index_column = 'Leak' WHERE table_name = 'Customer' AND column_name = 'Phone';"
if "$strongroom" fields rotate --database "$sealed" --key-file "$key" --field-keys "$fields" > demo/rotate.out 2>&1; then
  echo "FAIL: a rotation acted on a registry someone without the field keyring changed" >&2; exit 1
fi
sed -e 's/\(Nothing was written\.\).*/\1/' -e 's/^/  /' demo/rotate.out
"$strongroom" sql --write --database "$sealed" --key-file "$key" "UPDATE strongroom_sealed_columns SET mode = 'randomized', index_column = NULL WHERE table_name = 'Customer' AND column_name = 'Phone';"
echo "  put back as it was signed:"
"$strongroom" fields rotate --database "$sealed" --key-file "$key" --field-keys "$fields" | sed 's/^/    /'
step "19. Signed rows: the app signs each customer's name, city and country with the field keyring; a changed country is refused"
"$strongroom" sql --write --database "$sealed" --key-file "$key" "ALTER TABLE Customer ADD COLUMN RowSignature BLOB;"
"$lookup" --sign-rows "$sealed" "$key" "$fields" | sed 's/^/  /'
"$lookup" --signed-rows "$sealed" "$key" "$fields" luisg@embraer.com.br | head -n 1 | sed 's/^/  /'
echo "  whoever holds the database key moves customer 1 to another country:"
"$strongroom" sql --write --database "$sealed" --key-file "$key" "UPDATE Customer SET Country = 'Nowhere' WHERE CustomerId = 1;"
if "$lookup" --signed-rows "$sealed" "$key" "$fields" luisg@embraer.com.br > demo/signed.out 2>&1; then
  echo "FAIL: the app read a signed row someone without the field keyring changed" >&2; exit 1
fi
sed 's/^/    /' demo/signed.out
"$strongroom" sql --write --database "$sealed" --key-file "$key" "UPDATE Customer SET Country = 'Brazil' WHERE CustomerId = 1;"
echo "  put back:"
"$lookup" --signed-rows "$sealed" "$key" "$fields" luisg@embraer.com.br | tail -n 1 | sed 's/^/    /'
step "20. No readable key beside the data: the key wrapped under a passphrase a password manager prints"
# demo/vault.pass stands in for a password manager (pass, secret-tool, a vault CLI).
rm -f demo/app.key.wrapped demo/app.key.wrapped.lock demo/vault.pass
(umask 077; head -c 24 /dev/urandom | base64 > demo/vault.pass)
"$strongroom" key wrap --in "$key" --out demo/app.key.wrapped --passphrase-command "cat demo/vault.pass" | sed 's/^/  /'
head -c 25 demo/app.key.wrapped | sed 's/^/  first line of the wrapped file: /'
"$strongroom" status --database "$db" --migrations demo/Migrations --key-file demo/app.key.wrapped --passphrase-command "cat demo/vault.pass" | grep -E "^key source"
before=$(sha256sum "$db" | cut -c1-16)
(umask 077; head -c 24 /dev/urandom | base64 > demo/vault.pass.new)
"$strongroom" key rewrap --file demo/app.key.wrapped --passphrase-command "cat demo/vault.pass" \
  --new-passphrase-command "cat demo/vault.pass.new" | sed 's/^/  /'
mv demo/vault.pass.new demo/vault.pass
after=$(sha256sum "$db" | cut -c1-16)
echo "  the database before and after the new passphrase: $before $after"
if [ "$before" != "$after" ]; then echo "FAIL: a rewrap changed the database" >&2; exit 1; fi
"$strongroom" status --database "$db" --migrations demo/Migrations --key-file demo/app.key.wrapped --passphrase-command "cat demo/vault.pass" | grep -E "^tables"

echo
echo "Demo complete: $db is encrypted with $key and at the latest schema version;"
echo "$sealed also keeps its customers' and employees' personal data sealed under $fields."
echo
echo "Next: a service on it. Examples/CustomerService is a JSON API on Hummingbird with a sealed"
echo "e-mail and note, systemd credentials and a unit file: see Examples/CustomerService/README.md"
echo "(bash Examples/CustomerService/run.sh serves it on 127.0.0.1:8080; make test-example tests it)."
