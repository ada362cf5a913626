# tests/lib.sh - sourced by the shell tests. Meson sets SHIM, GFP_RUN, BUILD,
# SRC and TESTS. Every helper fails loudly: a test must be able to fail.
set -u
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gfptest.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "# $*"; }

# need_prog NAME...: skip with a reason when a program is missing.
need_prog() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null 2>&1 || skip "$p is not installed"
	done
}

# need_c_utf8: skip unless the C.UTF-8 locale is there.
need_c_utf8() {
	locale -a 2>/dev/null | grep -qix 'c\.utf-\?8' || skip "no C.UTF-8 locale"
}

# git_repo DIR: a new git repository with one commit, its subject not ASCII.
git_repo() {
	need_prog git
	git init -q "$1" && git -C "$1" -c user.name=t -c user.email=t@t \
		commit -q --allow-empty -m $'caf\303\251 first' || fail "cannot make a git repository in $1"
}

# run_shim ENV... -- CMD...: runs CMD with the shim preloaded.
run_shim() { env LD_PRELOAD="$SHIM" "$@"; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# expect_contains WHAT FILE PATTERN (grep -E)
expect_contains() {
	grep -Eq -- "$3" "$2" || { echo "--- $2:" >&2; head -c 2000 "$2" >&2; fail "$1: no match for /$3/"; }
}
