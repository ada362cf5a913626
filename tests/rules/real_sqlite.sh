#!/bin/bash
# A real program: python3 fills an in-memory sqlite3 database until sqlite
# reports out of memory, then a list of 1000-byte objects until MemoryError,
# three times, under limit=16M and oom=fail. With 'lib:libsqlite3.so* =>
# NORETRY' every failure whose first frame outside libc is in libsqlite3
# carries NORETRY and failed after its round (no OOM step), while python3's
# own failures stay KERNEL and reach the OOM step. Without a matching rule
# (lib:libfoo*) libsqlite3's failures are KERNEL and reach it too.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"
need_prog /usr/bin/python3
/usr/bin/python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"
ldd /usr/lib/python3*/lib-dynload/_sqlite3*.so 2>/dev/null | grep -q 'libsqlite3\.so' ||
	skip "python3's sqlite3 module does not link libsqlite3.so"

cat >"$TMP/w.py" <<'PY'
import sqlite3
for cycle in range(3):
    db = sqlite3.connect(":memory:")
    db.execute("create table t(x)")
    rows, err = 0, "none"
    try:
        while True:
            db.execute("with recursive c(i) as (select 1 union all select i+1 from c"
                       " where i<500) insert into t select printf('%.200c', i) from c")
            rows += 500
    except (sqlite3.Error, MemoryError) as e:
        err = type(e).__name__
    keep, blocks = [], 0
    try:
        while True:
            keep.append(bytes(1000))
    except MemoryError:
        blocks = len(keep)
    del keep
    db.close()
    print(f"cycle {cycle}: sqlite rows {rows} ({err}), python blocks {blocks}")
PY

# py TAG RULES: runs the workload; leaves TAG.out, TAG.rec, TAG.sum.
py() {
	local rc=0
	GFP_RULES=$2 GFP_POLICY='limit=16M;oom=fail;retries=2;wait=1ms;warn.burst=0' \
		GFP_RECORD=$TMP/$1.rec GFP_LOG=$TMP/$1.log LD_PRELOAD=$SHIM \
		/usr/bin/python3 "$TMP/w.py" >"$TMP/$1.out" 2>"$TMP/$1.err" || rc=$?
	touch "$TMP/$1.rec"
	$RECSUM lib "$TMP/$1.rec" >"$TMP/$1.sum"
	note "$2: $(paste -sd ' ' "$TMP/$1.out")"
	note "$2: failure records (module flags how count): $(paste -sd ';' "$TMP/$1.sum")"
	note "$2: OOM records: $(grep -c '"event":"oom"' "$TMP/$1.rec")"
	[ "$rc" = 0 ] || { cat "$TMP/$1.err" >&2; fail "$2: python3 exited $rc"; }
	[ "$(grep -c '(MemoryError), python blocks [1-9]' "$TMP/$1.out")" = 3 ] ||
		{ cat "$TMP/$1.out" >&2; fail "$2: expected 3 cycles where sqlite and python3 ran out"; }
}
# count TAG AWK-CONDITION: failure records of the kinds where it holds ($1
# module, $2 flags, $3 how, $4 count).
count() {
	awk "$2 { n += \$4 } END { print n + 0 }" "$TMP/$1.sum"
}

py rule 'lib:libsqlite3.so* => NORETRY'
sq=$(count rule '$1 ~ /^libsqlite3/')
sq_noretry=$(count rule '$1 ~ /^libsqlite3/ && $2 == "KERNEL|NORETRY" && $3 == "noretry"')
others=$(count rule '$1 !~ /^libsqlite3/')
others_kernel=$(count rule '$1 !~ /^libsqlite3/ && $2 == "KERNEL" && $3 == "oom"')
note "with the rule: $sq_noretry of $sq libsqlite3 failures NORETRY after their round, $others_kernel of $others others KERNEL at the OOM step"
[ "$sq" -ge 3 ] && [ "$sq_noretry" = "$sq" ] ||
	{ cat "$TMP/rule.sum" >&2; fail "libsqlite3's failures under its rule: $sq_noretry of $sq NORETRY, after their round"; }
[ "$others" -ge 3 ] && [ "$others_kernel" = "$others" ] ||
	{ cat "$TMP/rule.sum" >&2; fail "the other failures: $others_kernel of $others KERNEL, at the OOM step"; }
expect_eq "OOM records (the others only)" "$others" "$(grep -c '"event":"oom"' "$TMP/rule.rec")"

py none 'lib:libfoo* => NORETRY'
sq=$(count none '$1 ~ /^libsqlite3/')
sq_kernel=$(count none '$1 ~ /^libsqlite3/ && $2 == "KERNEL" && $3 == "oom"')
note "without a matching rule: $sq_kernel of $sq libsqlite3 failures KERNEL at the OOM step"
[ "$sq" -ge 3 ] && [ "$sq_kernel" = "$sq" ] ||
	{ cat "$TMP/none.sum" >&2; fail "libsqlite3's failures without a matching rule: $sq_kernel of $sq KERNEL"; }
