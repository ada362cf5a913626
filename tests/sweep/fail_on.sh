#!/bin/bash
# --fail-on CLASSES chooses the findings that make exit status 1; the
# others are still reported (console, JSON, JUnit). A class that is none of
# crash, hang and silent is a usage error naming them. --help lists every
# exit status, and 127 is checked here as listed.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/outprog # "binary": one silent finding, no crash, no hang

sweep() { # TAG ARGS...: gfp-sweep ARGS with --json/--junit TAG.*; RC
	local tag=$1
	shift
	RC=0
	"$SWEEP" --timeout 60 -j 2 --json "$TMP/$tag.json" --junit "$TMP/$tag.xml" "$@" </dev/null \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err" || RC=$?
}
reported() { # TAG: "outcomes of the findings in the JSON / failures in the JUnit / console findings"
	/usr/bin/python3 - "$TMP" "$1" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
tmp, tag = sys.argv[1:3]
found = [g["outcome"] for g in json.load(open(f"{tmp}/{tag}.json"))["findings"]]
fails = [f.get("type") for f in ET.parse(f"{tmp}/{tag}.xml").iter("failure")]
console = re.findall(r"^\[\d+\] (\w+)", open(f"{tmp}/{tag}.out").read(), re.M)
print(",".join(found), "/", ",".join(sorted(set(fails))), "/", ",".join(console))
PY
}

for case in "default::1" "all:crash,hang,silent:1" "silent:silent:1" "crash_hang:crash,hang:0" \
	"hang:hang:0" "order:hang,silent:1"; do
	IFS=: read -r tag classes want <<<"$case"
	if [ -n "$classes" ]; then
		sweep "$tag" --fail-on "$classes" -- "$PROG" binary
	else
		sweep "$tag" -- "$PROG" binary
	fi
	expect_eq "--fail-on '$classes': exit status" "$want" "$RC"
	expect_eq "--fail-on '$classes': the silent finding still reported" \
		"silent / silent / silent" "$(reported "$tag")"
done
note "exit status 1 only for --fail-on's classes; every finding reported"

for classes in "crash,bogus" "" "crash," "Crash" "abort"; do
	sweep bad --fail-on "$classes" -- "$PROG" binary
	expect_eq "--fail-on '$classes': exit status" 2 "$RC"
	grep -qx "gfp-sweep: error: --fail-on takes a comma list of crash, hang and silent, not '$classes'" \
		"$TMP/bad.err" || fail "--fail-on '$classes': $(cat "$TMP/bad.err")"
	[ ! -s "$TMP/bad.out" ] || fail "--fail-on '$classes': it ran: $(head -3 "$TMP/bad.out")"
done

# --help's exit statuses, parsed: every status gfp-sweep exits with.
"$SWEEP" --help >"$TMP/help.txt" || fail "--help failed"
/usr/bin/python3 - "$TMP/help.txt" <<'PY' || fail "see above"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^Exit status:\n((?:  .*\n)+)", text, re.M)  # continuation lines indented more
codes = {int(c): what for c, what in re.findall(r"^  (\d+) +(.*)$", m[1], re.M)} if m else {}
want = {0, 1, 2, 125, 126, 127, 129, 130, 143}
if set(codes) != want:
    sys.exit(f"FAIL: --help lists exit statuses {sorted(codes)}, expected {sorted(want)}:\n{text}")
for c, word in ((1, "fail-on"), (130, "SIGINT"), (143, "SIGTERM"), (127, "not found")):
    if word not in codes[c]:
        sys.exit(f"FAIL: exit status {c} is '{codes[c]}', without '{word}'")
PY
sweep missing -- "$TMP/no-such-program"
expect_eq "a program that is not there" 127 "$RC"
