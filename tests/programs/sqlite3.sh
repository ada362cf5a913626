#!/bin/bash
# sqlite3 creating tables, inserting rows, building an index, joining and
# aggregating gives the same stdout, stderr and status under the idle shim.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/sqlite3

STDIN="$TMP/script.sql"
cat >"$STDIN" <<'SQL'
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER REFERENCES customer(id),
                    amount INTEGER, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO customer(id, name, city)
SELECT i, 'customer-' || i, 'city-' || (i % 17) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO orders(id, customer, amount, note)
SELECT i, (i * 7919) % 500 + 1, (i * 104729) % 1000, printf('%.*c', i % 200, 'x') FROM n;
CREATE INDEX orders_by_customer ON orders(customer, amount);
SELECT c.city, count(*), sum(o.amount), min(o.amount), max(o.amount),
       round(avg(length(o.note)), 3)
  FROM orders o JOIN customer c ON c.id = o.customer
 GROUP BY c.city ORDER BY sum(o.amount) DESC, c.city;
SELECT c.name, count(o.id) AS n, group_concat(o.amount, '+')
  FROM customer c LEFT JOIN orders o ON o.customer = c.id AND o.amount > 990
 GROUP BY c.id HAVING n >= 1 ORDER BY n DESC, c.name LIMIT 15;
EXPLAIN QUERY PLAN SELECT * FROM orders WHERE customer = 42 AND amount > 10;
SELECT count(*) FROM orders WHERE customer = 42 AND amount > 10;
PRAGMA integrity_check;
SQL

sqlite=(/usr/bin/sqlite3 -batch -bail "$TMP/db.sqlite")
for mode in plain idle; do
	# The same database path for every run, each starting from no file.
	rm -f "$TMP/db.sqlite"
	run_mode sql "$mode" "${sqlite[@]}"
	[ -f "$TMP/db.sqlite" ] && cp "$TMP/db.sqlite" "$TMP/db.$mode"
done
compare_runs sql plain idle
expect_status sql plain 0
expect_contains "sqlite3 join/aggregate output" "$TMP/sql.plain.out" '^city-[0-9]+\|[0-9]+\|'
expect_contains "sqlite3 used the index" "$TMP/sql.plain.out" 'USING (COVERING )?INDEX orders_by_customer'
expect_contains "sqlite3 integrity check" "$TMP/sql.plain.out" '^ok$'
same_file "sqlite3 database file" "$TMP/db.plain" "$TMP/db.idle"

rm -f "$TMP/db.sqlite"
served_by_shim sql malloc 1000 "${sqlite[@]}"
