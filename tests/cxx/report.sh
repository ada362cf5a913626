# tests/cxx/report.sh - sourced after lib.sh by the cxx tests.

# The runs must see only the variables the test sets.
for v in $(compgen -e); do
	case $v in GFP_*) unset "$v" ;; esac
done
unset LD_PRELOAD
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"

# check_report REPORT PID EXPECT_FILE: the report was written by process PID
# and counts at least N calls for every "expect ENTRY N" line of EXPECT_FILE
# ("expect failures N" is the total of failed calls). Prints each count.
check_report() {
	[ -s "$1" ] || fail "no GFP_REPORT written at $1: was the shim loaded?"
	/usr/bin/python3 - "$@" <<'PY' || fail "GFP_REPORT $1 does not match the program's expectations"
import json, sys
report, pid, expect_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = json.load(open(report))
bad = 0
if r["pid"] != pid:
    print("report written by pid %d, not by the program (%d)" % (r["pid"], pid))
    bad += 1
n = 0
for line in open(expect_file):
    if not line.startswith("expect "):
        continue
    name, _, want = line[len("expect "):].rstrip("\n").rpartition(" ")
    if name == "failures":
        got = r["totals"]["failures"]
    else:
        got = r["entries"].get(name, {}).get("calls", 0)
    ok = got >= int(want)
    print("# %-34s %6d (at least %s)%s" % (name, got, want, "" if ok else "  <-- FAIL"))
    bad += not ok
    n += 1
if n == 0:
    print("no expectations found in", expect_file)
    bad += 1
sys.exit(1 if bad else 0)
PY
}
