#!/bin/bash
# gfp-sweep's outcomes from output and status (outprog): a loss behind a NUL
# byte is silent; so is one behind a program's normal non-zero status; a
# program whose output changes by itself gets a note and no silent finding;
# a program that runs itself gets failures in its own process only, and its
# printed reproducer does the same. Standard input is not read unless
# --input names it. Bad options stop it before any run, with no files left;
# SIGINT kills the runs in flight and removes its files.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/outprog
export TMPDIR=$TMP/tmpdir
mkdir -p "$TMPDIR"

sweep() { # TAG ARGS...: runs gfp-sweep --json TAG.json ARGS; SWEEP_RC
	local tag=$1
	shift
	SWEEP_RC=0
	bounded 200 "$SWEEP" --timeout 60 --json "$TMP/$tag.json" "$@" </dev/null >"$TMP/$tag.out" \
		2>"$TMP/$tag.err" || SWEEP_RC=$?
}
findings() { # TAG: "outcome site" of each finding
	/usr/bin/python3 -c 'import json, sys
for g in json.load(open(sys.argv[1]))["findings"]:
    print(g["outcome"], g["site"])' "$TMP/$1.json"
}

for mode in binary status1; do
	sweep "$mode" -- "$PROG" $mode
	expect_eq "$mode: exit status (findings)" 1 "$SWEEP_RC"
	expect_eq "$mode: one silent finding" 1 "$(findings $mode | grep -c '^silent ')"
done
note "a loss behind a NUL byte, and behind a normal status of 1, is silent"

sweep clock -- "$PROG" clock
expect_eq "clock: exit status" 0 "$SWEEP_RC"
expect_contains "clock: the note" "$TMP/clock.err" \
	"note: two runs of .* without injection wrote different output"
note "output that changes by itself: no silent finding, and a note"

sweep child -- "$PROG" child
expect_eq "child: no finding (its child's failures are not the sweep's)" 0 "$SWEEP_RC"
sweep follow --follow -- "$PROG" child
repro=$(/usr/bin/python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["findings"]
print(g[0]["reproducer"] if g else "")' "$TMP/follow.json")
[[ $repro == *"gfp-run --policy"* && $repro != *--no-follow* ]] ||
	fail "--follow: reproducer without --no-follow expected: '$repro'"
sweep binary_repro -- "$PROG" binary
repro=$(/usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["findings"][0]["reproducer"])' "$TMP/binary_repro.json")
[[ $repro == *"gfp-run --no-follow --policy"* ]] || fail "reproducer without --no-follow: '$repro'"
repro=${repro/ gfp-run / $GFP_RUN }
eval "$repro" >"$TMP/repro.out" 2>/dev/null
expect_eq "the reproducer loses the payload again" "$(printf '\0hdr\n' | od -c)" "$(od -c <"$TMP/repro.out")"

# Standard input: not read (a pipe that stays open does not block it: a
# sweep that read it would never end, and the deadline would say 124) ...
exec 3< <(exec sleep 3600)
sleeper=$!
rc=0
bounded 200 "$SWEEP" --timeout 60 -- "$PROG" binary <&3 >/dev/null 2>&1 || rc=$?
kill "$sleeper" 2>/dev/null
exec 3<&-
expect_eq "an open pipe on stdin: exit status" 1 "$rc"
# ... unless --input names a file, which the reproducer names too.
printf 'x\n' >"$TMP/in.txt"
sweep input --input "$TMP/in.txt" -- "$PROG" binary
grep -q "< $TMP/in.txt\$" "$TMP/input.out" || fail "--input: no '< $TMP/in.txt' in the reproducers"

# Bad options: 2 at once, nothing left in TMPDIR.
for args in "-j foo" "--timeout 0.5" "--max-runs abc" "--policy fail.nth=3" \
	"--json $TMP/nodir/x.json" "--input $TMP/nosuch"; do
	# shellcheck disable=SC2086
	sweep bad $args -- "$PROG" binary
	expect_eq "gfp-sweep $args: exit status" 2 "$SWEEP_RC"
	expect_contains "gfp-sweep $args: one error" "$TMP/bad.err" "^gfp-sweep: error: "
done
[ -z "$(ls -A "$TMPDIR")" ] || fail "files left in TMPDIR: $(ls "$TMPDIR")"

# SIGINT: the hung runs of the example go too, and the sweep's files. (A
# copy of it, so that other tests' runs of the example are not counted.)
cp "$BUILD/tests/example/inventory" "$TMP/inventory-sigint"
"$SWEEP" --timeout 60 -j 2 -- "$TMP/inventory-sigint" "$SRC/tests/example/inventory.txt" \
	>/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do # until runs are in flight
	pgrep -f "^$TMP/inventory-sigint" >/dev/null && break
	sleep 0.1
done
kill -INT $pid
wait $pid
expect_eq "SIGINT: exit status" 130 "$?"
for _ in $(seq 100); do
	pgrep -f "$TMP/inventory-sigint" >/dev/null || break
	sleep 0.1
done
left=$(pgrep -f "$TMP/inventory-sigint" || true)
[ -z "$left" ] || { pkill -9 -f "$TMP/inventory-sigint"; fail "runs left after SIGINT: $left"; }
[ -z "$(ls -A "$TMPDIR")" ] || fail "files left in TMPDIR after SIGINT: $(ls "$TMPDIR")"
