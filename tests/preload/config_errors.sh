#!/bin/bash
# Bad configuration exits 125 before main with one line naming the variable,
# the key and the fix; GFP_STRICT=0 turns it into a warning; good input works.
source "$TESTS/lib.sh"
HELLO=$BUILD/tests/preload/hello

# try EXPECTED_STATUS PATTERN VAR=VALUE...
try() {
	local want=$1 pat=$2
	shift 2
	bounded 60 env "$@" LD_PRELOAD="$SHIM" "$HELLO" >"$TMP/out" 2>"$TMP/err"
	local st=$?
	[ "$st" = "$want" ] || { cat "$TMP/err" >&2; fail "$*: status $st, expected $want"; }
	[ -z "$pat" ] || expect_contains "$*" "$TMP/err" "$pat"
	if [ "$want" = 125 ]; then
		[ ! -s "$TMP/out" ] || fail "$*: main ran despite the error"
		[ "$(wc -l <"$TMP/err")" = 1 ] || fail "$*: expected one line, got: $(cat "$TMP/err")"
	fi
}

try 125 "^gfpshim: error: GFP_POLICY: unknown key 'stat' \(did you mean 'stats'\?\)$" GFP_POLICY='stat=totals'
try 125 "bad value 'total' for key 'stats' \(expected one of the listed choices: off\|totals\|sites\|paths\)" GFP_POLICY='stats=total'
try 125 "not a key=value pair" GFP_POLICY='confirm'
try 125 "^gfpshim: error: GFP_POLICY_FILE: cannot read '/nonexistent/p': No such file" GFP_POLICY_FILE=/nonexistent/p
try 125 "^gfpshim: error: GFP_POLICY_FILE: '$TMP' is not a regular file \(a directory\)" GFP_POLICY_FILE="$TMP"
# A FIFO, a device or a pipe on stdin: opening or reading one could block
# before main or eat the program's input. Regular files only.
mkfifo "$TMP/fifo"
try 125 "^gfpshim: error: GFP_POLICY_FILE: '$TMP/fifo' is not a regular file \(a FIFO\)" GFP_POLICY_FILE="$TMP/fifo"
try 125 "^gfpshim: error: GFP_POLICY_FILE: '/dev/null' is not a regular file \(a character device\)" GFP_POLICY_FILE=/dev/null
out=$(printf 'stats=totals\nline two\n' | bounded 60 env GFP_POLICY_FILE=/dev/stdin LD_PRELOAD="$SHIM" cat 2>"$TMP/err")
st=$?
expect_eq "GFP_POLICY_FILE=/dev/stdin (a pipe): status" 125 "$st"
expect_eq "GFP_POLICY_FILE=/dev/stdin: main did not run" "" "$out"
expect_contains "GFP_POLICY_FILE=/dev/stdin" "$TMP/err" "^gfpshim: error: GFP_POLICY_FILE: '/dev/stdin' is not a regular file \(a FIFO\)"
printf 'stats=totals\n\0limit=1G\n' >"$TMP/nul"
try 125 "^gfpshim: error: GFP_POLICY_FILE $TMP/nul: a NUL byte at offset 13" GFP_POLICY_FILE="$TMP/nul"
try 125 "^gfpshim: error: GFP_POLICY: fail.min is above fail.max" GFP_POLICY='fail.probability=1;fail.min=1K;fail.max=10'
try 125 "^gfpshim: error: GFP_POLICY: min_free may be at most half of limit" GFP_POLICY='limit=8M;min_free=6M'
try 125 "GFP_LOG: bad value 'fd:x'" GFP_LOG=fd:x
try 125 "GFP_LOG: descriptor 57 is not open" GFP_LOG=fd:57
try 125 "GFP_LOG: cannot open '/nonexistent/dir/log'" GFP_LOG=/nonexistent/dir/log
try 125 "GFP_STRICT: expected 0" GFP_STRICT=yes
# GFP_REPORT is checked before main as GFP_LOG and GFP_RECORD are.
try 125 "^gfpshim: error: GFP_REPORT: cannot create a file in '/nonexistent/dir': No such file or directory" GFP_REPORT=/nonexistent/dir/r.json
try 125 "^gfpshim: error: GFP_REPORT: '/' is a directory" GFP_REPORT=/
try 125 "^gfpshim: error: GFP_REPORT: '$TMP' is a directory" GFP_REPORT="$TMP"
try 125 "^gfpshim: error: GFP_REPORT: '$TMP/fifo' is not a regular file \(a FIFO\)" GFP_REPORT="$TMP/fifo"
try 125 "^gfpshim: error: GFP_REPORT: path is longer than [0-9]+ bytes" GFP_REPORT="$TMP/$(printf 'x%.0s' {1..1100})"
try 125 "^gfpshim: error: GFP_RECORD: path is longer than [0-9]+ bytes" GFP_RECORD="$TMP/$(printf 'x%.0s' {1..1100})"
try 125 "^gfpshim: error: GFP_REPORT: descriptor 57 is not open" GFP_REPORT=fd:57
# A control byte shows as \xNN, not raw on the terminal.
try 125 "bad value 'totals\\\\x0b' for key 'stats'" GFP_POLICY=$'stats=totals\v'
try 125 "unknown key 'st\\\\x1bats'" GFP_POLICY=$'st\033ats=totals'
# The same in every message that quotes what the user wrote, whatever the
# locale: ESC and newline as \xNN, C1 controls and bytes that are not UTF-8
# too; well-formed UTF-8 (a path may hold it) as it is.
CAFE=caf$'\xc3\xa9'
for lang in C C.UTF-8; do
	try 125 "GFP_RULES: .*\(at '\\\\x1b\[31m => NO" LC_ALL=$lang GFP_RULES=$'size>\033[31m => NORETRY'
	try 125 "GFP_LOG: cannot open '/nonexistent/\\\\x1b\[31mred\\\\x0alog': No such file" \
		LC_ALL=$lang GFP_LOG=$'/nonexistent/\033[31mred\nlog'
	try 125 "GFP_LOG: bad value 'fd:1\\\\x0a2'" LC_ALL=$lang GFP_LOG=$'fd:1\n2'
	try 125 "GFP_RECORD: cannot open '/nonexistent/\\\\x1b\]0;t\\\\x07'" LC_ALL=$lang GFP_RECORD=$'/nonexistent/\033]0;t\a'
	try 125 "GFP_REPORT: cannot create a file in '/nonexistent/\\\\x0d\\\\x7f': No such" LC_ALL=$lang GFP_REPORT=$'/nonexistent/\r\177/r'
	try 125 "GFP_POLICY_FILE: cannot read '/nonexistent/$CAFE/\\\\xc2\\\\x9b\\\\xff': No such" \
		LC_ALL=$lang GFP_POLICY_FILE=/nonexistent/$CAFE/$'\xc2\x9b\xff'
	try 125 "unknown key '$CAFE\\\\xe9'" LC_ALL=$lang GFP_POLICY=$CAFE$'\xe9=1'
done

# GFP_STRICT=0: a warning, the key is ignored, the program runs.
try 0 "^gfpshim: warning: GFP_POLICY: unknown key 'stat'.*\[ignored: GFP_STRICT=0\]$" GFP_STRICT=0 GFP_POLICY='stat=totals'
expect_eq "strict=0 output" main "$(cat "$TMP/out")"
# A contradiction: the key the warning names is ignored, as it says.
try 0 "^gfpshim: warning: GFP_POLICY: limit below 64K .*\[limit ignored: GFP_STRICT=0\]$" \
	GFP_STRICT=0 GFP_POLICY='limit=1K;confirm=1'
expect_contains "strict=0: limit back to its default" "$TMP/err" "policy: .* limit=0 "

# A policy file with comments; GFP_POLICY wins over it.
printf '# comment\nconfirm=1   # trailing comment\n\nstats=off\n' >"$TMP/policy"
try 0 "^gfpshim: info: gfpshim [0-9.]+ policy: stats=off confirm=1" GFP_POLICY_FILE="$TMP/policy"
try 0 "" GFP_POLICY_FILE="$TMP/policy" GFP_POLICY='confirm=0'
[ ! -s "$TMP/err" ] || fail "GFP_POLICY did not win over the file: $(cat "$TMP/err")"
printf 'confirm=1\nstats=sometimes\n' >"$TMP/bad"
try 125 "GFP_POLICY_FILE $TMP/bad:2: bad value 'sometimes' for key 'stats'" GFP_POLICY_FILE="$TMP/bad"

# GFP_LOG: a path gets the messages (appended), fd:N too.
env GFP_LOG="$TMP/log" GFP_POLICY='confirm=1' LD_PRELOAD="$SHIM" "$HELLO" >/dev/null 2>"$TMP/err" || fail "GFP_LOG=path run failed"
env GFP_LOG="$TMP/log" GFP_POLICY='confirm=1' LD_PRELOAD="$SHIM" "$HELLO" >/dev/null 2>>"$TMP/err" || fail "GFP_LOG=path run failed"
[ ! -s "$TMP/err" ] || fail "messages went to stderr despite GFP_LOG: $(cat "$TMP/err")"
expect_eq "log lines appended (policy and routes, twice)" 4 "$(grep -c 'gfpshim: info:' "$TMP/log")"
env GFP_LOG=fd:7 GFP_POLICY='confirm=1' LD_PRELOAD="$SHIM" "$HELLO" 7>"$TMP/fd7" >/dev/null 2>&1 || fail "fd:7 run failed"
expect_contains "GFP_LOG=fd:7" "$TMP/fd7" "gfpshim: info: gfpshim"

# An idle shim prints nothing at all.
try 0 "" GFP_POLICY=''
[ ! -s "$TMP/err" ] || fail "idle shim printed: $(cat "$TMP/err")"
