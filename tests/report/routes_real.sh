#!/bin/bash
# The profiled routes (stats=sites alone: malloc and kin counted per call
# site in line) count what the shim's own routes count: on real programs the
# report's totals per entry point and its rows per call site are the same
# with ctl=0 (the profiled routes) and ctl=1 (which keeps the shim's routes;
# the two policies have the same length, so that a program copying its
# environment asks for the same sizes). sqlite3, perl, python3 (hash seeds
# fixed), c++filt (a C++ program) and gfp-allocbench's xthread (a producer
# thread mallocs, a consumer frees). No site ends with negative live bytes.
# python3 does not make the same calls in every run even so (a few of its
# sites count 5 to 30 calls more in one run in five, under either route),
# so it runs five times under each route, and one run of each must count
# alike: a route that counts wrong never matches.
source "$TESTS/lib.sh"
need_prog sqlite3 perl python3 c++filt
BENCH=$BUILD/tools/allocbench/gfp-allocbench

# same NAME CMD...: runs CMD under both routes ($RUNS times each, default
# once) and compares the reports: one run of each route must count alike.
same() {
	local name=$1 routes k
	shift
	for routes in 0 1; do
		for ((k = 1; k <= ${RUNS:-1}; k++)); do
			GFP_POLICY="stats=sites;ctl=$routes;confirm=1" \
				GFP_REPORT="$TMP/$name.$routes.$k.json" LD_PRELOAD="$SHIM" PERL_HASH_SEED=0 \
				PYTHONHASHSEED=0 "$@" >"$TMP/out.$routes" 2>"$TMP/err.$routes" ||
				fail "$name, ctl=$routes: exit $?: $(head -3 "$TMP/err.$routes")"
		done
	done
	expect_contains "$name: profiled routes" "$TMP/err.0" 'routes: malloc=profiled .*free=profiled'
	expect_contains "$name: shim routes" "$TMP/err.1" 'routes: malloc=shim .*free=shim'
	# (gfp-allocbench prints its time)
	[ "$(sed 's/seconds=[0-9.]*//' "$TMP/out.0")" = "$(sed 's/seconds=[0-9.]*//' "$TMP/out.1")" ] ||
		fail "$name: the output differs between the routes"
	/usr/bin/python3 - "$name" "$TMP" "${RUNS:-1}" <<'PY' || fail "$name: see above"
import json, sys
name, tmp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load(routes):
    return [json.load(open(f"{tmp}/{name}.{routes}.{k}.json")) for k in range(1, runs + 1)]
def rows(r):
    return sorted((x["module"], x["offset"], x["calls"], x["bytes"], x["live_calls"],
                   x["live_bytes"], x["failures"]) for x in r["allocinfo"])
def counted(r):
    return json.dumps(r["entries"], sort_keys=True), tuple(rows(r))
profiled, shim = load(0), load(1)
bad = []
for r in profiled + shim:
    neg = [x for x in rows(r) if x[4] < 0 or x[5] < 0]
    if neg:
        bad.append(f"negative live counts: {neg[:3]}")
    if sum(x[2] for x in rows(r)) < 20:
        bad.append(f"only {sum(x[2] for x in rows(r))} calls counted")
alike = set(map(counted, profiled)) & set(map(counted, shim))
if not alike:
    a, b = profiled[0], shim[0]
    if a["entries"] != b["entries"]:
        bad.append(f"entries: profiled {a['entries']}, shim {b['entries']}")
    ra, rb = rows(a), rows(b)
    diff = [(x, y) for x, y in zip(ra, rb) if x != y][:3]
    bad.append(f"no run of {runs} alike; {len(ra)} and {len(rb)} rows; first differences {diff}")
if bad:
    sys.exit(f"FAIL: {name}: " + "; ".join(bad))
ra = rows(profiled[0])
print(f"# {name}: {len(ra)} sites, {sum(x[2] for x in ra)} calls alike")
PY
}

same sqlite3 sqlite3 :memory: "create table t(a, b); with recursive c(x) as (select 1 union all
	select x + 1 from c where x < 20000) insert into t select x, hex(randomblob(20)) from c;
	select count(*), sum(length(b)) from t;"
same perl perl -e 'my %h; $h{$_} = [$_] for 1 .. 50000; print scalar(keys %h), "\n"'
RUNS=5 same python3 python3 -S -c 'import json; d = {str(i): [i] * 3 for i in range(20000)}; print(len(json.dumps(d)))'
for i in $(seq 1 2000); do
	echo "_ZNSt6vectorIiSaIiEE9push_backERKi _ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv _ZN3ns${#i}f${i}Ev"
done >"$TMP/mangled"
same c++filt bash -c 'exec c++filt <"$1"' - "$TMP/mangled"
same xthread "$BENCH" xthread 20000
