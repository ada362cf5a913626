#!/bin/bash
# git creating a repository, committing files with fixed names and dates,
# and running `git log --stat` and `git fsck` gives the same stdout, stderr,
# status, commit hashes and object files under the idle shim.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/git

# No user or system configuration, no repository of the caller.
# shellcheck disable=SC2046 # one variable name per word
unset $(/usr/bin/git rev-parse --local-env-vars)
export HOME="$TMP/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export LC_ALL=C TZ=UTC GIT_PAGER=cat PAGER=cat
export GIT_AUTHOR_NAME="Ada Author" GIT_AUTHOR_EMAIL=ada@example.org
export GIT_COMMITTER_NAME="Cy Committer" GIT_COMMITTER_EMAIL=cy@example.org
mkdir -p "$HOME"

repo="$TMP/repo"
git=(/usr/bin/git -C "$repo" -c gc.auto=0 -c maintenance.auto=false -c core.pager=cat)

commit_at() { # DATE TAG MODE MESSAGE
	GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" run_mode "$2" "$3" "${git[@]}" commit -q -m "$4"
}

# session MODE: the whole scenario in $repo, every git command in MODE.
session() {
	local m=$1 i
	rm -rf "$repo"
	mkdir -p "$repo"
	run_mode git-init "$m" "${git[@]}" init -q -b main
	mkdir -p "$repo/src" "$repo/data"
	printf '#include <stdio.h>\nint main(void)\n{\n\tputs("hello");\n\treturn 0;\n}\n' \
		>"$repo/src/main.c"
	printf 'A test repository.\n' >"$repo/README"
	for i in $(seq 1 3000); do echo "line $i $((i * i % 1009))"; done >"$repo/data/numbers.txt"
	run_mode git-add1 "$m" "${git[@]}" add -A
	commit_at "2024-01-02T03:04:05+00:00" git-commit1 "$m" "Initial import"

	sed -i 's/hello/hello, world/' "$repo/src/main.c"
	for i in $(seq 1 300); do echo "extra $i"; done >>"$repo/data/numbers.txt"
	printf 'more\n' >>"$repo/README"
	run_mode git-add2 "$m" "${git[@]}" add -A
	commit_at "2024-01-03T10:00:00+00:00" git-commit2 "$m" "Greet the world"

	run_mode git-mv "$m" "${git[@]}" mv README README.txt
	run_mode git-rm "$m" "${git[@]}" rm -q data/numbers.txt
	commit_at "2024-01-04T12:30:00+00:00" git-commit3 "$m" "Rename README, drop data"

	run_mode git-log "$m" "${git[@]}" log --stat --format=fuller
	run_mode git-fsck "$m" "${git[@]}" fsck --full --strict
	run_mode git-objects "$m" "${git[@]}" cat-file --batch-all-objects --batch-check
	run_mode git-head "$m" "${git[@]}" rev-parse HEAD
}

session plain
mv "$repo" "$TMP/repo.plain"
session idle
for step in init add1 commit1 add2 commit2 mv rm commit3 log fsck objects head; do
	expect_status "git-$step" plain 0
	compare_runs "git-$step" plain idle
done

# Commit hashes fixed by the fixed names and dates.
expect_eq "HEAD commit" 9d46b54424e21e9f9ad1a396b12ba4156be83ebb "$(cat "$TMP/git-head.plain.out")"
expect_contains "git log --stat" "$TMP/git-log.plain.out" '^ data/numbers.txt +\| 3300 -+$'
expect_contains "git log --stat" "$TMP/git-log.plain.out" 'README => README.txt'
expect_eq "objects in the repository (3 commits, 7 trees, 6 blobs)" 16 "$(wc -l <"$TMP/git-objects.plain.out")"
# Every loose object file, byte for byte (zlib-compressed by that git).
(cd "$TMP/repo.plain/.git/objects" && find . -type f | sort) >"$TMP/objlist"
while read -r f; do
	same_file "object $f" "$TMP/repo.plain/.git/objects/$f" "$repo/.git/objects/$f"
done <"$TMP/objlist"

served_by_shim git-log malloc 100 "${git[@]}" log --stat --format=fuller
