#!/bin/bash
# abortprog's xmalloc aborts on a failed malloc, from make_name (three
# hits) and make_list (one): four abort runs, no finding, and the console
# --json and the HTML page list two abort sites, each once: the frame that called abort
# (xmalloc), the failed allocation it aborted for (its caller) and the runs.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
rc=0
"$SWEEP" --timeout 60 -j 2 --json "$TMP/a.json" --html "$TMP/a.html" -- "$BUILD/tests/sweep/abortprog" </dev/null >"$TMP/a.out" \
	2>"$TMP/a.err" || rc=$?
expect_eq "no finding: exit status" 0 "$rc"
expect_eq "the abort sites, from --json" \
	"xmalloc abortprog.c make_name abortprog.c 3; xmalloc abortprog.c make_list abortprog.c 1; runs 4" \
	"$(/usr/bin/python3 - "$TMP/a.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
out = []
for s in d["abort_sites"]:
    a, c = s["aborter"], s["allocation"]
    run = d["results"][s["first_run"]]
    assert run["outcome"] == "abort", run
    assert s["reproducer"].endswith(" -- " + d["program"][0]), s["reproducer"]
    out.append(f"{a['function']} {os.path.basename(a['file'])} {c['function'].split('.')[0]} "
               f"{os.path.basename(c['file'])} {s['count']}")
print("; ".join(out) + f"; runs {d['outcomes']['abort']}")
PY
)"
expect_eq "the abort sites, from the console" \
	"3 xmalloc make_name; 1 xmalloc make_list" \
	"$(sed -nE 's/^  \[A[0-9]+\] ([0-9]+) runs?: ([a-z_]+) abortprog\.c:[0-9]+ aborted for the allocation of ([a-z_]+)(\.[a-z0-9.]+)? abortprog\.c:[0-9]+$/\1 \2 \3/p' "$TMP/a.out" | paste -sd ';' | sed 's/;/; /g')"
expect_contains "the console's heading" "$TMP/a.out" "^abort sites: 2 \(4 runs\)"
expect_eq "the abort sites, from the HTML page" \
	"3 xmalloc make_name; 1 xmalloc make_list" \
	"$(sed -nE 's|^<div class="site abort"><p><strong>\[A[0-9]+\] ([0-9]+) runs?</strong>: ([a-z_]+) abortprog\.c:[0-9]+ aborted for the allocation of ([a-z_]+)(\.[a-z0-9.]+)? abortprog\.c:[0-9]+</p>$|\1 \2 \3|p' "$TMP/a.html" | paste -sd ';' | sed 's/;/; /g')"
note "two abort sites, once each, with their runs"
