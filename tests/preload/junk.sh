#!/bin/bash
# junk=SIZE fills the first SIZE bytes of every new block (its usable size,
# as jemalloc's opt.junk does) and of the bytes a realloc adds with 0xa5,
# never a calloc's; a realloc keeps what the program wrote. A 64 MiB block
# is filled in its first SIZE bytes only, so it stays as little resident as
# without the fill (jemalloc's junk:true, gfp-sweep's old fill, makes all of
# it resident). Without junk= nothing is filled.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/junkprog

run() { # TAG ENV...: junkprog's lines as "name=value ..." in $TMP/TAG
	local tag=$1
	shift
	env "$@" "$PROG" >"$TMP/$tag" 2>"$TMP/$tag.err" || fail "$tag: exit $?: $(head -3 "$TMP/$tag.err")"
}
val() { sed -n "s/^$2 //p" "$TMP/$1"; }
full() { # TAG NAME: "N of N"
	local v
	v=$(val "$1" "$2")
	[[ $v =~ ^([0-9]+)\ of\ ([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
		[ "${BASH_REMATCH[2]}" -gt 0 ] || fail "$1: $2: not every byte filled: '$v'"
}

run fill LD_PRELOAD="$SHIM" GFP_POLICY=junk=64K
for k in malloc posix_memalign aligned_alloc realloc_slack realloc_added big_prefix; do
	full fill "$k"
done
expect_eq "junk=64K: calloc's bytes" 0 "$(val fill calloc_nonzero)"
expect_eq "junk=64K: what the program wrote before a realloc" "24 of 24" "$(val fill realloc_kept)"
kib=$(val fill big_resident_kib)
[ "$kib" -lt 4096 ] || fail "junk=64K: a 64 MiB malloc made $kib KiB resident"
note "junk=64K: every new byte filled up to 64 KiB; a 64 MiB block made $kib KiB resident"

# A smaller bound: the first 16 bytes of malloc(100) only.
run small LD_PRELOAD="$SHIM" GFP_POLICY=junk=16
expect_eq "junk=16: malloc(100)" "16 of $(val small malloc | sed 's/.* of //')" "$(val small malloc)"

# Off: the shim fills nothing (a fresh 64 MiB block is the kernel's zeros).
run off LD_PRELOAD="$SHIM"
expect_eq "no junk=: the 64 MiB block's first bytes" "0 of 65536" "$(val off big_prefix)"

# What gfp-sweep's runs had before: jemalloc's own junk:true faults in all of it.
JE=$(ldconfig -p | sed -n 's/^\s*libjemalloc\.so\.2 .*x86-64.* => //p' | head -1)
if [ -n "$JE" ]; then
	run je LD_PRELOAD="$JE" MALLOC_CONF=junk:true
	note "jemalloc's junk:true: a 64 MiB malloc made $(val je big_resident_kib) KiB resident"
fi
