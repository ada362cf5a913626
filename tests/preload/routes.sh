#!/bin/bash
# Which entry points meet the shim (preload/malloc.c's routes), as the
# constructor reports them once it has set them (confirm=1): with no policy
# at all the program's malloc and free are jemalloc's own; with
# fail.probability alone (and its stack filters) only frees are; a policy
# that only shapes failing requests (rules, default=, oom=) tries jemalloc
# first, and frees go to jemalloc; a budget takes each request's charge
# from the thread's allowance and then goes to jemalloc (watching its
# answer where jemalloc can fail a small request: ulimit -v or -d), and
# frees are jemalloc's; stats=totals
# alone counts in the routes, and stats=sites alone counts per call site
# there (the profiled routes); the watched and
# counted routes look at jemalloc's answer only to a request larger than
# 128 KiB, but at every answer where jemalloc can fail a small one (+all),
# and their frees are jemalloc's (counted: and counted); anything else,
# or ctl=1 (through which a policy may come later), keeps both on the shim.
# libc_semantics runs under each kind of route.
source "$TESTS/lib.sh"
HELLO=$BUILD/tests/preload/hello

route() {
	GFP_POLICY="confirm=1;$1" LD_PRELOAD="$SHIM" "$HELLO" >/dev/null 2>"$TMP/err" ||
		fail "$1: exit $?: $(head -3 "$TMP/err")"
	sed -n 's/^gfpshim: info: routes: //p' "$TMP/err"
}

# all ALLOCS FREE: the expected line, ALLOCS for the six allocating routes.
all() {
	echo "malloc=$1 calloc=$1 realloc=$1 posix_memalign=$1 memalign=$1 aligned_alloc=$1 free=$2"
}

expect_eq "no policy" "$(all jemalloc jemalloc)" "$(route "")"
expect_eq "messages only" "$(all jemalloc jemalloc)" "$(route "glibc_warn=0;site.depth=4")"
expect_eq "ctl=1" "$(all shim shim)" "$(route "ctl=1")"
expect_eq "fail.probability alone" "$(all shim jemalloc)" "$(route "fail.probability=0.000000001")"
expect_eq "fail.probability with a stack filter" "$(all shim jemalloc)" \
	"$(route "fail.probability=0.000000001;fail.sym=nothing_here")"
expect_eq "fail.probability with fail.times" "$(all shim shim)" \
	"$(route "fail.probability=0.000000001;fail.times=3")"
expect_eq "a budget" "$(all budget jemalloc)" "$(route "limit=1G")"
expect_eq "a budget with rules" "$(all budget jemalloc)" "$(route "limit=1G;default=NOFS")"
expect_eq "a budget with tokens" "$(all budget jemalloc)" "$(route "limit=1G;reserve.mode=tokens")"
expect_eq "a budget with statistics" "$(all shim shim)" "$(route "limit=1G;stats=totals")"
expect_eq "a budget with injection" "$(all shim shim)" "$(route "limit=1G;fail.probability=0.000000001")"
expect_eq "a budget with reserve.thread" "$(all shim shim)" "$(route "limit=1G;reserve.thread=64K")"
expect_eq "a budget under ulimit -v" "$(all budget+watched jemalloc)" "$(ulimit -v 8000000 && route "limit=1G")"
expect_eq "a budget under ulimit -d" "$(all budget+watched jemalloc)" "$(ulimit -d 8000000 && route "limit=1G")"
expect_eq "statistics" "$(all counted counted)" "$(route "stats=totals")"
expect_eq "statistics under ulimit -v" "$(all counted+all counted)" \
	"$(ulimit -v 8000000 && route "stats=totals")"
expect_eq "default= under ulimit -v" "$(all watched+all jemalloc)" \
	"$(ulimit -v 8000000 && route "default=NOFAIL")"
expect_eq "per-site statistics" "$(all profiled profiled)" "$(route "stats=sites")"
expect_eq "per-site statistics with call paths" "$(all shim shim)" "$(route "stats=paths")"
expect_eq "per-site statistics with a budget" "$(all shim shim)" "$(route "stats=sites;limit=1G")"
expect_eq "default=" "$(all watched jemalloc)" "$(route "default=NOFAIL")"
expect_eq "junk= (it fills every block the shim's path hands out)" "$(all shim shim)" "$(route "junk=64K")"
expect_eq "oom=" "$(all watched jemalloc)" "$(route "oom=fail")"
expect_eq "default= with statistics" "$(all shim shim)" "$(route "default=NOFAIL;stats=totals")"
expect_eq "reserve.thread (its pool is set up as the thread registers)" "$(all shim shim)" \
	"$(route "reserve.thread=1M;reserve.prefault=1")"
expect_eq "tokens with prefaulted pools (they serve first)" "$(all shim shim)" \
	"$(route "reserve.mode=tokens;reserve.prefault=1")"
out=$(GFP_RULES='lib:libnothing.so*=>NORETRY' route "")
expect_eq "GFP_RULES" "$(all watched jemalloc)" "$out"
out=$(GFP_RECORD=$TMP/rec route "")
expect_eq "GFP_RECORD alone" "$(all shim shim)" "$out"
out=$(GFP_REPORT=$TMP/rep.json route "")
expect_eq "GFP_REPORT alone (stats=totals)" "$(all counted counted)" "$out"

# The counted routes count what the shim's own would: the same totals per
# entry point for a program that calls every one (walk_entries), ctl=1
# keeping the shim's routes.
# walk POLICY ROUTES ROUNDS: walk_entries' report under POLICY with its own
# routes, named ROUTES, and with the shim's (ctl=1), in $TMP/ROUTES.json and
# $TMP/shim.json.
walk() {
	local routes extra
	for routes in "$2" shim; do
		extra=
		[ "$routes" = shim ] && extra=";ctl=1"
		GFP_POLICY="$1$extra" GFP_REPORT="$TMP/$routes.json" LD_PRELOAD="$SHIM" \
			"$BUILD/tests/preload/walk_entries" "$3" >/dev/null 2>"$TMP/err" ||
			fail "walk_entries under $routes routes: $(head -3 "$TMP/err")"
	done
}
walk stats=totals counted 1
/usr/bin/python3 - "$TMP/counted.json" "$TMP/shim.json" <<'PY' || fail "the counted routes count otherwise"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
bad = [k for k in set(a["entries"]) | set(b["entries"]) if a["entries"].get(k) != b["entries"].get(k)]
for k in sorted(bad):
    print(f"{k}: counted {a['entries'].get(k)}, shim {b['entries'].get(k)}")
calls = a["totals"]["calls"]
if calls < 30:
    print(f"only {calls} calls counted")
    bad.append("calls")
sys.exit(1 if bad else 0)
PY
note "counted and shim routes give the same totals for every entry point"

# The profiled routes count what the shim's own would: the same totals per
# entry point and the same rows per call site (walk_entries calls each entry
# point from its own line, three rounds, so that sites come back after
# others, and some with sizes the routes leave to profile.c).
walk stats=sites profiled 3
/usr/bin/python3 - "$TMP/profiled.json" "$TMP/shim.json" <<'PY' || fail "the profiled routes count otherwise"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
bad = [k for k in set(a["entries"]) | set(b["entries"]) if a["entries"].get(k) != b["entries"].get(k)]
for k in sorted(bad):
    print(f"{k}: profiled {a['entries'].get(k)}, shim {b['entries'].get(k)}")
def rows(r):
    return sorted((x["module"], x["offset"], x["calls"], x["bytes"], x["live_calls"],
                   x["live_bytes"], x["failures"]) for x in r["allocinfo"]
                  if x["module"] == "walk_entries")
ra, rb = rows(a), rows(b)
if ra != rb or len(ra) < 8:
    print(f"allocinfo rows differ or too few:\nprofiled {ra}\nshim     {rb}")
    bad.append("allocinfo")
sys.exit(1 if bad else 0)
PY
note "profiled and shim routes give the same totals and per-site rows"

for policy in "" "fail.probability=0.000000001" "default=KERNEL" "stats=totals" "stats=sites" "ctl=1" \
	"limit=1G"; do
	GFP_POLICY=$policy LD_PRELOAD="$SHIM" MALLOC_PERTURB_=0 "$BUILD/tests/preload/libc_semantics" \
		shim >"$TMP/out" 2>&1 || fail "libc_semantics under '$policy': $(tail -5 "$TMP/out")"
done
(
	ulimit -v 8000000
	GFP_POLICY="limit=1G" LD_PRELOAD="$SHIM" MALLOC_PERTURB_=0 "$BUILD/tests/preload/libc_semantics" \
		shim >"$TMP/out" 2>&1
) || fail "libc_semantics under a watched budget route: $(tail -5 "$TMP/out")"
note "libc semantics hold on every kind of route"
