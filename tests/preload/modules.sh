#!/bin/bash
# Records and reports name each frame's module once with its full path and
# GNU build-id, so that a tool finds the file (or its debug information)
# from anywhere: checked against the files themselves (readelf -n) for
# injection records from four threads (a detached one only frees), for a
# stats=sites GFP_REPORT of sqlite3 (libsqlite3 among its callers), and for
# a program run through a symlink whose name holds an escape and UTF-8: its
# path is the real file, and every line stays valid JSON. The threads'
# records name their modules even when one thread is slow to add the
# program to the table of modules (its readlink of /proc/self/exe delayed
# by strace) while the others record, and a fork's child whose first record
# comes while a thread of its parent, which the child does not have, was
# filling the table still names its modules (it takes the fill over rather
# than wait for that thread).
source "$TESTS/lib.sh"
need_prog readelf
need_prog sqlite3
need_prog strace
PROG=$BUILD/tests/slowpath/sp_report
[ -x "$PROG" ] || fail "$PROG is not built"
link=$TMP/$'l\xc3\xafnk\e"x'
ln -s "$PROG" "$link"

GFP_RECORD=$TMP/threads.rec GFP_POLICY='fail.probability=0.2;fail.seed=7' \
	LD_PRELOAD="$SHIM" "$PROG" peak 4 >"$TMP/threads.out" 2>&1 ||
	fail "peak 4 under fail.probability: $(tail -3 "$TMP/threads.out")"
strace -qq -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace not allowed)"
GFP_RECORD=$TMP/slow.rec GFP_POLICY='fail.probability=0.2;fail.seed=7' \
	strace -f -qq -o /dev/null -e trace=readlink -e inject=readlink:delay_exit=300000 \
	-E LD_PRELOAD="$SHIM" "$PROG" peak 4 >"$TMP/slow.out" 2>&1 ||
	fail "peak 4 with a slow readlink: $(tail -3 "$TMP/slow.out")"
# The child forks 300 ms into its parent's fill, held up for 3 s: a child
# that waited for the parent's filler would spin, then record no modules.
GFP_RECORD=$TMP/fork.rec GFP_POLICY='fail.sym=inject_here;fail.probability=1' \
	bounded 120 strace -f -qq -o /dev/null -e trace=readlink \
	-e inject=readlink:delay_exit=3000000 -E LD_PRELOAD="$SHIM" \
	"$BUILD/tests/preload/fork_modules" >"$TMP/fork.out" 2>&1 ||
	fail "fork_modules with a slow readlink: $(tail -3 "$TMP/fork.out")"
GFP_RECORD=$TMP/link.rec GFP_POLICY='fail.nth=3' LD_PRELOAD="$SHIM" "$link" peak 1 \
	>/dev/null 2>&1
GFP_REPORT=$TMP/sq.json GFP_POLICY='stats=sites' LD_PRELOAD="$SHIM" \
	sqlite3 :memory: 'create table t(x); insert into t values(1); select * from t;' \
	>"$TMP/sq.out" 2>&1 || fail "sqlite3 under stats=sites: $(cat "$TMP/sq.out")"

/usr/bin/python3 - "$TMP" "$PROG" <<'PY' || fail "see above"
import json, os, re, subprocess, sys
tmp, prog = sys.argv[1], os.path.realpath(sys.argv[2])
bad = []
ids = {}

def build_id(path):
    if path not in ids:
        out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
        m = re.search(r"Build ID: ([0-9a-f]+)", out)
        ids[path] = m.group(1) if m else None
    return ids[path]

def check_modules(what, named, modules):
    """Every module frames name is listed once, with its real path and build-id."""
    by_name = {}
    for m in modules:
        if m["name"] in by_name:
            bad.append(f"{what}: {m['name']} listed twice")
        by_name[m["name"]] = m
    for name in named:
        if name == "?":
            continue
        m = by_name.get(name)
        if not m:
            bad.append(f"{what}: frames name {name!r}, the modules do not")
            continue
        path = m.get("path")
        if not path or not os.path.isabs(path) or not os.path.exists(path):
            bad.append(f"{what}: {name}: path {path!r} is not an existing file")
            continue
        if m.get("build_id") != build_id(path):
            bad.append(f"{what}: {name}: build_id {m.get('build_id')} != {build_id(path)} (readelf -n {path})")
    return by_name

def records(path):
    out = []
    for line in open(path, "rb").read().split(b"\n"):
        if line:
            out.append(json.loads(line.decode("utf-8")))
    return out

for run in ("threads", "slow"):
    recs = [r for r in records(f"{tmp}/{run}.rec") if r["event"] == "injection"]
    tids = {r["tid"] for r in recs}
    if len(recs) < 4 or len(tids) < 2:
        bad.append(f"{run}: {len(recs)} injection records from {len(tids)} threads")
    for r in recs:
        by = check_modules(f"{run} record {r['seq']}", [f["module"] for f in r["frames"]],
                           r["modules"])
        if by.get("sp_report", {}).get("path") != prog:
            bad.append(f"{run}: the program's path {by.get('sp_report')} is not {prog}")

recs = [r for r in records(f"{tmp}/fork.rec") if r["event"] == "injection"]
fork_prog = os.path.realpath(os.path.join(os.path.dirname(prog), "..", "preload", "fork_modules"))
if len({r["pid"] for r in recs}) != 2:
    bad.append(f"fork: injection records from pids {sorted(r['pid'] for r in recs)}, not parent and child")
for r in recs:
    by = check_modules(f"fork pid {r['pid']}", [f["module"] for f in r["frames"]], r["modules"])
    if by.get("fork_modules", {}).get("path") != fork_prog:
        bad.append(f"fork pid {r['pid']}: the program's module is {by.get('fork_modules')}")

recs = [r for r in records(f"{tmp}/link.rec") if r["event"] == "injection"]
if len(recs) != 1:
    bad.append(f"symlink: {len(recs)} injection records")
for r in recs:
    by = check_modules("symlink", [f["module"] for f in r["frames"]], r["modules"])
    name = os.path.basename(f"{tmp}/l\u00efnk\x1b\"x")
    if by.get(name, {}).get("path") != prog:
        bad.append(f"symlink: module {name!r} has path {by.get(name)}, not the real file {prog}")

rep = json.load(open(f"{tmp}/sq.json"))
named = {row["module"] for row in rep["allocinfo"]}
by = check_modules("sqlite3 report", named, rep["modules"])
if not any(n.startswith("libsqlite3.so") for n in by):
    bad.append(f"sqlite3 report: no libsqlite3 among {sorted(by)}")

if bad:
    print("FAIL: " + "\nFAIL: ".join(bad[:20]))
    sys.exit(1)
print(f"# modules checked against readelf -n: {len(ids)} files")
PY
