-- ALTER TABLE … RENAME COLUMN / DROP COLUMN corpus for AlterColumnDifferentialTests.
--
-- Each case: `-- case: name`, `-- source:` (where the scenario comes from; about
-- 40 are adapted from SQLite's own test/altercol.test, alterdropcol.test,
-- alterdropcol2.test, altertab2.test and altertab3.test, which SQLite dedicates
-- to the public domain), `-- native:` (what sqlite3 3.40 did when the case was
-- written; informative, the test asks sqlite3 again), optionally `-- ours:
-- refuses|differs <reason>` (a deliberate difference from SQLite's result), then
-- the sections `-- setup`, `-- alter` (one statement) and `-- then` (a follow-up).
-- Setup SQL must run on SQLite 3.15.2 (SQLCipher 3.4.1) and 3.40 alike.

-- case: trig-other-insert-rename-source-col
-- source: bug report: trigger on other table (trigger on person copies NEW.name into audit.name; rename person.name)
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER);
CREATE TABLE audit(id INTEGER PRIMARY KEY, name TEXT, action TEXT);
CREATE TRIGGER person_ai AFTER INSERT ON person BEGIN
  INSERT INTO audit(name, action) VALUES (NEW.name, 'insert');
END;
INSERT INTO person(id, name, age) VALUES (1, 'ann', 30), (2, 'bob', 40), (5, 'cy', 50);
DELETE FROM person WHERE id = 2;
-- alter
ALTER TABLE person RENAME COLUMN name TO full_name;
-- then
INSERT INTO person(full_name, age) VALUES ('dee', 60);
SELECT id, name, action FROM audit ORDER BY id;

-- case: trig-other-insert-rename-target-col
-- source: bug report: trigger on other table (trigger on person writes audit(name); rename audit.name)
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER);
CREATE TABLE audit(id INTEGER PRIMARY KEY, name TEXT, action TEXT);
CREATE TRIGGER person_ai AFTER INSERT ON person BEGIN
  INSERT INTO audit(name, action) VALUES (NEW.name, 'insert');
END;
INSERT INTO person(id, name, age) VALUES (1, 'ann', 30), (2, 'bob', 40), (5, 'cy', 50);
DELETE FROM person WHERE id = 2;
-- alter
ALTER TABLE audit RENAME COLUMN name TO label;
-- then
INSERT INTO person(name, age) VALUES ('dee', 60);
SELECT id, label, action FROM audit ORDER BY id;

-- case: trig-other-update-set-rename-target-col
-- source: bug report: trigger on other table (UPDATE other SET name = NEW.name WHERE name IS NOT NEW.name; rename the other table's name)
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE badge(person_id INTEGER, name TEXT, printed INTEGER DEFAULT 0);
CREATE TRIGGER person_au AFTER UPDATE OF name ON person BEGIN
  UPDATE badge SET name = NEW.name, printed = 0 WHERE badge.person_id = OLD.id AND name IS NOT NEW.name;
END;
INSERT INTO person VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
INSERT INTO badge(person_id, name, printed) VALUES (1, 'ann', 1), (2, 'bob', 1), (3, 'cy', 1);
DELETE FROM badge WHERE person_id = 2;
-- alter
ALTER TABLE badge RENAME COLUMN name TO badge_name;
-- then
UPDATE person SET name = 'ANN' WHERE id = 1;
SELECT rowid, * FROM badge ORDER BY rowid;

-- case: trig-other-delete-where-rename-target-col
-- source: bug report: trigger on other table (DELETE FROM other WHERE name = OLD.name; rename the other table's name)
-- native: ok
-- setup
CREATE TABLE tag(id INTEGER PRIMARY KEY, name TEXT UNIQUE);
CREATE TABLE tagging(item INTEGER, name TEXT);
CREATE TRIGGER tag_ad AFTER DELETE ON tag BEGIN
  DELETE FROM tagging WHERE name = OLD.name;
END;
INSERT INTO tag VALUES (1, 'red'), (2, 'green'), (3, 'blue');
INSERT INTO tagging VALUES (10, 'red'), (11, 'green'), (12, 'blue'), (13, 'red');
DELETE FROM tagging WHERE item = 11;
-- alter
ALTER TABLE tagging RENAME COLUMN name TO tag_name;
-- then
DELETE FROM tag WHERE id = 1;
SELECT rowid, * FROM tagging ORDER BY rowid;

-- case: trig-insert-select-subquery-rename-source
-- source: bug report: trigger on other table (INSERT INTO log(name) SELECT name FROM customer ...; rename customer.name)
-- native: ok
-- setup
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);
CREATE TABLE log(name TEXT, msg TEXT);
CREATE TRIGGER orders_ai AFTER INSERT ON orders BEGIN
  INSERT INTO log(name, msg) SELECT name, 'order ' || NEW.id FROM customer WHERE customer.id = NEW.customer_id;
END;
INSERT INTO customer VALUES (1, 'acme'), (2, 'globex'), (4, 'initech');
INSERT INTO log VALUES ('seed1', 'x'), ('seed2', 'y'), ('seed3', 'z');
DELETE FROM log WHERE name = 'seed2';
INSERT INTO orders VALUES (1, 1, 9.5), (2, 4, 3.0);
-- alter
ALTER TABLE customer RENAME COLUMN name TO company;
-- then
INSERT INTO orders(customer_id, total) VALUES (2, 1.25);
SELECT rowid, * FROM log ORDER BY rowid;

-- case: trig-three-tables-rename-subquery-table
-- source: corpus: same column name a in the triggering table, the updated table and a correlated subquery table; rename t3.a
-- native: ok
-- setup
CREATE TABLE t1(a, b);
CREATE TABLE t2(a, n);
CREATE TABLE t3(a, w);
CREATE TRIGGER t1_ai AFTER INSERT ON t1 BEGIN
  UPDATE t2 SET n = (SELECT count(*) FROM t3 WHERE t3.a = t2.a) + NEW.b WHERE a = NEW.a;
END;
INSERT INTO t1 VALUES (1, 0), (2, 0), (3, 0);
DELETE FROM t1 WHERE a = 2;
INSERT INTO t2 VALUES (1, 0), (2, 0), (3, 0);
DELETE FROM t2 WHERE a = 1;
INSERT INTO t3 VALUES (2, 'x'), (2, 'y'), (3, 'z'), (9, 'q');
DELETE FROM t3 WHERE w = 'q';
-- alter
ALTER TABLE t3 RENAME COLUMN a TO t3a;
-- then
INSERT INTO t1 VALUES (2, 100);
SELECT rowid, * FROM t2 ORDER BY rowid;

-- case: trig-three-tables-rename-updated-table
-- source: corpus: same column name a in three tables; rename t2.a (the UPDATE target: unqualified a in SET/WHERE is t2.a)
-- native: ok
-- setup
CREATE TABLE t1(a, b);
CREATE TABLE t2(a, n);
CREATE TABLE t3(a, w);
CREATE TRIGGER t1_ai AFTER INSERT ON t1 BEGIN
  UPDATE t2 SET n = (SELECT count(*) FROM t3 WHERE t3.a = t2.a) + NEW.b WHERE a = NEW.a;
END;
INSERT INTO t1 VALUES (1, 0), (2, 0), (3, 0);
DELETE FROM t1 WHERE a = 2;
INSERT INTO t2 VALUES (1, 0), (2, 0), (3, 0);
DELETE FROM t2 WHERE a = 1;
INSERT INTO t3 VALUES (2, 'x'), (2, 'y'), (3, 'z'), (9, 'q');
DELETE FROM t3 WHERE w = 'q';
-- alter
ALTER TABLE t2 RENAME COLUMN a TO k2;
-- then
INSERT INTO t1 VALUES (3, 100);
SELECT rowid, * FROM t2 ORDER BY rowid;

-- case: trig-when-new-old-rename-self
-- source: corpus: WHEN clause with NEW./OLD. references on the renamed table
-- native: ok
-- setup
CREATE TABLE item(id INTEGER PRIMARY KEY, qty INTEGER, price REAL);
CREATE TABLE restock(item_id INTEGER, qty INTEGER);
CREATE TRIGGER item_low AFTER UPDATE ON item WHEN NEW.qty < 5 AND OLD.qty >= 5 BEGIN
  INSERT INTO restock(item_id, qty) VALUES (NEW.id, 10 - NEW.qty);
END;
INSERT INTO item VALUES (1, 7, 1.5), (2, 9, 2.5), (3, 20, 0.5);
INSERT INTO restock VALUES (0, 1), (0, 2), (0, 3);
DELETE FROM restock WHERE qty = 2;
-- alter
ALTER TABLE item RENAME COLUMN qty TO quantity;
-- then
UPDATE item SET quantity = 2 WHERE id = 1;
UPDATE item SET quantity = 19 WHERE id = 3;
SELECT rowid, * FROM restock ORDER BY rowid;

-- case: trig-when-subquery-other-table
-- source: corpus: WHEN clause with a scalar subquery on another table that has a column of the same name as the triggering table
-- native: ok
-- setup
CREATE TABLE settings(key TEXT PRIMARY KEY, enabled INTEGER);
CREATE TABLE events(id INTEGER PRIMARY KEY, kind TEXT, enabled INTEGER);
CREATE TABLE notices(kind TEXT);
CREATE TRIGGER events_ai AFTER INSERT ON events
WHEN (SELECT enabled FROM settings WHERE key = NEW.kind) = 1 AND NEW.enabled BEGIN
  INSERT INTO notices VALUES (NEW.kind);
END;
INSERT INTO settings VALUES ('mail', 1), ('sms', 0), ('push', 1);
DELETE FROM settings WHERE key = 'push';
INSERT INTO notices VALUES ('seed1'), ('seed2');
INSERT INTO events VALUES (1, 'mail', 1), (2, 'sms', 1), (3, 'mail', 0);
DELETE FROM events WHERE id = 2;
-- alter
ALTER TABLE settings RENAME COLUMN enabled TO is_on;
-- then
INSERT INTO events(kind, enabled) VALUES ('mail', 1);
INSERT INTO events(kind, enabled) VALUES ('sms', 1);
SELECT rowid, * FROM notices ORDER BY rowid;

-- case: trig-update-of-list-quoted-names
-- source: sqlite altercol.test 7.0
-- native: ok
-- setup
CREATE TABLE c(x);
INSERT INTO c VALUES (0);
CREATE TABLE t6("col a", "col b", "col c");
CREATE TRIGGER zzz AFTER UPDATE OF "col a", "col c" ON t6 BEGIN
  UPDATE c SET x = x + 1;
END;
INSERT INTO t6 VALUES (0, 0, 0), (1, 1, 1), (2, 2, 2);
DELETE FROM t6 WHERE "col a" = 1;
UPDATE t6 SET "col c" = 1;
-- alter
ALTER TABLE t6 RENAME "col c" TO "col 3";
-- then
UPDATE t6 SET "col 3" = 0;
UPDATE t6 SET "col b" = 5;
SELECT * FROM c;

-- case: trig-update-of-other-table-same-name
-- source: corpus: AFTER UPDATE OF name ON person; rename audit.name (the UPDATE OF list names person.name and must stay)
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE audit(id INTEGER PRIMARY KEY, name TEXT);
CREATE TRIGGER person_au AFTER UPDATE OF name ON person BEGIN
  INSERT INTO audit(name) VALUES (NEW.name);
END;
INSERT INTO person VALUES (1, 'ann'), (2, 'bob'), (4, 'cy');
INSERT INTO audit VALUES (1, 'seed'), (3, 'seed2');
-- alter
ALTER TABLE audit RENAME COLUMN name TO label;
-- then
UPDATE person SET name = 'BOB' WHERE id = 2;
SELECT * FROM audit ORDER BY id;

-- case: trig-raise-message-mentions-column
-- source: corpus: BEFORE UPDATE trigger with RAISE(ABORT, '...balance...'): the message literal must not be renamed
-- native: ok
-- setup
CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER);
CREATE TRIGGER account_bu BEFORE UPDATE ON account WHEN NEW.balance < 0 BEGIN
  SELECT RAISE(ABORT, 'balance must not be negative');
END;
INSERT INTO account VALUES (1, 10), (2, 20), (7, 70);
DELETE FROM account WHERE id = 2;
-- alter
ALTER TABLE account RENAME COLUMN balance TO amount;
-- then
UPDATE account SET amount = amount + 5;
SELECT * FROM account ORDER BY id;

-- case: trig-row-value-update-set
-- source: sqlite altertab2.test 4.0-4.3
-- native: ok
-- setup
CREATE TABLE t1(a, b, c, d, e, f);
CREATE TRIGGER r1 AFTER INSERT ON t1 WHEN new.a NOT NULL BEGIN
  UPDATE t1 SET (c, d) = (a, b);
END;
INSERT INTO t1 VALUES (1, 2, 0, 0, 5, 6), (7, 8, 0, 0, 11, 12), (13, 14, 0, 0, 17, 18);
DELETE FROM t1 WHERE a = 7;
-- alter
ALTER TABLE t1 RENAME d TO ddd;
-- then
INSERT INTO t1(a, b) VALUES (20, 21);
SELECT rowid, * FROM t1 ORDER BY rowid;

-- case: trig-every-statement-kind
-- source: sqlite altercol.test 3.0-3.4
-- native: ok
-- setup
CREATE TABLE t4(x, y, z);
CREATE TRIGGER ttt AFTER INSERT ON t4 WHEN new.y < 0 BEGIN
  SELECT x, y, z FROM t4;
  DELETE FROM t4 WHERE y = 32;
  UPDATE t4 SET x = y + 1, y = 0 WHERE y = 33;
  INSERT INTO t4(x, y, z) SELECT 4, 5, 6 WHERE 0;
END;
INSERT INTO t4 VALUES (3, 2, 1), (9, 9, 9), (1, 32, 1), (2, 33, 2);
DELETE FROM t4 WHERE x = 9;
-- alter
ALTER TABLE t4 RENAME y TO abc;
-- then
INSERT INTO t4 VALUES (6, 5, 4);
INSERT INTO t4 VALUES (7, -1, 0);
SELECT rowid, * FROM t4 ORDER BY rowid;

-- case: trig-cte-in-body
-- source: sqlite altertab2.test 3.3
-- native: ok
-- setup
CREATE TABLE t1(a, b, c);
CREATE TABLE t2(x);
CREATE TABLE log_entry(col1);
CREATE TRIGGER tr1 AFTER INSERT ON t1 BEGIN
  INSERT INTO t2
    WITH xyz(x) AS (SELECT col1 FROM log_entry)
    SELECT x FROM xyz;
END;
INSERT INTO log_entry VALUES (5), (6), (7);
DELETE FROM log_entry WHERE col1 = 6;
INSERT INTO t1 VALUES (1, 2, 3);
-- alter
ALTER TABLE log_entry RENAME col1 TO newname;
-- then
INSERT INTO t1 VALUES (4, 5, 6);
SELECT rowid, * FROM t2 ORDER BY rowid;

-- case: trig-compound-select-order-by
-- source: sqlite altertab2.test 7.0-7.3
-- native: ok
-- setup
CREATE TABLE t1(a, b, c, d, e, f);
CREATE TABLE t2(x, y, z);
INSERT INTO t1 VALUES (1, 2, 3, 4, 5, 6);
CREATE TRIGGER r1 AFTER INSERT ON t1 BEGIN
  INSERT INTO t2
  SELECT a, b, c FROM t1 UNION SELECT d, e, f FROM t1 ORDER BY b, c;
END;
INSERT INTO t1 VALUES (2, 3, 4, 5, 6, 7);
DELETE FROM t2 WHERE rowid = 2;
-- alter
ALTER TABLE t1 RENAME c TO ccc;
-- then
INSERT INTO t1 VALUES (0, 0, 0, 0, 0, 0);
SELECT rowid, * FROM t2 ORDER BY rowid;

-- case: trig-selects-view-over-renamed-table
-- source: sqlite altertab2.test 8.0-8.3
-- native: error: error in trigger tr after rename: no such column: a
-- setup
CREATE TABLE t1(a, b, c);
CREATE TABLE t2(a, b, c);
CREATE TABLE t3(d, e, f);
INSERT INTO t1 VALUES (1, 2, 3);
INSERT INTO t2 VALUES (1, 2, 3);
CREATE VIEW v1 AS SELECT * FROM t1;
CREATE TRIGGER tr AFTER INSERT ON t3 BEGIN
  UPDATE t2 SET a = new.d;
  SELECT a, b, c FROM v1;
END;
INSERT INTO t3 VALUES (1, 2, 3);
INSERT INTO t1 VALUES (4, 5, 6), (7, 8, 9);
DELETE FROM t1 WHERE a = 4;
-- alter
ALTER TABLE t1 RENAME a TO aaa;
-- then
INSERT INTO t3 VALUES (4, 5, 6);

-- case: trig-instead-of-view-new-ref
-- source: corpus: INSTEAD OF INSERT trigger on a view selecting the renamed column unaliased (NEW.name is the view's column)
-- native: error: error in trigger person_v_ii after rename: no such column: NEW.name
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT);
CREATE VIEW person_v AS SELECT id, name FROM person;
CREATE TRIGGER person_v_ii INSTEAD OF INSERT ON person_v BEGIN
  INSERT INTO person(name) VALUES (NEW.name);
END;
INSERT INTO person VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
DELETE FROM person WHERE id = 2;
-- alter
ALTER TABLE person RENAME COLUMN name TO nm;
-- then
INSERT INTO person_v(name) VALUES ('dee');

-- case: trig-instead-of-view-aliased
-- source: corpus: INSTEAD OF INSERT trigger on a view that aliases the renamed column (SELECT name AS name)
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT);
CREATE VIEW person_v AS SELECT id, name AS name FROM person;
CREATE TRIGGER person_v_ii INSTEAD OF INSERT ON person_v BEGIN
  INSERT INTO person(name) VALUES (NEW.name);
END;
CREATE TRIGGER person_v_iu INSTEAD OF UPDATE OF name ON person_v BEGIN
  UPDATE person SET name = NEW.name WHERE id = OLD.id;
END;
INSERT INTO person VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
DELETE FROM person WHERE id = 2;
-- alter
ALTER TABLE person RENAME COLUMN name TO nm;
-- then
INSERT INTO person_v(name) VALUES ('dee');
UPDATE person_v SET name = 'ANN' WHERE id = 1;
SELECT * FROM person_v ORDER BY id;

-- case: trig-stock-rename-line-qty
-- source: corpus: UPDATE stock SET qty = qty - NEW.qty (same name in both tables); rename orderline.qty
-- native: ok
-- setup
CREATE TABLE stock(sku TEXT PRIMARY KEY, qty INTEGER);
CREATE TABLE orderline(order_id INTEGER, sku TEXT, qty INTEGER);
CREATE TRIGGER orderline_ai AFTER INSERT ON orderline BEGIN
  UPDATE stock SET qty = qty - NEW.qty WHERE sku = NEW.sku;
END;
INSERT INTO stock VALUES ('a', 100), ('b', 50), ('c', 10);
DELETE FROM stock WHERE sku = 'c';
INSERT INTO orderline VALUES (1, 'a', 5), (1, 'b', 2), (2, 'a', 1);
DELETE FROM orderline WHERE order_id = 1 AND sku = 'b';
-- alter
ALTER TABLE orderline RENAME COLUMN qty TO amount;
-- then
INSERT INTO orderline(order_id, sku, amount) VALUES (3, 'b', 7);
SELECT * FROM stock ORDER BY sku;

-- case: trig-stock-rename-stock-qty
-- source: corpus: UPDATE stock SET qty = qty - NEW.qty (same name in both tables); rename stock.qty
-- native: ok
-- setup
CREATE TABLE stock(sku TEXT PRIMARY KEY, qty INTEGER);
CREATE TABLE orderline(order_id INTEGER, sku TEXT, qty INTEGER);
CREATE TRIGGER orderline_ai AFTER INSERT ON orderline BEGIN
  UPDATE stock SET qty = qty - NEW.qty WHERE sku = NEW.sku;
END;
INSERT INTO stock VALUES ('a', 100), ('b', 50), ('c', 10);
DELETE FROM stock WHERE sku = 'c';
INSERT INTO orderline VALUES (1, 'a', 5), (1, 'b', 2), (2, 'a', 1);
DELETE FROM orderline WHERE order_id = 1 AND sku = 'b';
-- alter
ALTER TABLE stock RENAME COLUMN qty TO on_hand;
-- then
INSERT INTO orderline(order_id, sku, qty) VALUES (3, 'b', 7);
SELECT * FROM stock ORDER BY sku;

-- case: trig-subquery-table-alias
-- source: corpus: trigger on log with a subquery using a table alias (FROM person AS p WHERE p.name = NEW.name); rename person.name
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, visits INTEGER DEFAULT 0);
CREATE TABLE visit(name TEXT, at TEXT);
CREATE TRIGGER visit_ai AFTER INSERT ON visit BEGIN
  UPDATE person SET visits = visits + 1
   WHERE id IN (SELECT p.id FROM person AS p WHERE p.name = NEW.name);
END;
INSERT INTO person(id, name) VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
DELETE FROM person WHERE id = 2;
INSERT INTO visit VALUES ('ann', 'mon'), ('bob', 'tue'), ('cy', 'wed');
DELETE FROM visit WHERE at = 'tue';
-- alter
ALTER TABLE person RENAME COLUMN name TO handle;
-- then
INSERT INTO visit VALUES ('cy', 'thu');
SELECT * FROM person ORDER BY id;

-- case: trig-broken-on-renamed-table
-- source: sqlite altercol.test 17.0-17.1
-- native: error: error in trigger u7t: no such table: main.u8
-- setup
CREATE TABLE u7(x, y, z);
INSERT INTO u7 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM u7 WHERE x = 4;
CREATE TRIGGER u7t AFTER INSERT ON u7 BEGIN
  INSERT INTO u8 VALUES (new.x, new.y, new.z);
END;
-- alter
ALTER TABLE u7 RENAME x TO xxx;
-- then
SELECT * FROM u7;

-- case: trig-broken-on-unrelated-table
-- source: sqlite altertab3.test 4.0-4.2
-- native: error: error in trigger tr1: no such table: main.t2
-- setup
CREATE TABLE t1(a, b);
CREATE TABLE t3(e, f);
INSERT INTO t1 VALUES (1, 2), (3, 4);
CREATE TRIGGER tr1 AFTER INSERT ON t1 BEGIN
  INSERT INTO t2 VALUES (new.a, new.b);
END;
INSERT INTO t3 VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM t3 WHERE e = 3;
-- alter
ALTER TABLE t3 RENAME e TO eee;
-- then
SELECT rowid, * FROM t3;

-- case: trig-drop-col-used-as-new
-- source: sqlite alterdropcol2.test 2.8.1
-- native: error: error in trigger tr1 after drop column: no such column: new.w
-- setup
CREATE TABLE log(l);
CREATE TABLE c1(u, v, w);
CREATE TRIGGER tr1 AFTER INSERT ON c1 BEGIN
  INSERT INTO log VALUES (new.w);
END;
INSERT INTO c1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM c1 WHERE u = 4;
-- alter
ALTER TABLE c1 DROP w;
-- then
SELECT rowid, * FROM log;

-- case: trig-drop-col-used-in-when
-- source: corpus: DROP COLUMN of a column used only in a trigger WHEN clause
-- native: error: error in trigger item_au after drop column: no such column: OLD.flag
-- setup
CREATE TABLE item(id INTEGER PRIMARY KEY, qty INTEGER, flag INTEGER);
CREATE TABLE hits(n);
CREATE TRIGGER item_au AFTER UPDATE ON item WHEN OLD.flag IS NOT NEW.flag BEGIN
  INSERT INTO hits VALUES (NEW.id);
END;
INSERT INTO item VALUES (1, 5, 0), (2, 6, 0), (3, 7, 1);
DELETE FROM item WHERE id = 2;
INSERT INTO hits VALUES (0);
-- alter
ALTER TABLE item DROP COLUMN flag;
-- then
SELECT * FROM hits;

-- case: trig-drop-col-only-in-update-of
-- source: corpus: DROP COLUMN of a column named only in a trigger's UPDATE OF list (native leaves the list as it is)
-- native: ok
-- setup
CREATE TABLE t(a, b, c);
CREATE TABLE cnt(n);
INSERT INTO cnt VALUES (0);
CREATE TRIGGER tr AFTER UPDATE OF c ON t BEGIN
  UPDATE cnt SET n = n + 1;
END;
INSERT INTO t VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3);
DELETE FROM t WHERE a = 2;
UPDATE t SET c = 9;
-- alter
ALTER TABLE t DROP COLUMN c;
-- then
UPDATE t SET b = b + 1;
SELECT * FROM cnt;
SELECT rowid, * FROM t ORDER BY rowid;

-- case: trig-drop-target-col-of-insert-list
-- source: corpus: DROP COLUMN of audit.name written by a trigger on person (INSERT INTO audit(name, ...)); native does not check INSERT column lists
-- native: ok
-- ours: refuses SQLite drops audit.name and keeps a trigger that inserts into it, which then fails at its next firing; we refuse and name the trigger
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE audit(id INTEGER PRIMARY KEY, name TEXT, action TEXT);
CREATE TRIGGER person_ai AFTER INSERT ON person BEGIN
  INSERT INTO audit(name, action) VALUES (NEW.name, 'insert');
END;
INSERT INTO person VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
DELETE FROM audit WHERE id = 2;
-- alter
ALTER TABLE audit DROP COLUMN name;
-- then
SELECT * FROM audit ORDER BY id;

-- case: trig-drop-same-name-third-table
-- source: corpus: trigger on person writes audit.name; drop the column name of a third table tag
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE audit(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE tag(id INTEGER PRIMARY KEY, name TEXT, color TEXT);
CREATE TRIGGER person_ai AFTER INSERT ON person BEGIN
  INSERT INTO audit(name) VALUES (NEW.name);
  UPDATE tag SET color = 'used' WHERE color = NEW.name;
END;
INSERT INTO tag VALUES (1, 'x', 'ann'), (2, 'y', 'red'), (3, 'z', 'dee');
DELETE FROM tag WHERE id = 2;
INSERT INTO person VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
-- alter
ALTER TABLE tag DROP COLUMN name;
-- then
INSERT INTO person(name) VALUES ('dee');
SELECT * FROM audit ORDER BY id;
SELECT * FROM tag ORDER BY id;

-- case: trig-drop-positional-insert-target
-- source: corpus: a trigger on another table does INSERT INTO t VALUES (1, 2, 3) without a column list; DROP COLUMN of t (native accepts it, the trigger breaks only when it fires)
-- native: ok
-- ours: refuses SQLite drops t.c and keeps a trigger that inserts three values into the two columns left, which fails at its next firing; we refuse and name the trigger
-- setup
CREATE TABLE t(a, b, c);
CREATE TABLE src(x);
CREATE TRIGGER src_ai AFTER INSERT ON src BEGIN
  INSERT INTO t VALUES (NEW.x, NEW.x, NEW.x);
END;
INSERT INTO src VALUES (1), (2), (3);
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t DROP COLUMN c;
-- then
SELECT rowid, * FROM t ORDER BY rowid;

-- case: trig-drop-unrelated-col-trigger-kept
-- source: corpus: DROP COLUMN of a column not used by the table's own triggers; the triggers must survive the rebuild and still fire
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, junk);
CREATE TABLE log(what);
CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN
  INSERT INTO log VALUES ('ins ' || NEW.a || ' ' || NEW.b);
END;
CREATE TRIGGER t_bd BEFORE DELETE ON t BEGIN
  INSERT INTO log VALUES ('del ' || OLD.id);
END;
INSERT INTO t(a, b, junk) VALUES (1, 2, 'j'), (3, 4, 'k'), (5, 6, 'l');
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t DROP COLUMN junk;
-- then
INSERT INTO t(a, b) VALUES (7, 8);
DELETE FROM t WHERE id = 1;
SELECT rowid, * FROM log ORDER BY rowid;

-- case: trig-drop-col-used-in-other-table-trigger
-- source: bug report: trigger on other table (trigger on orders reads customer.name in a subquery; drop customer.name)
-- native: error: error in trigger orders_ai after drop column: no such column: name
-- setup
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER);
CREATE TABLE log(name TEXT, msg TEXT);
CREATE TRIGGER orders_ai AFTER INSERT ON orders BEGIN
  INSERT INTO log(name, msg) SELECT name, 'order ' || NEW.id FROM customer WHERE customer.id = NEW.customer_id;
END;
INSERT INTO customer VALUES (1, 'acme', 'x'), (2, 'globex', 'y'), (4, 'initech', 'z');
INSERT INTO orders VALUES (1, 1), (2, 4);
-- alter
ALTER TABLE customer DROP COLUMN name;
-- then
SELECT * FROM log;

-- case: view-plain-select-list
-- source: sqlite altercol.test 8.0-8.1
-- native: ok
-- setup
CREATE TABLE a1(x INTEGER, y TEXT, z BLOB, PRIMARY KEY(x));
CREATE TABLE a2(a, b, c);
CREATE VIEW v1 AS SELECT x, y, z FROM a1;
INSERT INTO a1 VALUES (1, 'one', x'01'), (2, 'two', x'02'), (3, 'three', x'03');
DELETE FROM a1 WHERE x = 2;
INSERT INTO a2 VALUES (1, 2, 3);
-- alter
ALTER TABLE a1 RENAME y TO yyy;
-- then
SELECT * FROM v1 ORDER BY x;

-- case: view-alias-kept
-- source: corpus: view SELECT a AS a2: only the expression is renamed, the alias stays
-- native: ok
-- setup
CREATE TABLE t(a INTEGER, b TEXT);
CREATE VIEW v AS SELECT a AS a2, b FROM t WHERE a > 0;
INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z');
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t RENAME COLUMN a TO z;
-- then
SELECT a2, b FROM v ORDER BY a2;

-- case: view-alias-swap-with-column-names
-- source: corpus: view SELECT x AS a, a AS x where a and x are both columns; rename a
-- native: ok
-- setup
CREATE TABLE t(a INTEGER, x INTEGER);
CREATE VIEW v AS SELECT x AS a, a AS x FROM t WHERE a < x ORDER BY a;
INSERT INTO t VALUES (1, 10), (2, 20), (3, 30), (40, 4);
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t RENAME COLUMN a TO b;
-- then
SELECT a, x FROM v;

-- case: view-alias-where-uses-alias
-- source: sqlite altercol.test 15.0-15.2
-- native: ok
-- setup
CREATE TABLE xxx(a, b, c);
CREATE VIEW vvv AS SELECT a AS d FROM xxx WHERE d = 0;
INSERT INTO xxx VALUES (0, 1, 2), (1, 2, 3), (0, 5, 6);
DELETE FROM xxx WHERE b = 2;
-- alter
ALTER TABLE xxx RENAME a TO xyz;
-- then
SELECT * FROM vvv;

-- case: view-join-qualified
-- source: corpus: view over a join with qualified t.a and u.a; rename t.a (the view's first column name changes)
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT);
CREATE TABLE u(tid INTEGER, a TEXT);
CREATE VIEW v AS SELECT t.a, u.a AS ua FROM t JOIN u ON u.tid = t.id ORDER BY t.a;
INSERT INTO t VALUES (1, 'p'), (2, 'q'), (3, 'r');
INSERT INTO u VALUES (1, 'P'), (3, 'R'), (2, 'Q');
DELETE FROM u WHERE tid = 3;
-- alter
ALTER TABLE t RENAME COLUMN a TO label;
-- then
SELECT * FROM v;

-- case: view-join-table-aliases
-- source: corpus: view FROM t AS x JOIN u AS y with x.a and y.a; rename u.a
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER);
CREATE TABLE u(tid INTEGER, a INTEGER);
CREATE VIEW v AS SELECT x.id, x.a AS ta, y.a AS ua FROM t AS x JOIN u AS y ON y.tid = x.id WHERE y.a > x.a;
INSERT INTO t VALUES (1, 1), (2, 2), (3, 3);
INSERT INTO u VALUES (1, 5), (2, 0), (3, 9), (3, 1);
DELETE FROM u WHERE a = 9;
-- alter
ALTER TABLE u RENAME COLUMN a TO ua_value;
-- then
SELECT * FROM v ORDER BY id;

-- case: view-union-order-by-name
-- source: corpus: compound view with ORDER BY a; rename t.a in the first SELECT (native rewrites the ORDER BY term too)
-- native: ok
-- setup
CREATE TABLE t(a, b);
CREATE TABLE u(a, c);
CREATE VIEW v AS SELECT a FROM t UNION SELECT a FROM u ORDER BY a;
INSERT INTO t VALUES (3, 0), (1, 0), (5, 0);
DELETE FROM t WHERE a = 1;
INSERT INTO u VALUES (2, 0), (4, 0);
-- alter
ALTER TABLE t RENAME COLUMN a TO a2;
-- then
SELECT * FROM v;

-- case: view-union-all-rename-second
-- source: sqlite altercol.test 8.4.2-8.4.4
-- native: ok
-- setup
CREATE TABLE b1(a, b, c);
CREATE TABLE b2(x, y, z);
CREATE VIEW www AS SELECT b FROM b1 UNION ALL SELECT y FROM b2;
CREATE VIEW xxx AS SELECT a FROM b1 UNION SELECT x FROM b2 ORDER BY 1 COLLATE nocase;
INSERT INTO b1 VALUES ('A', 'b', 'c'), ('d', 'E', 'f');
INSERT INTO b2 VALUES ('x', 'Y', 'z'), ('B', 'q', 'r'), ('m', 'n', 'o');
DELETE FROM b2 WHERE x = 'B';
-- alter
ALTER TABLE b2 RENAME x TO hello;
-- then
SELECT * FROM www;
SELECT * FROM xxx;

-- case: view-group-by-having-quoted-new-name
-- source: sqlite altercol.test 8.4.1
-- native: ok
-- setup
CREATE TABLE b1(a, b, c);
CREATE TABLE b2(x, y, z);
CREATE VIEW vvv AS SELECT c+c || coalesce(c, c) FROM b1, b2 WHERE x=c GROUP BY c HAVING c>0;
INSERT INTO b1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM b1 WHERE a = 4;
INSERT INTO b2 VALUES (3, 0, 0), (6, 0, 0), (9, 0, 0);
-- alter
ALTER TABLE b1 RENAME c TO "a;b";
-- then
SELECT * FROM vvv;

-- case: view-group-order-by-alias
-- source: corpus: view with GROUP BY and ORDER BY on an alias and HAVING on the column
-- native: ok
-- setup
CREATE TABLE sale(region TEXT, amount INTEGER);
CREATE VIEW totals AS SELECT region AS r, sum(amount) AS total, count(*) AS n FROM sale GROUP BY r HAVING sum(amount) > 0 ORDER BY r DESC;
INSERT INTO sale VALUES ('n', 5), ('s', 7), ('n', 1), ('e', -3), ('w', 4);
DELETE FROM sale WHERE region = 's';
-- alter
ALTER TABLE sale RENAME COLUMN region TO area;
-- then
SELECT * FROM totals;

-- case: view-subquery-in-from-unaliased
-- source: corpus: view SELECT s.a FROM (SELECT a FROM t) AS s; rename t.a (the subquery's column name changes)
-- native: error: error in view v after rename: no such column: s.a
-- setup
CREATE TABLE t(a, b);
CREATE VIEW v AS SELECT s.a FROM (SELECT a FROM t WHERE b > 0) AS s;
INSERT INTO t VALUES (1, 1), (2, 0), (3, 1);
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t RENAME COLUMN a TO a2;
-- then
SELECT * FROM v;

-- case: view-subquery-in-from-aliased
-- source: sqlite altertab3.test 26.1-26.4 (subquery with an alias, here in a view)
-- native: ok
-- setup
CREATE TABLE t(a, b);
CREATE VIEW v AS SELECT s.k, s.b FROM (SELECT a AS k, b FROM t WHERE b > 0) AS s ORDER BY s.k;
INSERT INTO t VALUES (1, 1), (2, 0), (3, 1);
DELETE FROM t WHERE a = 1;
-- alter
ALTER TABLE t RENAME COLUMN a TO a2;
-- then
SELECT * FROM v;

-- case: view-correlated-exists-outer-renamed
-- source: corpus: correlated EXISTS subquery; inner unqualified a is u.a, outer t.a is renamed
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER);
CREATE TABLE u(a INTEGER, note TEXT);
CREATE VIEW v AS SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = t.a);
INSERT INTO t VALUES (1, 10), (2, 20), (3, 30);
INSERT INTO u VALUES (10, 'x'), (99, 'q'), (30, 'y');
DELETE FROM u WHERE a = 99;
-- alter
ALTER TABLE t RENAME COLUMN a TO ta;
-- then
SELECT * FROM v ORDER BY id;

-- case: view-correlated-unqualified-outer-column
-- source: corpus: correlated subquery whose unqualified b resolves to the outer table (u has no b); rename t.b
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, b INTEGER);
CREATE TABLE u(x INTEGER, a INTEGER);
CREATE VIEW v AS SELECT id, (SELECT count(*) FROM u WHERE u.x = b) AS n FROM t;
INSERT INTO t VALUES (1, 1), (2, 2), (3, 3);
INSERT INTO u VALUES (1, 0), (9, 0), (1, 0), (3, 0);
DELETE FROM u WHERE x = 9;
-- alter
ALTER TABLE t RENAME COLUMN b TO bee;
-- then
SELECT * FROM v ORDER BY id;

-- case: view-over-view-becomes-invalid
-- source: corpus: v2 selects column a from v1, v1 selects a from t unaliased; rename t.a
-- native: error: error in view v2 after rename: no such column: a
-- setup
CREATE TABLE t(a, b);
CREATE VIEW v1 AS SELECT a, b FROM t;
CREATE VIEW v2 AS SELECT a FROM v1 WHERE b > 0;
INSERT INTO t VALUES (1, 1), (2, 0), (3, 1);
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t RENAME COLUMN a TO a2;
-- then
SELECT * FROM v2;

-- case: view-over-view-aliased
-- source: corpus: v1 aliases the column (SELECT a AS a), v2 selects a from v1; rename t.a
-- native: ok
-- setup
CREATE TABLE t(a, b);
CREATE VIEW v1 AS SELECT a AS a, b FROM t;
CREATE VIEW v2 AS SELECT a FROM v1 WHERE b > 0;
INSERT INTO t VALUES (1, 1), (2, 0), (3, 1);
DELETE FROM t WHERE a = 1;
-- alter
ALTER TABLE t RENAME COLUMN a TO a2;
-- then
SELECT * FROM v2;

-- case: view-explicit-column-list-same-name
-- source: corpus: CREATE VIEW v(a, b) AS SELECT a, b: the view's own column list names must not be renamed
-- native: ok
-- setup
CREATE TABLE t(a, b);
CREATE VIEW v(a, b) AS SELECT a, b FROM t;
CREATE VIEW w AS SELECT a FROM v;
INSERT INTO t VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM t WHERE a = 3;
-- alter
ALTER TABLE t RENAME COLUMN a TO z;
-- then
SELECT a, b FROM v;
SELECT * FROM w;

-- case: view-explicit-column-list-coalesce
-- source: sqlite altercol.test 19.0-19.1
-- native: ok
-- setup
CREATE TABLE t1(a, b);
CREATE TABLE t2(c, d);
CREATE VIEW v2(e) AS SELECT coalesce(t2.c, t1.a) FROM t1, t2 WHERE t1.b = t2.d;
INSERT INTO t1 VALUES (1, 1), (2, 2), (3, 3);
DELETE FROM t1 WHERE a = 2;
INSERT INTO t2 VALUES (NULL, 1), (30, 3);
-- alter
ALTER TABLE t1 RENAME a TO f;
-- then
SELECT e FROM v2 ORDER BY e;

-- case: view-select-star-rename
-- source: corpus: view SELECT * FROM t; rename (view text unchanged, its column name changes)
-- native: ok
-- setup
CREATE TABLE t(a, b);
CREATE VIEW v AS SELECT * FROM t;
CREATE VIEW w AS SELECT t.*, 1 AS one FROM t;
INSERT INTO t VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM t WHERE a = 3;
-- alter
ALTER TABLE t RENAME COLUMN a TO z;
-- then
SELECT z, b FROM v;
SELECT z, b, one FROM w;

-- case: view-select-star-drop
-- source: sqlite alterdropcol.test 1.0, 1.6
-- native: ok
-- setup
CREATE TABLE t1(a, b, c);
CREATE VIEW v1 AS SELECT * FROM t1;
INSERT INTO t1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t1 WHERE a = 4;
-- alter
ALTER TABLE t1 DROP COLUMN b;
-- then
SELECT * FROM v1;

-- case: view-star-drop-used-by-view-over-view
-- source: corpus: v1 is SELECT * FROM t, v2 selects c from v1; drop t.c
-- native: error: error in view v2 after drop column: no such column: c
-- setup
CREATE TABLE t(a, b, c);
CREATE VIEW v1 AS SELECT * FROM t;
CREATE VIEW v2 AS SELECT a, c FROM v1;
INSERT INTO t VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t WHERE a = 4;
-- alter
ALTER TABLE t DROP COLUMN c;
-- then
SELECT * FROM v2;

-- case: view-quoted-identifiers
-- source: corpus: view referencing the column as "a", t."a", [a] and `a`; rename to a name that needs quoting
-- native: ok
-- setup
CREATE TABLE t(a, b);
CREATE VIEW v AS SELECT "a" AS q1, t."a" AS q2, [a] AS q3, `a` AS q4 FROM t;
INSERT INTO t VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM t WHERE a = 3;
-- alter
ALTER TABLE t RENAME COLUMN a TO "new col";
-- then
SELECT * FROM v;

-- case: view-string-literal-equals-column-name
-- source: corpus: string literals 'a' equal to the column name must not be renamed
-- native: ok
-- setup
CREATE TABLE t(a TEXT, b TEXT);
CREATE VIEW v AS SELECT a, 'a' AS lit, b || 'a' AS b2, a LIKE 'a%' AS starts FROM t WHERE b <> 'a';
INSERT INTO t VALUES ('a', 'b'), ('q', 'r'), ('abc', 'a'), ('x', 'y');
DELETE FROM t WHERE a = 'q';
-- alter
ALTER TABLE t RENAME COLUMN a TO aa;
-- then
SELECT * FROM v;

-- case: view-names-other-table-same-column
-- source: corpus: a view returning person.name; rename audit.name (another table): the view must not change
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE audit(id INTEGER PRIMARY KEY, name TEXT);
CREATE VIEW names AS SELECT name FROM person;
CREATE VIEW both_names AS SELECT p.name, a.name AS audit_name FROM person AS p JOIN audit AS a ON a.id = p.id;
INSERT INTO person VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
INSERT INTO audit VALUES (1, 'A'), (3, 'C'), (5, 'E');
DELETE FROM audit WHERE id = 5;
-- alter
ALTER TABLE audit RENAME COLUMN name TO label;
-- then
SELECT * FROM names ORDER BY name;
SELECT * FROM both_names ORDER BY name;

-- case: view-join-using
-- source: corpus: view over t JOIN u USING (a); rename t.a
-- native: error: error in view v after rename: cannot join using column a - column not present in both tables
-- setup
CREATE TABLE t(a, b);
CREATE TABLE u(a, c);
CREATE VIEW v AS SELECT * FROM t JOIN u USING (a);
INSERT INTO t VALUES (1, 'x'), (9, 'z'), (2, 'y');
DELETE FROM t WHERE a = 9;
INSERT INTO u VALUES (1, 'p'), (2, 'q'), (3, 'r');
-- alter
ALTER TABLE t RENAME COLUMN a TO a2;
-- then
SELECT * FROM v;

-- case: view-cte-unaliased
-- source: corpus: view WITH c AS (SELECT a FROM t) SELECT a FROM c; rename t.a
-- native: error: error in view v after rename: no such column: a
-- setup
CREATE TABLE t(a, b);
CREATE VIEW v AS WITH c AS (SELECT a FROM t) SELECT a FROM c;
INSERT INTO t VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM t WHERE a = 3;
-- alter
ALTER TABLE t RENAME COLUMN a TO a2;
-- then
SELECT * FROM v;

-- case: view-cte-column-list
-- source: sqlite altertab2.test 3.4 (WITH xyz(x) AS (SELECT col1 FROM log_entry))
-- native: ok
-- setup
CREATE TABLE log_entry(col1);
CREATE VIEW ttt AS
    WITH xyz(x) AS (SELECT col1 FROM log_entry)
    SELECT x FROM xyz;
INSERT INTO log_entry VALUES (1), (2), (3);
DELETE FROM log_entry WHERE col1 = 2;
-- alter
ALTER TABLE log_entry RENAME col1 TO newname;
-- then
SELECT * FROM ttt;

-- case: view-empty-in-list
-- source: sqlite altertab3.test 3.0-3.2 (native leaves b IN () unrenamed)
-- native: ok
-- ours: differs SQLite folds b IN () away before renaming and leaves the stale name b in the view; we rename it to bbb (both views return the same rows)
-- setup
CREATE TABLE t1(a, b, c, d);
CREATE VIEW v1 AS SELECT * FROM t1 WHERE a=1 OR (b IN ());
INSERT INTO t1 VALUES (1, 2, 3, 4), (9, 9, 9, 9), (2, 3, 4, 5);
DELETE FROM t1 WHERE a = 9;
-- alter
ALTER TABLE t1 RENAME b TO bbb;
-- then
SELECT * FROM v1;

-- case: view-becomes-ambiguous
-- source: sqlite altercol.test 16.1.0-16.1.2
-- native: error: error in view v4 after rename: ambiguous column name: a
-- setup
CREATE TABLE t1(a, b, c);
CREATE TABLE t2(d, e, f);
INSERT INTO t1 VALUES (1, 2, 3);
INSERT INTO t2 VALUES (4, 5, 6);
CREATE VIEW v4 AS SELECT a, d FROM t1, t2;
INSERT INTO t1 VALUES (7, 8, 9), (10, 11, 12);
DELETE FROM t1 WHERE a = 7;
-- alter
ALTER TABLE t2 RENAME d TO a;
-- then
SELECT * FROM v4;

-- case: view-unrelated-broken
-- source: sqlite altercol.test 8.4.5
-- native: error: error in view zzz: no such column: george
-- setup
CREATE TABLE b1(a, b, c);
CREATE TABLE b2(x, y, z);
INSERT INTO b1 VALUES (1, 2, 3);
INSERT INTO b2 VALUES (4, 5, 6);
CREATE VIEW zzz AS SELECT george, ringo FROM b1;
INSERT INTO b2 VALUES (7, 8, 9), (10, 11, 12);
DELETE FROM b2 WHERE x = 7;
-- alter
ALTER TABLE b2 RENAME x TO xx;
-- then
SELECT * FROM b2;

-- case: view-drop-col-in-select-list
-- source: sqlite alterdropcol2.test 2.8.2
-- native: error: error in view v1 after drop column: no such column: w
-- setup
CREATE TABLE c1(u, v, w);
CREATE VIEW v1 AS SELECT u, v, w FROM c1;
INSERT INTO c1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM c1 WHERE u = 4;
-- alter
ALTER TABLE c1 DROP w;
-- then
SELECT * FROM v1;

-- case: view-drop-col-in-where
-- source: sqlite alterdropcol2.test 2.8.3
-- native: error: error in view v1 after drop column: no such column: w
-- setup
CREATE TABLE c1(u, v, w);
CREATE VIEW v1 AS SELECT * FROM c1 WHERE w IS NOT NULL;
INSERT INTO c1 VALUES (1, 2, 3), (7, 8, 9), (4, 5, NULL);
DELETE FROM c1 WHERE u = 7;
-- alter
ALTER TABLE c1 DROP COLUMN w;
-- then
SELECT * FROM v1;

-- case: view-drop-col-not-used
-- source: corpus: DROP COLUMN of a column no view uses; the views must survive and still work
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, c);
CREATE TABLE u(id INTEGER PRIMARY KEY, c);
CREATE VIEW v AS SELECT t.id, a, b, u.c FROM t LEFT JOIN u ON u.id = t.id;
INSERT INTO t VALUES (1, 1, 2, 3), (2, 4, 5, 6), (3, 7, 8, 9);
DELETE FROM t WHERE id = 2;
INSERT INTO u VALUES (1, 'c1'), (3, 'c3');
-- alter
ALTER TABLE t DROP COLUMN c;
-- then
SELECT * FROM v ORDER BY id;

-- case: view-drop-col-unrelated-broken-view
-- source: sqlite alterdropcol.test 5.2
-- native: error: error in view v1: no such column: d
-- setup
CREATE TABLE p1(a PRIMARY KEY, b UNIQUE);
CREATE TABLE c1(x, y, z);
INSERT INTO p1 VALUES (1, 2);
INSERT INTO c1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM c1 WHERE x = 4;
CREATE VIEW v1 AS SELECT d, e FROM p1;
-- alter
ALTER TABLE c1 DROP COLUMN x;
-- then
SELECT * FROM c1;

-- case: view-drop-same-name-other-table
-- source: corpus: DROP t.a while views select u.a (another table's column of the same name), qualified and unqualified
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT);
CREATE TABLE u(id INTEGER PRIMARY KEY, a TEXT);
CREATE VIEW ua AS SELECT a FROM u;
CREATE VIEW tu AS SELECT t.id, t.b, u.a FROM t JOIN u ON u.id = t.id;
INSERT INTO t VALUES (1, 'x', 'p'), (2, 'y', 'q'), (3, 'z', 'r');
INSERT INTO u VALUES (1, 'ux'), (3, 'uz'), (4, 'uw');
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t DROP COLUMN a;
-- then
SELECT * FROM ua ORDER BY a;
SELECT * FROM tu ORDER BY id;

-- case: fk-parent-col-column-constraint
-- source: corpus: child column REFERENCES parent(code); rename parent.code
-- native: ok
-- setup
CREATE TABLE parent(id INTEGER PRIMARY KEY, code TEXT UNIQUE);
CREATE TABLE child(id INTEGER PRIMARY KEY, parent_code TEXT REFERENCES parent(code), note TEXT);
INSERT INTO parent VALUES (1, 'a'), (2, 'b'), (3, 'c');
DELETE FROM parent WHERE id = 2;
INSERT INTO child VALUES (1, 'a', 'x'), (2, 'c', 'y'), (4, 'a', 'z');
-- alter
ALTER TABLE parent RENAME COLUMN code TO ref;
-- then
PRAGMA foreign_keys = ON;
INSERT INTO child(parent_code, note) VALUES ('c', 'new');
PRAGMA foreign_key_check;
SELECT * FROM child ORDER BY id;

-- case: fk-parent-col-table-constraint
-- source: sqlite altertab2.test 2.0 (FOREIGN KEY (x) REFERENCES p1(a)), renaming the parent column
-- native: ok
-- setup
CREATE TABLE p1(a PRIMARY KEY, b);
CREATE TABLE c1(x REFERENCES p1);
CREATE TABLE c2(x, FOREIGN KEY (x) REFERENCES p1);
CREATE TABLE c3(x, FOREIGN KEY (x) REFERENCES p1(a));
INSERT INTO p1 VALUES (1, 'one'), (2, 'two'), (3, 'three');
DELETE FROM p1 WHERE a = 2;
INSERT INTO c1 VALUES (1), (3);
INSERT INTO c2 VALUES (3), (1);
INSERT INTO c3 VALUES (1), (1), (3);
-- alter
ALTER TABLE p1 RENAME COLUMN a TO pk;
-- then
PRAGMA foreign_keys = ON;
INSERT INTO c1 VALUES (3);
INSERT INTO c2 VALUES (3);
INSERT INTO c3 VALUES (3);
PRAGMA foreign_key_check;

-- case: fk-composite-quoted-new-name
-- source: sqlite altercol.test 4.0-4.4
-- native: ok
-- setup
CREATE TABLE c1(a, b, FOREIGN KEY (a, b) REFERENCES p1(c, d));
CREATE TABLE p1(c, d, PRIMARY KEY(c, d));
CREATE TABLE c2(a, b, FOREIGN KEY (a, b) REFERENCES p1);
INSERT INTO p1 VALUES (1, 2), (5, 6), (3, 4);
DELETE FROM p1 WHERE c = 5;
INSERT INTO c1 VALUES (1, 2), (3, 4);
INSERT INTO c2 VALUES (3, 4), (1, 2);
-- alter
ALTER TABLE p1 RENAME d TO "silly name";
-- then
PRAGMA foreign_keys = ON;
INSERT INTO c1 VALUES (1, 2);
INSERT INTO c2 VALUES (3, 4);
PRAGMA foreign_key_check;

-- case: fk-self-ref-rename-parent-key
-- source: corpus: self-referencing table (parent_id REFERENCES node(id)); rename node.id
-- native: ok
-- setup
CREATE TABLE node(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES node(id) ON DELETE CASCADE, name TEXT);
INSERT INTO node VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 1, 'b'), (4, 3, 'c'), (5, 4, 'd');
DELETE FROM node WHERE id = 2;
-- alter
ALTER TABLE node RENAME COLUMN id TO node_id;
-- then
PRAGMA foreign_keys = ON;
INSERT INTO node(parent_id, name) VALUES (3, 'e');
DELETE FROM node WHERE node_id = 4;
SELECT * FROM node ORDER BY node_id;

-- case: fk-self-ref-rename-child-col
-- source: corpus: self-referencing table with a table FOREIGN KEY constraint; rename the child column
-- native: ok
-- setup
CREATE TABLE node(id INTEGER PRIMARY KEY, parent_id INTEGER, name TEXT, FOREIGN KEY (parent_id) REFERENCES node(id));
INSERT INTO node VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 1, 'b'), (4, 3, 'c');
DELETE FROM node WHERE id = 2;
-- alter
ALTER TABLE node RENAME COLUMN parent_id TO up;
-- then
PRAGMA foreign_keys = ON;
INSERT INTO node(up, name) VALUES (4, 'd');
PRAGMA foreign_key_check;
SELECT * FROM node ORDER BY id;

-- case: fk-rename-child-col-table-constraint
-- source: sqlite altercol.test 1.13 and 1.17
-- native: ok
-- setup
CREATE TABLE t2(id INTEGER PRIMARY KEY, v);
CREATE TABLE t1(a INTEGER, b INTEGER PRIMARY KEY, c BLOB, FOREIGN KEY (b) REFERENCES t2);
INSERT INTO t2 VALUES (1, 'x'), (2, 'y'), (5, 'z');
INSERT INTO t1 VALUES (1, 2, 3), (4, 5, 6), (7, 1, 9);
DELETE FROM t1 WHERE a = 4;
-- alter
ALTER TABLE t1 RENAME COLUMN b TO d;
-- then
PRAGMA foreign_keys = ON;
INSERT INTO t1(a, d, c) VALUES (8, 5, 0);
SELECT * FROM t1 ORDER BY d;

-- case: fk-drop-child-col-column-constraint
-- source: sqlite alterdropcol.test 5.0-5.1 (c1: drop the column that carries its own REFERENCES clause)
-- native: ok
-- setup
CREATE TABLE p1(a PRIMARY KEY, b UNIQUE);
CREATE TABLE c1(x, y, z REFERENCES p1(a));
INSERT INTO p1 VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM p1 WHERE a = 3;
INSERT INTO c1 VALUES (1, 2, 1), (4, 5, 5), (7, 8, 1);
DELETE FROM c1 WHERE x = 4;
-- alter
ALTER TABLE c1 DROP COLUMN z;
-- then
INSERT INTO c1 VALUES (10, 11);
SELECT rowid, * FROM c1 ORDER BY rowid;

-- case: fk-drop-col-before-fk-col
-- source: sqlite alterdropcol.test 5.0-5.1 (c2: drop a column that comes before the foreign key column)
-- native: ok
-- setup
CREATE TABLE p1(a PRIMARY KEY, b UNIQUE);
CREATE TABLE c2(x, y, z, w REFERENCES p1(b));
INSERT INTO p1 VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM p1 WHERE a = 3;
INSERT INTO c2 VALUES (1, 2, 3, 2), (4, 5, 6, 6), (7, 8, 9, 2);
DELETE FROM c2 WHERE x = 4;
-- alter
ALTER TABLE c2 DROP COLUMN z;
-- then
INSERT INTO c2 VALUES (10, 11, 6);
SELECT rowid, * FROM c2 ORDER BY rowid;

-- case: fk-drop-child-col-table-constraint
-- source: sqlite alterdropcol2.test 2.6.1
-- native: error: error in table c1 after drop column: unknown column "v" in foreign key definition
-- setup
CREATE TABLE p1(x, y UNIQUE);
CREATE TABLE c1(u, v, FOREIGN KEY (v) REFERENCES p1(y));
INSERT INTO p1 VALUES (1, 2), (3, 4);
INSERT INTO c1 VALUES (1, 2), (5, 2), (3, 4);
DELETE FROM c1 WHERE u = 5;
-- alter
ALTER TABLE c1 DROP v;
-- then
SELECT * FROM c1;

-- case: fk-drop-parent-referenced-col
-- source: corpus: DROP COLUMN of a parent column that another table's foreign key references through a UNIQUE index
-- native: error: error in index p_b after drop column: no such column: b
-- setup
CREATE TABLE p(a, b);
CREATE UNIQUE INDEX p_b ON p(b);
CREATE TABLE c(x REFERENCES p(b), y);
INSERT INTO p VALUES (1, 10), (2, 20), (3, 30);
DELETE FROM p WHERE a = 2;
INSERT INTO c VALUES (10, 'k'), (30, 'l');
-- alter
ALTER TABLE p DROP COLUMN b;
-- then
SELECT * FROM c;

-- case: fk-two-parents-same-col-name
-- source: corpus: child references p1(id) and p2(id); rename p1.id only
-- native: ok
-- setup
CREATE TABLE p1(id INTEGER PRIMARY KEY, v TEXT);
CREATE TABLE p2(id INTEGER PRIMARY KEY, v TEXT);
CREATE TABLE child(a INTEGER REFERENCES p1(id), b INTEGER REFERENCES p2(id), FOREIGN KEY (b) REFERENCES p2(id));
INSERT INTO p1 VALUES (1, 'x'), (2, 'y'), (3, 'z');
INSERT INTO p2 VALUES (10, 'x'), (20, 'y');
DELETE FROM p1 WHERE id = 2;
INSERT INTO child VALUES (1, 10), (3, 20), (1, 20);
-- alter
ALTER TABLE p1 RENAME COLUMN id TO p1_id;
-- then
PRAGMA foreign_keys = ON;
INSERT INTO child VALUES (3, 10);
PRAGMA foreign_key_check;

-- case: fk-mixed-case-quoted-parent
-- source: corpus: REFERENCES "Parent"("Code") with mixed case and quotes; ALTER names the table and column in another case
-- native: ok
-- setup
CREATE TABLE "Parent"("Id" INTEGER PRIMARY KEY, "Code" TEXT UNIQUE);
CREATE TABLE kid(pc TEXT REFERENCES "Parent"("Code"), FOREIGN KEY (pc) REFERENCES PARENT(CODE));
INSERT INTO "Parent" VALUES (1, 'a'), (2, 'b'), (3, 'c');
DELETE FROM "Parent" WHERE "Id" = 2;
INSERT INTO kid VALUES ('a'), ('c'), ('a');
-- alter
ALTER TABLE parent RENAME COLUMN code TO "Ref Code";
-- then
PRAGMA foreign_keys = ON;
INSERT INTO kid VALUES ('c');
PRAGMA foreign_key_check;

-- case: fk-cascade-enforced-rename-parent
-- source: corpus: foreign keys enforced (the test switches them on) during the rename of a parent column with ON UPDATE/DELETE CASCADE children (a rebuild must not cascade)
-- native: ok
-- setup
CREATE TABLE parent(id INTEGER PRIMARY KEY, code TEXT UNIQUE);
CREATE TABLE child(id INTEGER PRIMARY KEY, code TEXT REFERENCES parent(code) ON UPDATE CASCADE ON DELETE CASCADE);
INSERT INTO parent VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO child VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'a');
DELETE FROM child WHERE code = 'b';
DELETE FROM parent WHERE id = 2;
-- alter
ALTER TABLE parent RENAME COLUMN code TO ref;
-- then
PRAGMA foreign_keys = ON;
UPDATE parent SET ref = 'z' WHERE id = 1;
DELETE FROM parent WHERE id = 3;
SELECT * FROM child ORDER BY id;

-- case: fk-cascade-enforced-drop-parent-col
-- source: corpus: foreign keys enforced (the test switches them on) during DROP COLUMN of a non-key column of a parent with ON DELETE CASCADE / SET NULL children (a rebuild must not delete or null them)
-- native: ok
-- setup
CREATE TABLE parent(id INTEGER PRIMARY KEY, name TEXT, obsolete TEXT);
CREATE TABLE child(id INTEGER PRIMARY KEY, pid INTEGER REFERENCES parent(id) ON DELETE CASCADE);
CREATE TABLE child2(id INTEGER PRIMARY KEY, pid INTEGER REFERENCES parent ON DELETE SET NULL);
INSERT INTO parent VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z');
INSERT INTO child VALUES (1, 1), (2, 3), (3, 3);
INSERT INTO child2 VALUES (1, 1), (2, 3);
DELETE FROM parent WHERE id = 2;
-- alter
ALTER TABLE parent DROP COLUMN obsolete;
-- then
SELECT * FROM child ORDER BY id;
SELECT * FROM child2 ORDER BY id;
PRAGMA foreign_key_check;

-- case: fk-enforced-drop-child-col
-- source: corpus: foreign keys enforced (the test switches them on) during DROP COLUMN of an unrelated column of a child table; its foreign key keeps working
-- native: ok
-- setup
CREATE TABLE parent(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE child(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL REFERENCES parent(id), extra TEXT);
INSERT INTO parent VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO child VALUES (1, 1, 'e'), (2, 2, 'f'), (5, 3, 'g');
DELETE FROM child WHERE id = 2;
-- alter
ALTER TABLE child DROP COLUMN extra;
-- then
PRAGMA foreign_keys = ON;
INSERT INTO child(pid) VALUES (2);
SELECT * FROM child ORDER BY id;
PRAGMA foreign_key_check;

-- case: check-column-constraint-rename
-- source: corpus: column CHECK using the column; rename it
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, qty INTEGER CHECK (qty >= 0), note TEXT);
INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c');
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t RENAME COLUMN qty TO quantity;
-- then
INSERT INTO t(quantity, note) VALUES (0, 'zero');
SELECT * FROM t ORDER BY id;

-- case: check-table-constraint-rename
-- source: sqlite altercol.test 1.3-1.6
-- native: ok
-- ours: refuses CHECK(t1.b ...) qualifies a column with the table name, which cannot be checked while the rebuilt table has a temporary name; we refuse with a message saying to write the constraint unqualified
-- setup
CREATE TABLE t1(a INTEGER, b TEXT, c BLOB, CHECK(b != ''), CHECK(t1.b != 'x'), CHECK( coalesce(b, c) IS NOT NULL ));
INSERT INTO t1 VALUES (1, 'p', 3), (2, 'q', 4), (3, 'r', 5);
DELETE FROM t1 WHERE a = 2;
-- alter
ALTER TABLE t1 RENAME COLUMN b TO d;
-- then
INSERT INTO t1 VALUES (4, 's', 6);
SELECT rowid, * FROM t1 ORDER BY rowid;

-- case: check-drop-col-own-check
-- source: sqlite alterdropcol2.test 3.0-3.2 (yyy)
-- native: ok
-- setup
CREATE TABLE yyy(q, w, e CHECK (e > 0), r);
INSERT INTO yyy VALUES (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3);
DELETE FROM yyy WHERE q = 2;
-- alter
ALTER TABLE yyy DROP e;
-- then
INSERT INTO yyy VALUES (0, 0, 0);
SELECT rowid, * FROM yyy ORDER BY rowid;

-- case: check-drop-col-in-table-check
-- source: sqlite alterdropcol2.test 3.2 (zzz) and alterdropcol.test 3.1
-- native: error: error in table zzz after drop column: no such column: e
-- setup
CREATE TABLE zzz(q, w, e, r, CHECK (e > 0));
INSERT INTO zzz VALUES (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3);
DELETE FROM zzz WHERE q = 2;
-- alter
ALTER TABLE zzz DROP e;
-- then
SELECT * FROM zzz;

-- case: check-drop-col-in-other-column-check
-- source: corpus: the dropped column appears in the CHECK of another column
-- native: error: error in table t after drop column: no such column: lo
-- setup
CREATE TABLE t(lo INTEGER, hi INTEGER CHECK (hi >= lo), note TEXT);
INSERT INTO t VALUES (1, 2, 'a'), (3, 4, 'b'), (5, 6, 'c');
DELETE FROM t WHERE lo = 3;
-- alter
ALTER TABLE t DROP COLUMN lo;
-- then
SELECT * FROM t;

-- case: check-function-name-equals-column-rename
-- source: corpus: CHECK(length(name) > 0) in a table that has a column named length; rename the column length
-- native: ok
-- setup
CREATE TABLE t(name TEXT, length INTEGER, CHECK (length(name) > 0), CHECK (length >= 0));
INSERT INTO t VALUES ('ab', 2), ('abc', 3), ('a', 1);
DELETE FROM t WHERE length = 3;
-- alter
ALTER TABLE t RENAME COLUMN length TO len;
-- then
INSERT INTO t VALUES ('xyz', 3);
SELECT rowid, * FROM t ORDER BY rowid;

-- case: check-function-name-equals-column-drop
-- source: corpus: CHECK(length(name) > 0) with a column named length; DROP the column length (the CHECK only calls the function)
-- native: ok
-- setup
CREATE TABLE t(name TEXT, length INTEGER, CHECK (length(name) > 0));
INSERT INTO t VALUES ('ab', 2), ('abc', 3), ('a', 1);
DELETE FROM t WHERE length = 3;
-- alter
ALTER TABLE t DROP COLUMN length;
-- then
INSERT INTO t VALUES ('xyz');
SELECT rowid, * FROM t ORDER BY rowid;

-- case: check-string-literal-equals-column
-- source: corpus: CHECK (status IN ('status', 'open')) and DEFAULT 'status': string literals must not be renamed
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, status TEXT DEFAULT 'status' CHECK (status IN ('status', 'open')));
INSERT INTO t VALUES (1, 'open'), (2, 'status'), (3, 'open');
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t RENAME COLUMN status TO state;
-- then
INSERT INTO t(id) VALUES (4);
INSERT INTO t VALUES (5, 'status');
SELECT * FROM t ORDER BY id;

-- case: check-named-constraint-like-column-drop
-- source: corpus: constraints named like columns (b CONSTRAINT b CHECK (a > 0), CONSTRAINT c CHECK (a < 100)); drop column c
-- native: ok
-- setup
CREATE TABLE t(a INTEGER, b INTEGER CONSTRAINT b CHECK (a > 0), c TEXT, CONSTRAINT c CHECK (a < 100));
INSERT INTO t VALUES (1, 2, 'x'), (3, 4, 'y'), (5, 6, 'z');
DELETE FROM t WHERE a = 3;
-- alter
ALTER TABLE t DROP COLUMN c;
-- then
INSERT INTO t VALUES (50, 51);
SELECT rowid, * FROM t ORDER BY rowid;

-- case: name-count-column
-- source: corpus: a column named count next to count(*) in a view and a CHECK; rename count
-- native: ok
-- setup
CREATE TABLE hits(page TEXT, count INTEGER CHECK (count >= 0));
CREATE VIEW page_stats AS SELECT page, count(*) AS rows_n, sum(count) AS total, max(count) AS count FROM hits GROUP BY page;
INSERT INTO hits VALUES ('a', 1), ('c', 7), ('a', 2), ('b', 5);
DELETE FROM hits WHERE page = 'c';
-- alter
ALTER TABLE hits RENAME COLUMN count TO n;
-- then
SELECT * FROM page_stats ORDER BY page;

-- case: name-count-column-drop
-- source: corpus: DROP the column count while a view uses count(*) only
-- native: ok
-- setup
CREATE TABLE hits(page TEXT, count INTEGER);
CREATE VIEW pages AS SELECT page, count(*) AS n FROM hits GROUP BY page;
INSERT INTO hits VALUES ('a', 1), ('c', 7), ('a', 2), ('b', 5);
DELETE FROM hits WHERE page = 'c';
-- alter
ALTER TABLE hits DROP COLUMN count;
-- then
SELECT * FROM pages ORDER BY page;

-- case: name-keyword-key-value
-- source: corpus: columns named key and value (keywords usable as names) with an index and a view
-- native: ok
-- setup
CREATE TABLE kv(key TEXT NOT NULL, value TEXT);
CREATE UNIQUE INDEX kv_key ON kv(key);
CREATE VIEW kv_v AS SELECT key, value FROM kv WHERE key <> 'key';
INSERT INTO kv VALUES ('a', '1'), ('key', '2'), ('b', '3'), ('c', '4');
DELETE FROM kv WHERE key = 'b';
-- alter
ALTER TABLE kv RENAME COLUMN key TO k;
-- then
INSERT INTO kv(k, value) VALUES ('d', '5');
SELECT * FROM kv_v ORDER BY k;

-- case: name-replace-function-and-column
-- source: corpus: a column named replace used as replace(replace, '-', '_') in a view and an expression index
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, replace TEXT);
CREATE VIEW v AS SELECT id, replace(replace, '-', '_') AS r FROM t;
CREATE INDEX t_r ON t(replace(replace, '-', ''));
INSERT INTO t VALUES (1, 'a-b'), (2, 'c-d'), (3, 'e-f');
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t RENAME COLUMN replace TO repl;
-- then
INSERT INTO t(repl) VALUES ('g-h');
SELECT * FROM v ORDER BY id;

-- case: name-order-quoted-keyword
-- source: corpus: a column named "order" with an index and a trigger; rename to position
-- native: ok
-- setup
CREATE TABLE step(id INTEGER PRIMARY KEY, "order" INTEGER, title TEXT);
CREATE INDEX step_order ON step("order");
CREATE TABLE moves(n);
CREATE TRIGGER step_au AFTER UPDATE OF "order" ON step BEGIN
  INSERT INTO moves VALUES (NEW."order");
END;
INSERT INTO step VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');
DELETE FROM step WHERE id = 2;
INSERT INTO moves VALUES (0);
-- alter
ALTER TABLE step RENAME COLUMN "order" TO position;
-- then
UPDATE step SET position = 15 WHERE id = 3;
SELECT * FROM moves;
SELECT id FROM step ORDER BY position;

-- case: name-new-name-is-keyword
-- source: sqlite altercol.test 6.0-6.3 (rename to [where])
-- native: ok
-- setup
CREATE TABLE blob(
  rid INTEGER PRIMARY KEY,
  rcvid INTEGER,
  size INTEGER,
  uuid TEXT UNIQUE NOT NULL,
  content BLOB,
  CHECK( length(uuid)>=40 AND rid>0 )
);
INSERT INTO blob VALUES (1, 1, 1, '0123456789012345678901234567890123456789', x'00'), (5, 1, 1, '0123456789012345678901234567890123456780', x'01');
CREATE VIEW bv AS SELECT rid, size FROM blob WHERE rid > 0;
-- alter
ALTER TABLE "blob" RENAME COLUMN "rid" TO [where];
-- then
SELECT "where" FROM blob;
SELECT * FROM bv;

-- case: name-single-quoted-columns
-- source: sqlite altercol.test 23.0 (single-quoted column names in CREATE TABLE and CREATE INDEX)
-- native: ok
-- setup
CREATE TABLE t('a' INTEGER, 'b' TEXT);
CREATE INDEX i1 ON t('a');
INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z');
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t RENAME COLUMN a TO x;
-- then
PRAGMA integrity_check;
SELECT rowid, x, b FROM t ORDER BY rowid;

-- case: name-single-quoted-columns-drop
-- source: corpus: DROP COLUMN in a table whose columns are declared with single quotes
-- native: ok
-- setup
CREATE TABLE t('a' INTEGER, 'b' TEXT, 'c' REAL);
INSERT INTO t VALUES (1, 'x', 1.5), (2, 'y', 2.5), (3, 'z', 3.5);
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t DROP COLUMN 'b';
-- then
SELECT rowid, * FROM t ORDER BY rowid;

-- case: name-single-quoted-table-rename
-- source: corpus: CREATE TABLE 't'(...) names the table with a string, as SQLite accepts (and keeps in sqlite_master)
-- native: ok
-- setup
CREATE TABLE 't'('a' INTEGER, 'b' TEXT);
INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z');
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t RENAME COLUMN a TO x;
-- then
INSERT INTO t(x, b) VALUES (4, 'w');
SELECT rowid, * FROM t ORDER BY rowid;

-- case: name-single-quoted-table-drop
-- source: corpus: DROP COLUMN in a table whose CREATE TABLE names it with a string
-- native: ok
-- setup
CREATE TABLE 't'(a INTEGER, b TEXT, c REAL);
INSERT INTO t VALUES (1, 'x', 1.5), (2, 'y', 2.5), (3, 'z', 3.5);
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t DROP COLUMN b;
-- then
SELECT rowid, * FROM t ORDER BY rowid;

-- case: fk-single-quoted-child-table-name
-- source: corpus: the child table's CREATE TABLE names it with a string; its REFERENCES p(x) must follow the rename
-- native: ok
-- setup
CREATE TABLE p(id INTEGER PRIMARY KEY, x TEXT UNIQUE);
CREATE TABLE 'c'(id INTEGER PRIMARY KEY, ax TEXT REFERENCES p(x));
INSERT INTO p VALUES (1, 'k1'), (2, 'k2');
INSERT INTO c VALUES (1, 'k1'), (5, 'k2');
-- alter
ALTER TABLE p RENAME COLUMN x TO y;
-- then
INSERT INTO c VALUES (6, 'k1');

-- case: name-single-quoted-everywhere
-- source: corpus: an index, a trigger and its UPDATE OF list, a view and its column list, all naming with strings
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT, n INTEGER DEFAULT 0);
CREATE TABLE log(id INTEGER PRIMARY KEY, 'msg' TEXT);
CREATE INDEX i ON 't'('a' COLLATE NOCASE, 'b' DESC);
CREATE TRIGGER tr AFTER UPDATE OF 'a' ON 't' BEGIN INSERT INTO 'log'('msg') VALUES (NEW.a); END;
CREATE VIEW 'v'('p', 'q') AS SELECT a, b FROM 't';
INSERT INTO t(id, a, b) VALUES (1, 'x', 'p'), (2, 'y', 'q');
-- alter
ALTER TABLE 't' RENAME 'a' TO 'z';
-- then
UPDATE t SET z = 'X' WHERE id = 1;
PRAGMA integrity_check;
SELECT * FROM v;

-- case: name-single-quoted-everywhere-drop
-- source: corpus: DROP COLUMN with an index, a trigger and a view on the table, all naming it with a string
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT, c TEXT);
CREATE TABLE log(id INTEGER PRIMARY KEY, msg TEXT);
CREATE INDEX i ON 't'('a');
CREATE TRIGGER tr AFTER INSERT ON 't' BEGIN INSERT INTO 'log'(msg) VALUES (NEW.a); END;
CREATE VIEW 'v' AS SELECT a, b FROM 't';
INSERT INTO t VALUES (1, 'x', 'p', 'c1'), (2, 'y', 'q', 'c2');
-- alter
ALTER TABLE t DROP COLUMN c;
-- then
INSERT INTO t(a, b) VALUES ('z', 'r');
SELECT * FROM v;
SELECT * FROM log;

-- case: name-constraint-keyword-prefix-drop
-- source: corpus: columns named unique_visits, primary_x, check_y: DROP unique_visits must not be taken for a UNIQUE column
-- native: ok
-- setup
CREATE TABLE stats(id INTEGER PRIMARY KEY, unique_visits INTEGER, primary_x TEXT, check_y INTEGER, references_z TEXT);
INSERT INTO stats VALUES (1, 10, 'p', 1, 'r'), (2, 20, 'q', 2, 's'), (4, 40, 'r', 3, 't');
DELETE FROM stats WHERE id = 2;
-- alter
ALTER TABLE stats DROP COLUMN unique_visits;
-- then
SELECT * FROM stats ORDER BY id;

-- case: name-constraint-keyword-prefix-rename
-- source: corpus: columns named unique_visits, primary_x, check_y next to real constraints; rename primary_x
-- native: ok
-- setup
CREATE TABLE stats(id INTEGER, unique_visits INTEGER UNIQUE, primary_x TEXT, check_y INTEGER CHECK (check_y > 0), PRIMARY KEY (id), CHECK (primary_x <> ''));
INSERT INTO stats VALUES (1, 10, 'p', 1), (2, 20, 'q', 2), (4, 40, 'r', 3);
DELETE FROM stats WHERE id = 2;
-- alter
ALTER TABLE stats RENAME COLUMN primary_x TO main_x;
-- then
INSERT INTO stats VALUES (5, 50, 's', 4);
SELECT * FROM stats ORDER BY id;

-- case: name-spaces-mixed-case
-- source: corpus: column "First Name" with spaces and mixed case, referenced as "first name" in a view and an index
-- native: ok
-- setup
CREATE TABLE people("Person Id" INTEGER PRIMARY KEY, "First Name" TEXT, "Last Name" TEXT);
CREATE INDEX people_first ON people("first name");
CREATE VIEW greet AS SELECT 'Hello ' || "first name" AS g FROM people;
INSERT INTO people VALUES (1, 'Ann', 'A'), (2, 'Bob', 'B'), (3, 'Cy', 'C');
DELETE FROM people WHERE "Person Id" = 2;
-- alter
ALTER TABLE people RENAME COLUMN "First Name" TO "Given Name";
-- then
SELECT * FROM greet;
SELECT "Given Name" FROM people ORDER BY "GIVEN NAME";

-- case: name-case-insensitive-reference
-- source: corpus: column declared Amount, referenced as AMOUNT and amount; ALTER names it amount
-- native: ok
-- setup
CREATE TABLE ledger(id INTEGER PRIMARY KEY, Amount INTEGER);
CREATE VIEW big AS SELECT id, AMOUNT FROM ledger WHERE amount > 5;
CREATE INDEX ledger_amount ON ledger(aMoUnT);
INSERT INTO ledger VALUES (1, 3), (2, 8), (3, 10);
DELETE FROM ledger WHERE id = 1;
-- alter
ALTER TABLE ledger RENAME COLUMN amount TO total;
-- then
SELECT * FROM big ORDER BY id;

-- case: name-case-only-rename
-- source: corpus: rename a column to the same name in another case (a TO A)
-- native: ok
-- setup
CREATE TABLE t(a INTEGER, b TEXT);
CREATE VIEW v AS SELECT a, b FROM t;
INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z');
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t RENAME COLUMN a TO A;
-- then
SELECT * FROM v;

-- case: name-table-equals-column
-- source: corpus: table a with a column a, referenced as a.a; rename the column a
-- native: ok
-- setup
CREATE TABLE a(a INTEGER, b INTEGER);
CREATE VIEW va AS SELECT a.a, b FROM a WHERE a.a > 0;
CREATE INDEX a_a ON a(a);
INSERT INTO a VALUES (1, 10), (2, 20), (3, 30);
DELETE FROM a WHERE a = 2;
-- alter
ALTER TABLE a RENAME COLUMN a TO z;
-- then
SELECT * FROM va ORDER BY z;

-- case: name-collation-named-column
-- source: corpus: a column named nocase declared COLLATE nocase and an index with COLLATE nocase; rename the column nocase
-- native: ok
-- setup
CREATE TABLE t(nocase TEXT COLLATE nocase, x TEXT);
CREATE INDEX t_x ON t(x COLLATE nocase);
CREATE INDEX t_nc ON t(nocase COLLATE nocase DESC);
INSERT INTO t VALUES ('Ann', 'p'), ('bob', 'Q'), ('CY', 'r');
DELETE FROM t WHERE x = 'Q';
-- alter
ALTER TABLE t RENAME COLUMN nocase TO ci;
-- then
SELECT ci FROM t WHERE ci = 'ANN';

-- case: name-cast-type-equals-column
-- source: corpus: a column named text used next to CAST(n AS text); rename the column text
-- native: ok
-- setup
CREATE TABLE t(text TEXT, n INTEGER);
CREATE VIEW v AS SELECT CAST(n AS text) AS s, text FROM t;
INSERT INTO t VALUES ('a', 1), ('b', 2), ('c', 3);
DELETE FROM t WHERE n = 2;
-- alter
ALTER TABLE t RENAME COLUMN text TO body;
-- then
SELECT s, typeof(s), body FROM v;

-- case: name-type-equals-column
-- source: corpus: the declared type name equals the column name (kind kind)
-- native: ok
-- setup
CREATE TABLE t(kind kind, x INTEGER);
INSERT INTO t VALUES ('a', 1), ('b', 2), ('c', 3);
DELETE FROM t WHERE x = 2;
-- alter
ALTER TABLE t RENAME COLUMN kind TO category;
-- then
SELECT category, typeof(category) FROM t;

-- case: name-default-mentions-column
-- source: corpus: DEFAULT 'note' and a declared type mentioning the column name; drop another column
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, note VARCHAR(10) DEFAULT 'note', old_note TEXT DEFAULT 'old_note');
INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z');
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t DROP COLUMN old_note;
-- then
INSERT INTO t(id) VALUES (4);
SELECT * FROM t ORDER BY id;

-- case: name-brackets-and-backticks
-- source: corpus: columns declared [my col], `other` and "Mixed Case"; rename with the ALTER naming the column in another quoting style
-- native: ok
-- setup
CREATE TABLE t([my col], `other`, "Mixed Case");
CREATE VIEW v AS SELECT [my col], `other`, "mixed case" FROM t;
INSERT INTO t VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t WHERE other = 5;
-- alter
ALTER TABLE t RENAME COLUMN "MY COL" TO [your col];
-- then
SELECT * FROM v;

-- case: name-comments-in-create-table
-- source: corpus: DROP COLUMN in a CREATE TABLE with -- and /* */ comments between the columns
-- native: ok
-- setup
CREATE TABLE t(
  a INTEGER, -- the a column
  b TEXT /* b, a text */,
  c REAL /* last */
);
INSERT INTO t VALUES (1, 'x', 1.5), (2, 'y', 2.5), (3, 'z', 3.5);
DELETE FROM t WHERE a = 2;
-- alter
ALTER TABLE t DROP COLUMN b;
-- then
SELECT rowid, * FROM t ORDER BY rowid;

-- case: name-type-with-parens-and-commas
-- source: corpus: DROP the last column when earlier columns have types with parentheses and commas (DECIMAL(10, 2)) and a DEFAULT with a comma
-- native: ok
-- setup
CREATE TABLE price(id INTEGER PRIMARY KEY, amount DECIMAL(10, 2) NOT NULL DEFAULT (round(1.5, 1)), label VARCHAR(20) DEFAULT 'a, b', extra TEXT);
INSERT INTO price VALUES (1, 1.25, 'x', 'e1'), (2, 2.5, 'y', 'e2'), (3, 3.75, 'z', 'e3');
DELETE FROM price WHERE id = 2;
-- alter
ALTER TABLE price DROP COLUMN extra;
-- then
INSERT INTO price(id) VALUES (4);
SELECT * FROM price ORDER BY id;

-- case: name-drop-first-column
-- source: corpus: DROP the first column of a table
-- native: ok
-- setup
CREATE TABLE t(first TEXT, second INTEGER, third INTEGER DEFAULT 3);
INSERT INTO t VALUES ('a', 1, 1), ('b', 2, 2), ('c', 3, 3);
DELETE FROM t WHERE second = 2;
-- alter
ALTER TABLE t DROP first;
-- then
INSERT INTO t(second) VALUES (4);
SELECT rowid, * FROM t ORDER BY rowid;

-- case: index-plain-and-multi-column
-- source: sqlite altercol.test 1.10-1.11
-- native: ok
-- setup
CREATE TABLE t1(a, b, c);
CREATE INDEX t1i ON t1(b, c);
CREATE INDEX t1j ON t1(a, c);
INSERT INTO t1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t1 WHERE a = 4;
-- alter
ALTER TABLE t1 RENAME COLUMN b TO d;
-- then
PRAGMA integrity_check;
SELECT rowid, * FROM t1 WHERE d = 8;

-- case: index-expression-partial
-- source: sqlite altercol.test 1.12
-- native: ok
-- setup
CREATE TABLE t1(a, b, c);
CREATE INDEX t1i ON t1(b+b+b+b, c) WHERE b>0;
INSERT INTO t1 VALUES (1, 2, 3), (4, -5, 6), (7, 8, 9);
DELETE FROM t1 WHERE a = 4;
-- alter
ALTER TABLE t1 RENAME b TO d;
-- then
INSERT INTO t1 VALUES (10, 11, 12);
PRAGMA integrity_check;
SELECT rowid, * FROM t1 WHERE d+d+d+d = 44 AND d > 0;

-- case: index-expression-lower-and-partial-not-null
-- source: corpus: expression index lower(name) and a partial index WHERE name IS NOT NULL; rename name
-- native: ok
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, email TEXT);
CREATE INDEX person_lname ON person(lower(name));
CREATE UNIQUE INDEX person_email ON person(email) WHERE name IS NOT NULL;
INSERT INTO person VALUES (1, 'Ann', 'a@x'), (2, NULL, 'b@x'), (3, 'Cy', 'c@x'), (4, NULL, 'b@x');
DELETE FROM person WHERE id = 3;
-- alter
ALTER TABLE person RENAME COLUMN name TO full_name;
-- then
INSERT INTO person VALUES (5, 'Dee', 'c@x');
PRAGMA integrity_check;
SELECT id FROM person WHERE lower(full_name) = 'ann';

-- case: index-other-table-same-column-name
-- source: corpus: indexes on u(a) and on a second column a of another table; rename t.a (the other indexes must not change)
-- native: ok
-- setup
CREATE TABLE t(a, b);
CREATE TABLE u(a, c);
CREATE INDEX t_a ON t(a);
CREATE INDEX u_a ON u(a);
CREATE INDEX u_ca ON u(c, a) WHERE a IS NOT NULL;
INSERT INTO t VALUES (1, 2), (3, 4), (5, 6);
INSERT INTO u VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM t WHERE a = 3;
DELETE FROM u WHERE a = 1;
-- alter
ALTER TABLE t RENAME COLUMN a TO ta;
-- then
PRAGMA integrity_check;
SELECT * FROM u WHERE a = 3;

-- case: index-collate-desc-rename
-- source: corpus: index with COLLATE and DESC on the renamed column; PRIMARY KEY(c1 COLLATE rtrim) like sqlite altertab3.test 5.0
-- native: ok
-- setup
CREATE TABLE t1(c1 INTEGER, c2 TEXT, PRIMARY KEY(c1 COLLATE rtrim), UNIQUE(c2));
CREATE INDEX t1_c2 ON t1(c2 COLLATE nocase DESC, c1);
INSERT INTO t1 VALUES (1, 'a'), (2, 'B'), (3, 'c');
DELETE FROM t1 WHERE c1 = 2;
-- alter
ALTER TABLE t1 RENAME c1 TO c3;
-- then
PRAGMA integrity_check;
SELECT c3, c2 FROM t1 ORDER BY c2 COLLATE nocase DESC;

-- case: index-redundant-unique-constraints
-- source: sqlite altercol.test 20.100-20.110
-- native: ok
-- setup
CREATE TABLE t1(aaa, b, c, UNIQUE(aaA), PRIMARY KEY(aAa), UNIQUE(aAA));
CREATE TABLE t2(aa UNIQUE, bb UNIQUE, cc UNIQUE, UNIQUE(aA), PRIMARY KEY(bB), UNIQUE(cC));
INSERT INTO t1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t1 WHERE aaa = 4;
INSERT INTO t2 VALUES (1, 2, 3), (4, 5, 6);
-- alter
ALTER TABLE t1 RENAME aaa TO bbb;
-- then
INSERT INTO t1 VALUES (10, 11, 12);
PRAGMA integrity_check;
SELECT rowid, * FROM t1 ORDER BY rowid;

-- case: index-drop-indexed-col
-- source: sqlite alterdropcol2.test 2.3.2 and alterdropcol.test 1.10
-- native: error: error in index idx after drop column: no such column: a
-- setup
CREATE TABLE x1(a, b, c);
CREATE INDEX idx ON x1(a);
INSERT INTO x1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM x1 WHERE a = 4;
-- alter
ALTER TABLE x1 DROP COLUMN a;
-- then
SELECT * FROM x1;

-- case: index-drop-col-in-partial-where
-- source: sqlite alterdropcol2.test 2.4.1
-- native: error: error in index i1 after drop column: no such column: a
-- setup
CREATE TABLE x1234(a, b, c PRIMARY KEY) WITHOUT ROWID;
CREATE INDEX i1 ON x1234(b) WHERE ((a+5) % 10)==0;
INSERT INTO x1234 VALUES (5, 1, 'k'), (6, 2, 'l');
-- alter
ALTER TABLE x1234 DROP a;
-- then
SELECT * FROM x1234;

-- case: index-drop-quoted-names
-- source: sqlite alterdropcol2.test 2.3.1
-- native: error: error in index idx after drop column: no such column: z 1
-- setup
CREATE TABLE 'one two'('x y', 'z 1', 'a b');
CREATE INDEX idx ON 'one two'('z 1');
INSERT INTO 'one two' VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM 'one two' WHERE "x y" = 4;
-- alter
ALTER TABLE 'one two' DROP COLUMN 'z 1';
-- then
SELECT * FROM "one two";

-- case: index-drop-same-name-other-table
-- source: corpus: DROP t.a while another table u has an index on its own column a
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT);
CREATE TABLE u(id INTEGER PRIMARY KEY, a TEXT);
CREATE INDEX u_a ON u(a);
CREATE INDEX t_b ON t(b);
INSERT INTO t VALUES (1, 'x', 'p'), (2, 'y', 'q'), (3, 'z', 'r');
INSERT INTO u VALUES (1, 'x'), (5, 'y');
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t DROP COLUMN a;
-- then
PRAGMA integrity_check;
SELECT * FROM t WHERE b = 'r';

-- case: index-drop-unique-col
-- source: sqlite alterdropcol.test 1.8 and alterdropcol2.test 2.2.1
-- native: error: cannot drop UNIQUE column: "z"
-- setup
CREATE TABLE t2(x INTEGER PRIMARY KEY, y, z UNIQUE);
INSERT INTO t2 VALUES (1, 2, 3), (4, 5, 6);
-- alter
ALTER TABLE t2 DROP COLUMN z;
-- then
SELECT * FROM t2;

-- case: index-drop-col-in-multi-unique
-- source: sqlite alterdropcol2.test 2.2.2
-- native: error: error in table x1 after drop column: no such column: c
-- setup
CREATE TABLE x1(a PRIMARY KEY, b, c, UNIQUE(b, c));
INSERT INTO x1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM x1 WHERE a = 4;
-- alter
ALTER TABLE x1 DROP COLUMN c;
-- then
SELECT * FROM x1;

-- case: index-drop-col-with-unique-index
-- source: corpus: DROP a column covered by a CREATE UNIQUE INDEX (not a UNIQUE constraint)
-- native: error: error in index t_c after drop column: no such column: c
-- setup
CREATE TABLE t(a, b, c);
CREATE UNIQUE INDEX t_c ON t(c);
INSERT INTO t VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t WHERE a = 4;
-- alter
ALTER TABLE t DROP COLUMN c;
-- then
SELECT * FROM t;

-- case: rowid-gaps-drop
-- source: bug report: rowid column value is not maintained when modifying the structure of a table (sqlitebrowser #3022)
-- native: ok
-- setup
CREATE TABLE t(a TEXT, b TEXT, c TEXT);
INSERT INTO t VALUES ('a1', 'b1', 'c1'), ('a2', 'b2', 'c2'), ('a3', 'b3', 'c3'), ('a4', 'b4', 'c4'), ('a5', 'b5', 'c5');
DELETE FROM t WHERE a IN ('a2', 'a4');
INSERT INTO t(rowid, a, b, c) VALUES (100, 'a100', 'b100', 'c100');
-- alter
ALTER TABLE t DROP COLUMN b;
-- then
INSERT INTO t(a, c) VALUES ('next', 'n');
SELECT rowid, * FROM t ORDER BY rowid;

-- case: rowid-gaps-rename
-- source: corpus: RENAME COLUMN never rewrites the table natively; rowids with gaps must survive
-- native: ok
-- setup
CREATE TABLE t(a TEXT, b TEXT);
CREATE INDEX t_b ON t(b);
INSERT INTO t VALUES ('a1', 'b1'), ('a2', 'b2'), ('a3', 'b3'), ('a4', 'b4');
DELETE FROM t WHERE a = 'a1';
UPDATE t SET rowid = 42 WHERE a = 'a3';
-- alter
ALTER TABLE t RENAME COLUMN b TO bb;
-- then
INSERT INTO t VALUES ('next', 'n');
SELECT rowid, * FROM t ORDER BY rowid;

-- case: rowid-column-named-rowid
-- source: corpus: a table with an ordinary column named rowid (the real rowid is only reachable as oid/_rowid_); drop another column (the then part copies the real rowids into a table, as SELECT rowid, * shows the column)
-- native: ok
-- setup
CREATE TABLE t(rowid TEXT, a INTEGER, b INTEGER);
INSERT INTO t(rowid, a, b) VALUES ('x', 1, 2), ('y', 3, 4), ('z', 5, 6), ('w', 7, 8);
DELETE FROM t WHERE a = 3;
UPDATE t SET oid = 50 WHERE a = 7;
-- alter
ALTER TABLE t DROP COLUMN b;
-- then
CREATE TABLE seen AS SELECT _rowid_ AS real_rowid, * FROM t;
SELECT _rowid_, * FROM t ORDER BY _rowid_;

-- case: rowid-all-aliases-shadowed
-- source: corpus: columns named rowid, oid and _rowid_ shadow every rowid alias; rename another column
-- native: ok
-- setup
CREATE TABLE t(rowid TEXT, oid TEXT, _rowid_ TEXT, a INTEGER);
INSERT INTO t VALUES ('r1', 'o1', 'u1', 1), ('r2', 'o2', 'u2', 2), ('r3', 'o3', 'u3', 3);
DELETE FROM t WHERE a = 1;
-- alter
ALTER TABLE t RENAME COLUMN a TO n;
-- then
INSERT INTO t VALUES ('r4', 'o4', 'u4', 4);
SELECT * FROM t ORDER BY n;

-- case: rowid-integer-primary-key-desc
-- source: corpus: id INTEGER PRIMARY KEY DESC is not a rowid alias; drop another column, the separate rowids must be kept
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY DESC, a TEXT, b TEXT);
INSERT INTO t VALUES (10, 'a', 'x'), (20, 'b', 'y'), (30, 'c', 'z');
DELETE FROM t WHERE id = 10;
UPDATE t SET rowid = rowid + 100 WHERE id = 30;
-- alter
ALTER TABLE t DROP COLUMN b;
-- then
INSERT INTO t VALUES (40, 'd');
SELECT rowid, * FROM t ORDER BY rowid;

-- case: rowid-int-primary-key-not-alias
-- source: corpus: id INT PRIMARY KEY (INT, not INTEGER) is not a rowid alias; rename it
-- native: ok
-- setup
CREATE TABLE t(id INT PRIMARY KEY, a TEXT);
INSERT INTO t VALUES (10, 'a'), (20, 'b'), (30, 'c');
DELETE FROM t WHERE id = 20;
UPDATE t SET rowid = 7 WHERE id = 30;
-- alter
ALTER TABLE t RENAME COLUMN id TO code;
-- then
INSERT INTO t VALUES (40, 'd');
SELECT rowid, * FROM t ORDER BY rowid;

-- case: rowid-pk-table-constraint-alias
-- source: corpus: id INTEGER with PRIMARY KEY(id) as a table constraint is a rowid alias; rename it
-- native: ok
-- setup
CREATE TABLE t(id INTEGER, a TEXT, PRIMARY KEY(id));
INSERT INTO t VALUES (10, 'a'), (20, 'b'), (30, 'c');
DELETE FROM t WHERE id = 30;
-- alter
ALTER TABLE t RENAME COLUMN id TO ident;
-- then
INSERT INTO t(a) VALUES ('d');
SELECT rowid, * FROM t ORDER BY rowid;

-- case: seq-autoincrement-above-max-drop
-- source: bug report: rebuild does not preserve AUTOINCREMENT (sqlite_sequence) continuity (neilotoole/sq #757)
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT, b TEXT);
INSERT INTO t(a, b) VALUES ('a1', 'b1'), ('a2', 'b2'), ('a3', 'b3'), ('a4', 'b4'), ('a5', 'b5');
DELETE FROM t WHERE id >= 4;
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t DROP COLUMN b;
-- then
INSERT INTO t(a) VALUES ('new');
SELECT * FROM t ORDER BY id;
SELECT name, seq FROM sqlite_sequence;

-- case: seq-autoincrement-above-max-rename
-- source: bug report: rebuild does not preserve AUTOINCREMENT (sqlite_sequence) continuity (neilotoole/sq #757)
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT, b TEXT);
INSERT INTO t(a, b) VALUES ('a1', 'b1'), ('a2', 'b2'), ('a3', 'b3'), ('a4', 'b4'), ('a5', 'b5');
DELETE FROM t WHERE id >= 4;
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE t RENAME COLUMN b TO bb;
-- then
INSERT INTO t(a, bb) VALUES ('new', 'n');
SELECT * FROM t ORDER BY id;
SELECT name, seq FROM sqlite_sequence;

-- case: seq-autoincrement-rename-id-col
-- source: corpus: rename the AUTOINCREMENT column itself when sqlite_sequence is above max(id), with a second AUTOINCREMENT table
-- native: ok
-- setup
CREATE TABLE other(id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT);
CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT);
INSERT INTO other(v) VALUES ('o1'), ('o2'), ('o3');
INSERT INTO t(a) VALUES ('a1'), ('a2'), ('a3'), ('a4');
DELETE FROM t WHERE id = 4;
DELETE FROM other WHERE id = 3;
DELETE FROM t WHERE id = 1;
-- alter
ALTER TABLE t RENAME COLUMN id TO t_id;
-- then
INSERT INTO t(a) VALUES ('new');
INSERT INTO other(v) VALUES ('new');
SELECT * FROM t ORDER BY t_id;
SELECT name, seq FROM sqlite_sequence ORDER BY name;

-- case: seq-manually-raised-drop
-- source: corpus: sqlite_sequence set by hand far above max(id); drop a column
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT, junk BLOB);
INSERT INTO t(a, junk) VALUES ('a1', x'01'), ('a2', x'02'), ('a3', x'03');
DELETE FROM t WHERE id = 2;
UPDATE sqlite_sequence SET seq = 1000 WHERE name = 't';
-- alter
ALTER TABLE t DROP COLUMN junk;
-- then
INSERT INTO t(a) VALUES ('new');
SELECT * FROM t ORDER BY id;
SELECT name, seq FROM sqlite_sequence;

-- case: wr-drop-non-key-col
-- source: sqlite alterdropcol2.test 1.0-1.2
-- native: ok
-- setup
CREATE TABLE t1(c, b, a, PRIMARY KEY(b, a)) WITHOUT ROWID;
INSERT INTO t1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t1 WHERE c = 4;
-- alter
ALTER TABLE t1 DROP c;
-- then
INSERT INTO t1 VALUES (10, 11);
SELECT * FROM t1;

-- case: wr-integer-pk-drop-first
-- source: sqlite alterdropcol.test 2.2.0-2.2.2 (WITHOUT ROWID)
-- native: ok
-- setup
CREATE TABLE t1(x, y INTEGER PRIMARY KEY, z) WITHOUT ROWID;
INSERT INTO t1 VALUES (1, 2, 3);
INSERT INTO t1 VALUES (4, 5, 6);
INSERT INTO t1 VALUES (7, 8, 9);
-- alter
ALTER TABLE t1 DROP COLUMN x;
-- then
SELECT * FROM t1;

-- case: wr-rename-pk-col
-- source: corpus: WITHOUT ROWID table; rename a primary key column referenced by an index and a child foreign key
-- native: ok
-- setup
CREATE TABLE kv(ns TEXT, k TEXT, v TEXT, PRIMARY KEY (ns, k)) WITHOUT ROWID;
CREATE INDEX kv_v ON kv(v, k);
CREATE TABLE ref(ns TEXT, k TEXT, FOREIGN KEY (ns, k) REFERENCES kv(ns, k));
INSERT INTO kv VALUES ('a', 'x', '1'), ('a', 'y', '2'), ('b', 'x', '3');
DELETE FROM kv WHERE v = '2';
INSERT INTO ref VALUES ('a', 'x'), ('a', 'x'), ('b', 'x');
DELETE FROM ref WHERE rowid = 2;
-- alter
ALTER TABLE kv RENAME COLUMN k TO key_name;
-- then
PRAGMA foreign_keys = ON;
INSERT INTO ref VALUES ('b', 'x');
PRAGMA integrity_check;
SELECT * FROM kv;

-- case: pk-composite-rename
-- source: sqlite altercol.test 1.7 and 1.9
-- native: ok
-- setup
CREATE TABLE t1(a, b TEXT, c, PRIMARY KEY(a, b), UNIQUE("B"));
INSERT INTO t1 VALUES (1, 'p', 3), (2, 'q', 4), (3, 'r', 5);
DELETE FROM t1 WHERE a = 2;
-- alter
ALTER TABLE t1 RENAME COLUMN b TO d;
-- then
INSERT INTO t1 VALUES (4, 's', 6);
SELECT rowid, * FROM t1 ORDER BY rowid;

-- case: pk-composite-drop-member
-- source: sqlite alterdropcol2.test 2.1.2
-- native: error: cannot drop PRIMARY KEY column: "c"
-- setup
CREATE TABLE x1(a, b, c, d, e, PRIMARY KEY(b, c, d));
INSERT INTO x1 VALUES (1, 2, 3, 4, 5), (6, 7, 8, 9, 10), (11, 12, 13, 14, 15);
DELETE FROM x1 WHERE a = 6;
-- alter
ALTER TABLE x1 DROP COLUMN c;
-- then
SELECT * FROM x1;

-- case: pk-drop-integer-primary-key
-- source: sqlite alterdropcol.test 1.9
-- native: error: cannot drop PRIMARY KEY column: "x"
-- setup
CREATE TABLE t2(x INTEGER PRIMARY KEY, y, z);
INSERT INTO t2 VALUES (1, 2, 3), (5, 6, 7);
-- alter
ALTER TABLE t2 DROP COLUMN x;
-- then
SELECT * FROM t2;

-- case: default-not-null-rename
-- source: corpus: NOT NULL DEFAULT columns; rename one, then insert without it
-- native: ok
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, status TEXT NOT NULL DEFAULT 'new', score REAL NOT NULL DEFAULT 0.5, created TEXT DEFAULT (lower('X')));
INSERT INTO t(id, status) VALUES (1, 'a'), (2, 'b'), (3, 'c');
DELETE FROM t WHERE id = 1;
-- alter
ALTER TABLE t RENAME COLUMN status TO state;
-- then
INSERT INTO t(id) VALUES (4);
SELECT * FROM t ORDER BY id;

-- case: default-not-null-drop-other
-- source: corpus: DROP a column; the remaining NOT NULL DEFAULT and COLLATE columns keep their definitions
-- native: ok
-- setup
CREATE TABLE t(name TEXT NOT NULL COLLATE nocase DEFAULT 'x', gone INTEGER NOT NULL DEFAULT 7, n INTEGER DEFAULT (abs(-3)));
INSERT INTO t(name, gone, n) VALUES ('Ann', 1, 1), ('bob', 2, 2), ('CY', 3, 3);
DELETE FROM t WHERE n = 2;
-- alter
ALTER TABLE t DROP COLUMN gone;
-- then
INSERT INTO t DEFAULT VALUES;
SELECT rowid, * FROM t WHERE name = 'ANN' OR name = 'X' ORDER BY rowid;

-- case: collate-column-rename
-- source: corpus: rename a COLLATE nocase column used in ORDER BY and UNIQUE
-- native: ok
-- setup
CREATE TABLE t(code TEXT COLLATE nocase UNIQUE, v INTEGER);
INSERT INTO t VALUES ('a', 1), ('B', 2), ('c', 3);
DELETE FROM t WHERE v = 1;
-- alter
ALTER TABLE t RENAME COLUMN code TO tag;
-- then
INSERT INTO t VALUES ('A', 4);
SELECT tag, v FROM t ORDER BY tag;
SELECT v FROM t WHERE tag = 'b';

-- case: err-rename-to-existing
-- source: corpus: rename a column to the name of another existing column
-- native: error: error in table t after rename: duplicate column name: b
-- setup
CREATE TABLE t(a, b);
INSERT INTO t VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM t WHERE a = 3;
-- alter
ALTER TABLE t RENAME COLUMN a TO b;
-- then
SELECT * FROM t;

-- case: err-rename-to-existing-other-case
-- source: corpus: rename a column to an existing column's name in another case
-- native: error: error in table t after rename: duplicate column name: Bee
-- setup
CREATE TABLE t(a, Bee);
INSERT INTO t VALUES (1, 2), (3, 4), (5, 6);
DELETE FROM t WHERE a = 3;
-- alter
ALTER TABLE t RENAME a TO "BEE";
-- then
SELECT * FROM t;

-- case: err-rename-missing-col
-- source: sqlite altercol.test 12.4
-- native: error: no such column: "a"
-- setup
CREATE TABLE t2(x, y, z);
INSERT INTO t2 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t2 WHERE x = 4;
-- alter
ALTER TABLE t2 RENAME COLUMN a TO b;
-- then
SELECT * FROM t2;

-- case: err-drop-missing-col
-- source: sqlite alterdropcol.test 1.5
-- native: error: no such column: "d"
-- setup
CREATE TABLE t1(a, b, c);
INSERT INTO t1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t1 WHERE a = 4;
-- alter
ALTER TABLE t1 DROP COLUMN d;
-- then
SELECT * FROM t1;

-- case: err-drop-last-col
-- source: sqlite alterdropcol.test 1.7.3
-- native: error: cannot drop column "a": no other columns exist
-- setup
CREATE TABLE t1(a);
INSERT INTO t1 VALUES (1), (2), (3);
DELETE FROM t1 WHERE a = 2;
-- alter
ALTER TABLE t1 DROP COLUMN a;
-- then
SELECT * FROM t1;

-- case: err-drop-pk-col
-- source: sqlite alterdropcol2.test 2.1.1
-- native: error: cannot drop PRIMARY KEY column: "a"
-- setup
CREATE TABLE x1(a PRIMARY KEY, b, c);
INSERT INTO x1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM x1 WHERE a = 4;
-- alter
ALTER TABLE x1 DROP COLUMN a;
-- then
SELECT * FROM x1;

-- case: err-rename-view-col
-- source: sqlite altercol.test 12.2
-- native: error: cannot rename columns of view "v2"
-- setup
CREATE TABLE t1(a, b);
INSERT INTO t1 VALUES (1, 1), (2, 2), (3, 3);
DELETE FROM t1 WHERE a = 2;
CREATE VIEW v2(c, d) AS SELECT * FROM t1;
-- alter
ALTER TABLE v2 RENAME c TO y;
-- then
SELECT * FROM v2;

-- case: err-drop-view-col
-- source: sqlite alterdropcol.test 1.2
-- native: error: cannot drop column from view "v1"
-- setup
CREATE TABLE t1(a, b, c);
INSERT INTO t1 VALUES (1, 2, 3), (4, 5, 6), (7, 8, 9);
DELETE FROM t1 WHERE a = 4;
CREATE VIEW v1 AS SELECT * FROM t1;
-- alter
ALTER TABLE v1 DROP COLUMN c;
-- then
SELECT * FROM v1;

-- case: err-sqlite-sequence
-- source: sqlite altercol.test 12.1 (system table, here sqlite_sequence)
-- native: error: table sqlite_sequence may not be altered
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, a);
INSERT INTO t(a) VALUES (1), (2), (3);
DELETE FROM t WHERE id = 2;
-- alter
ALTER TABLE sqlite_sequence RENAME COLUMN seq TO s;
-- then
SELECT name, seq FROM sqlite_sequence;

-- case: name-blob-literal-x-in-view
-- source: review: x'cafe' is a blob literal, not the column x followed by a string
-- setup
CREATE TABLE pt(id INTEGER PRIMARY KEY, x REAL, tag BLOB);
CREATE VIEW w AS SELECT id, x'cafe' AS marker, x FROM pt WHERE tag = x'01' OR tag IS NULL;
INSERT INTO pt VALUES (1, 2.5, x'01'), (2, 9.0, x'02'), (3, 3.5, NULL);
DELETE FROM pt WHERE id = 2;
-- alter
ALTER TABLE pt RENAME COLUMN x TO lon;
-- then
SELECT * FROM w;

-- case: from-single-quoted-table-name
-- source: review: SQLite takes a 'string' in FROM for a table name
-- setup
CREATE TABLE a(id INTEGER PRIMARY KEY, x TEXT);
CREATE TABLE b(id INTEGER PRIMARY KEY, x TEXT);
CREATE VIEW v AS SELECT (SELECT x FROM 'a' WHERE a.id = b.id) AS got FROM b;
INSERT INTO a VALUES (1, 'from-a'), (2, 'gone');
INSERT INTO b VALUES (1, 'from-b');
DELETE FROM a WHERE id = 2;
-- alter
ALTER TABLE a RENAME COLUMN x TO y;
-- then
SELECT * FROM v;

-- case: fk-single-quoted-parent-name
-- source: review: REFERENCES 'a'(x) names the parent with a string
-- setup
CREATE TABLE a(id INTEGER PRIMARY KEY, x TEXT UNIQUE);
CREATE TABLE c(id INTEGER PRIMARY KEY, ax TEXT REFERENCES 'a'(x));
INSERT INTO a VALUES (1, 'k1'), (2, 'k2'), (3, 'k3');
INSERT INTO c VALUES (1, 'k1'), (5, 'k3');
-- alter
ALTER TABLE a RENAME COLUMN x TO y;
-- then
INSERT INTO c VALUES (6, 'k2');

-- case: name-non-ascii-case-is-not-folded
-- source: review: SQLite folds case for ASCII letters only; "é" and "É" are different names
-- setup
CREATE TABLE a(id INTEGER PRIMARY KEY, "é" TEXT);
CREATE TABLE b(id INTEGER PRIMARY KEY, "É" TEXT);
CREATE VIEW v AS SELECT id, (SELECT "É" FROM a) AS w FROM b;
INSERT INTO a VALUES (1, 'from-a');
INSERT INTO b VALUES (1, 'from-b'), (4, 'from-b4');
-- alter
ALTER TABLE a RENAME COLUMN "é" TO z;
-- then
SELECT * FROM v;

-- case: comment-after-last-column-rename
-- source: review: a -- comment after the last column must not swallow the closing parenthesis
-- setup
CREATE TABLE a(id INTEGER PRIMARY KEY, -- the id
  x TEXT UNIQUE,
  y TEXT -- last column
);
CREATE TABLE c(id INTEGER PRIMARY KEY,
  ax TEXT REFERENCES a(x) -- the parent
);
INSERT INTO a VALUES (1, 'p', 'q'), (3, 'r', 's');
INSERT INTO c VALUES (2, 'p');
-- alter
ALTER TABLE a RENAME COLUMN x TO xx;
-- then
INSERT INTO a(xx, y) VALUES ('t', 'u');

-- case: comment-after-last-column-drop
-- source: review: the same, for DROP COLUMN
-- setup
CREATE TABLE a(id INTEGER PRIMARY KEY, -- the id
  x TEXT,
  y TEXT -- last column
);
INSERT INTO a VALUES (1, 'p', 'q'), (3, 'r', 's');
-- alter
ALTER TABLE a DROP COLUMN x;
-- then
INSERT INTO a(y) VALUES ('u');

-- case: trig-order-kept-on-other-table
-- source: review: recreating one trigger of a table must not change the order its triggers fire in
-- setup
CREATE TABLE a(id INTEGER PRIMARY KEY, x INTEGER, z TEXT);
CREATE TABLE b(id INTEGER PRIMARY KEY, v INTEGER);
CREATE TABLE log(msg TEXT);
CREATE TRIGGER b_first AFTER INSERT ON b BEGIN
  UPDATE b SET v = (SELECT x FROM a WHERE id = 1) WHERE id = NEW.id;
END;
CREATE TRIGGER b_second AFTER INSERT ON b BEGIN
  INSERT INTO log VALUES ('second saw v=' || coalesce((SELECT v FROM b WHERE id = NEW.id), 'NULL'));
END;
INSERT INTO a VALUES (1, 5, 'zz'), (2, 6, 'yy');
INSERT INTO b(id) VALUES (7);
-- alter
ALTER TABLE a DROP COLUMN z;
-- then
INSERT INTO b(id) VALUES (8);

-- case: name-trigger-named-like-a-table
-- source: a trigger may share its name with a table; the rename rewrites both
-- setup
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE audit(id INTEGER PRIMARY KEY, who TEXT);
CREATE TRIGGER audit AFTER INSERT ON person BEGIN INSERT INTO audit(who) VALUES (NEW.name); END;
INSERT INTO person VALUES (1, 'ann'), (3, 'cy');
-- alter
ALTER TABLE audit RENAME COLUMN who TO whom;
-- then
INSERT INTO person(name) VALUES ('dee');

-- case: name-canonically-equivalent-tables
-- source: review: SQLite compares names by bytes; "café" (U+00E9) and "café" (e + U+0301) are two tables
-- setup
CREATE TABLE "café"(id INTEGER PRIMARY KEY, b TEXT, c TEXT);
CREATE TABLE "café"(id INTEGER PRIMARY KEY, b TEXT, c TEXT);
INSERT INTO "café" VALUES (1, 'composed-b', 'c1');
INSERT INTO "café" VALUES (1, 'decomposed-b', 'c2');
-- alter
ALTER TABLE "café" DROP COLUMN b;
-- then
INSERT INTO "café"(c) VALUES ('c3');

-- case: from-string-alias
-- source: review: a 'string' alias in FROM qualifies columns like a name
-- setup
CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT);
CREATE VIEW v AS SELECT "tt".x AS got FROM t AS 'tt';
INSERT INTO t VALUES (1, 'one'), (4, 'four');
-- alter
ALTER TABLE t RENAME COLUMN x TO y;
-- then
SELECT * FROM v;
