#!/bin/bash
# A failure report names its frames from the program's symbol table when
# the address space is full (RLIMIT_AS) and other threads map every page
# that comes free: the shim maps the table inside address space it keeps
# for that, which the other threads never see free.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
NAMES=$BUILD/tests/slowpath/sp_names
[ -x "$NAMES" ] || fail "not built: $NAMES"

# names TAG THIEVES [ENV...]: one run of $PROG (sp_names, or a link to it
# whose name the frames carry) under default=NORETRY, every failure reported.
PROG=$NAMES
names() {
	local tag=$1 thieves=$2 module
	module=$(basename "$PROG")
	shift 2
	rm -f "$TMP/$tag.log"
	GFP_POLICY="default=NORETRY;warn.burst=100" GFP_LOG=$TMP/$tag.log bounded 120 \
		env "$@" LD_PRELOAD="$SHIM" "$PROG" "$thieves" >"$TMP/$tag.out" 2>"$TMP/$tag.err" ||
		fail "$tag: exit $?: $(tail -3 "$TMP/$tag.err")"
	grep -q "^first=null result=null errno=12 " "$TMP/$tag.out" || {
		cat "$TMP/$tag.out" "$TMP/$tag.err" >&2
		fail "$tag: the requests did not both fail with ENOMEM"
	}
	touch "$TMP/$tag.log"
	# its frame: " sp_named_request+0xOFF (MODULE+0xOFF)"
	grep -F " sp_named_request+0x" "$TMP/$tag.log" | grep -Fq " ($module+0x" || {
		head -c 3000 "$TMP/$tag.log" >&2
		fail "$tag: the report does not name sp_named_request ($(cat "$TMP/$tag.out"))"
	}
}

names alone 0
note "with the address space full, the failure report names the program's function"
for i in 1 2 3 4 5; do
	names "thieves$i" 2
done
note "and so it does while two threads take every page that comes free (5 runs)"
names utf8 2 LC_ALL=C.UTF-8
note "in a UTF-8 locale too"
ln -s "$NAMES" "$TMP/sp-namés"
PROG=$TMP/sp-namés
names link 2 LC_ALL=C.UTF-8
note "and run through a symbolic link with a UTF-8 name"
