#!/bin/bash
# The socket's directory must be the process's own: with ctl=1 a directory
# squatted by another uid, open to others, a symlink or not a directory at
# all stops the program before main with exit 125 and one line naming the
# directory, its owner and mode, and the fix (as a bad GFP_POLICY does);
# GFP_STRICT=0 makes it a warning and the program runs without a listener.
# An XDG_RUNTIME_DIR too long for a socket path is refused the same way,
# and no truncated directory is created.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

# start TAG [VAR=VALUE...]: ctl_prog seq 10 with ctl=1; START_RC, $TMP/TAG.err
start() {
	local tag=$1
	shift
	START_RC=0
	bounded 60 env "$@" LD_PRELOAD="$SHIM" GFP_POLICY=ctl=1 "$CTL_PROG" seq 10 \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err" || START_RC=$?
}
# refused TAG PATTERN: exit 125 before main, one error line matching PATTERN.
refused() {
	expect_eq "$1: exit status" 125 "$START_RC"
	[ ! -s "$TMP/$1.out" ] || fail "$1: main ran: $(cat "$TMP/$1.out")"
	expect_contains "$1" "$TMP/$1.err" "^gfpshim: error: ctl=1: $2"
	expect_eq "$1: lines on stderr" 1 "$(wc -l <"$TMP/$1.err")"
	note "$1: $(cat "$TMP/$1.err")"
}
dir=$XDG_RUNTIME_DIR/gfpshim

start fine
expect_eq "a private directory: exit status" 0 "$START_RC"

if [ "$(id -u)" = 0 ]; then
	chown 65534:65534 "$dir" || fail "chown"
	start other_uid
	refused other_uid "the socket directory '$dir' is owned by uid 65534 .*not by uid 0.*remove it"
	rm -rf "$dir"
else
	note "not root: no directory of another uid"
fi

mkdir -m 0777 "$dir" || fail "mkdir"
chmod 0777 "$dir"
start open
refused open "the socket directory '$dir' .*mode 0777"
# Refused past the start-up, the process ends as the program's own _exit
# ends it: its report is written, and a member of a tree leaves it (the
# last member takes the tree's file along).
START_RC=0
bounded 60 env LD_PRELOAD="$SHIM" GFP_POLICY='ctl=1;limit=64M;limit.scope=tree' \
	GFP_TREE="$TMP/tree" GFP_REPORT="$TMP/open_tree.json" "$CTL_PROG" seq 10 \
	>"$TMP/open_tree.out" 2>"$TMP/open_tree.err" || START_RC=$?
refused open_tree "the socket directory '$dir' .*mode 0777"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/open_tree.json" ||
	fail "refused: no report, or not JSON: $TMP/open_tree.json"
[ ! -e "$TMP/tree" ] || fail "refused: the tree's file is still there (the member never left)"
start lax GFP_STRICT=0
expect_eq "GFP_STRICT=0: exit status" 0 "$START_RC"
expect_contains "GFP_STRICT=0" "$TMP/lax.err" "^gfpshim: warning: ctl=1: the socket directory '$dir'.*not listening"
rmdir "$dir"

mkdir -m 0700 "$TMP/elsewhere"
ln -s "$TMP/elsewhere" "$dir"
start symlink
refused symlink "the socket directory '$dir' is a symbolic link"
rm "$dir"
touch "$dir"
start file
refused file "the socket directory '$dir' is not a directory"
rm "$dir"

# An XDG_RUNTIME_DIR whose socket path would not fit in sun_path (108).
long=$TMP/$(printf 'x%.0s' {1..60})/$(printf 'y%.0s' {1..60})
mkdir -p "$long" && chmod 0700 "$long"
start long XDG_RUNTIME_DIR="$long"
refused long "XDG_RUNTIME_DIR '$long' is too long for a socket path"
expect_contains "long: the fix" "$TMP/long.err" "unset XDG_RUNTIME_DIR|shorter"
expect_eq "long: nothing created in XDG_RUNTIME_DIR" "" "$(ls -A "$long")"
expect_eq "long: nothing created beside it" "$(printf 'y%.0s' {1..60})" "$(ls -A "${long%/*}")"
