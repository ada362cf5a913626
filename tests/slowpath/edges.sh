#!/bin/bash
# The budget's edges (sp_edges): aligned requests are charged their
# alignment, so a loop of aligned_alloc(64K, 1) stays under limit=; HIGH and
# ATOMIC requests leave another thread's reservation alone, as KERNEL ones
# do; a shrinking realloc needs no room, even past the watermark; what a
# thread frees in a late key destructor (after the shim let it go) comes
# back to the budget; a signal handler that allocates while its thread holds
# the budget's locks does not deadlock; a waiter wakes on a shrinking
# realloc as on a free.
source "$TESTS/lib.sh"
EDGES=$BUILD/tests/slowpath/sp_edges
[ -x "$EDGES" ] || fail "not built: $EDGES"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY

# edge TAG POLICY ARGS...: runs sp_edges; $TMP/TAG.out, EDGE_RC.
edge() {
	local tag=$1 policy=$2
	shift 2
	EDGE_RC=0
	GFP_POLICY=$policy GFP_LOG=$TMP/$tag.log LD_PRELOAD=$SHIM bounded 60 "$EDGES" "$@" \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err" || EDGE_RC=$?
	[ "$EDGE_RC" = 0 ] || {
		head -c 2000 "$TMP/$tag.err" "$TMP/$tag.log" >&2
		fail "$tag: sp_edges $* under '$policy': status $EDGE_RC"
	}
}
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$TMP/$1.out"; }
# at_least WHAT GOT MIN / at_most WHAT GOT MAX
at_least() { [ -n "$2" ] && [ "$2" -ge "$3" ] || fail "$1: $2, expected at least $3"; }
at_most() { [ -n "$2" ] && [ "$2" -le "$3" ] || fail "$1: $2, expected at most $3"; }

for align in 65536 4096; do
	edge "aligned$align" 'limit=8M;oom=fail;wait=1ms;retries=2' aligned $align
	at_most "aligned_alloc($align, 1): usable bytes held" "$(field "aligned$align" usable)" $((8 << 20))
	at_least "aligned_alloc($align, 1): usable bytes held" "$(field "aligned$align" usable)" $((4 << 20))
done
note "aligned_alloc(64K or 4K, 1) in a loop stops under limit=8M"

for flags in KERNEL HIGH ATOMIC; do
	edge "reserve$flags" 'limit=8M' reserve $flags
	at_least "$flags fills beside a 4 MiB reservation, then its owner gets" \
		"$(field "reserve$flags" a)" 3800
	at_most "$flags beside a 4 MiB reservation gets" "$(field "reserve$flags" b)" 4096
done
note "KERNEL, HIGH and ATOMIC leave another thread's reservation alone"

edge shrink 'limit=8M' shrink
expect_eq "a shrinking realloc past the watermark" ok "$(field shrink shrink)"

edge keyexit 'limit=16M' keyexit
at_least "the budget after 3 threads freed 4 MiB each in a late key destructor (KiB)" \
	"$(field keyexit after)" $(($(field keyexit before) - 256))
note "late key destructors: $(cat "$TMP/keyexit.out")"

edge sigwait 'limit=8M;wait=5s;oom=wait;canary.retries=1' sigwait
expect_eq "signal handler runs while main waited" 100 "$(field sigwait handler)"
note "a handler allocating 100 times while main waits: $(cat "$TMP/sigwait.out")"

# wait=600s: a waiter the shrinking realloc did not wake outlasts edge's 60 s.
edge wake 'limit=8M;wait=600s;oom=wait;canary.retries=1' wake_realloc
note "the waiter returned $(field wake late_ms) ms after the shrinking realloc"
