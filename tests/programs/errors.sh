#!/bin/bash
# Programs that fail keep exactly their exit status, stdout and stderr under
# the idle shim: sqlite3 on bad SQL and jq on invalid JSON.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/sqlite3 /usr/bin/jq

STDIN="$TMP/bad.sql"
cat >"$STDIN" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE);
INSERT INTO t VALUES (1, 'one'), (2, 'two');
SELECT a, b FROM t ORDER BY a;
INSERT INTO t VALUES (3, 'one');
SELECT * FROM no_such_table;
SELEC broken syntax here;
SELECT 'still running';
SQL
sqlite=(/usr/bin/sqlite3 -batch "$TMP/bad.sqlite")
for mode in plain idle; do
	rm -f "$TMP/bad.sqlite"
	run_mode sqlbad "$mode" "${sqlite[@]}"
done
compare_runs sqlbad plain idle
expect_status sqlbad plain 1
expect_contains "sqlite3 rows before the errors" "$TMP/sqlbad.plain.out" '^2\|two$'
expect_contains "sqlite3 constraint error" "$TMP/sqlbad.plain.err" 'UNIQUE constraint failed: t\.b'
expect_contains "sqlite3 missing table" "$TMP/sqlbad.plain.err" 'no such table: no_such_table'
expect_contains "sqlite3 syntax error" "$TMP/sqlbad.plain.err" 'syntax error'
rm -f "$TMP/bad.sqlite"
served_by_shim sqlbad malloc 10 "${sqlite[@]}"

STDIN="$TMP/bad.json"
printf '{"ok": [1, 2, 3], "nested": {"a": [true, false, null]}}\n{"broken": [1, 2,, 3]}\n' >"$STDIN"
jq_cmd=(/usr/bin/jq -c '.nested.a | map(. == null)')
identical_under_idle_shim jqbad "${jq_cmd[@]}"
expect_failure jqbad plain
expect_contains "jq output before the error" "$TMP/jqbad.plain.out" '^\[false,false,true\]$'
expect_contains "jq parse error" "$TMP/jqbad.plain.err" 'parse error: .* at line 2'
served_by_shim jqbad malloc 10 "${jq_cmd[@]}"
