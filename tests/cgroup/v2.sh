# tests/cgroup/v2.sh - sourced after lib.sh by the tests of limit=cgroup's
# cgroup v2 rules (memory.max, memory.high, memory.oom.group). This host's
# memory hierarchy is v1, or a v2 without the memory controller, or one a
# test may not write: these tests run against a directory of v2-format
# files instead, which GFP_TEST_CGROUP (an override for the tests only)
# makes the process's cgroup v2. Nothing charges it: memory.current says
# what the test wrote there (0: the process's own share is all there is).
MEMCG_PROG=$BUILD/tests/cgroup/memcg_prog
[ -x "$MEMCG_PROG" ] || fail "not built: $MEMCG_PROG"
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY GFP_TREE GFP_TEST_CGROUP
MiB=$((1 << 20))

# v2_dir NAME MAX HIGH [CURRENT [OOM_GROUP]]: a directory $TMP/NAME of
# v2-format files ("max" as the kernel writes it); CG is its path.
v2_dir() {
	CG=$TMP/$1
	mkdir -p "$CG" || fail "mkdir $CG"
	echo "$2" >"$CG/memory.max"
	echo "$3" >"$CG/memory.high"
	echo "${4:-0}" >"$CG/memory.current"
	echo "${5:-0}" >"$CG/memory.oom.group"
	printf 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n' >"$CG/memory.events"
}

# v2_run TAG POLICY CMD...: CMD under the shim with GFP_TEST_CGROUP=$CG, at
# most 60 s (then SIGKILL); its output, log and report in $TMP/TAG.out,
# .log and .json; its status in STATUS.
v2_run() {
	local tag=$1 pol=$2
	shift 2
	STATUS=0
	bounded 60 env LD_PRELOAD="$SHIM" GFP_TEST_CGROUP="$CG" GFP_POLICY="$pol" \
		GFP_LOG="$TMP/$tag.log" GFP_REPORT="$TMP/$tag.json" "$@" >"$TMP/$tag.out" 2>&1 || STATUS=$?
}

# show TAG: what a run left, on stderr (for a failure).
show() {
	local f
	for f in "$TMP/$1.out" "$TMP/$1.log"; do
		[ -f "$f" ] && { echo "--- $f:" >&2; head -c 3000 "$f" >&2; }
	done
	return 0
}

# py TAG EXPR: EXPR evaluated with o (the run's JSON output line), r (its
# report) and log (its log's text); prints the value, fails when EXPR
# raises.
py() {
	python3 - "$TMP/$1" "$2" <<'PY' || { show "$1"; fail "$1: cannot evaluate $2"; }
import json, os, sys
base, expr = sys.argv[1:3]
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None
def last_json(path):
    try:
        lines = [l for l in open(path) if l.startswith("{")]
    except OSError:
        return None
    return json.loads(lines[-1]) if lines else None
o, r = last_json(base + ".out"), load(base + ".json")
log = open(base + ".log").read() if os.path.exists(base + ".log") else ""
v = eval(expr)
print(str(v).lower() if isinstance(v, bool) else v)
PY
}

# check TAG EXPR WHAT: EXPR (as for py) must be true.
check() {
	[ "$(py "$1" "$2")" = true ] || { show "$1"; fail "$1: $3 ($2)"; }
}
