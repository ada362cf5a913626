# tests/cgroup/cg.sh - sourced after lib.sh by the limit=cgroup tests. Each
# test makes real memory cgroups of its own below the cgroup it runs in
# (the v1 memory hierarchy, else a v2 one with the memory controller) and
# removes them at exit; where none can be made it skips, saying why.
CG_ALLOC=$BUILD/tests/cgroup/cg_alloc
[ -x "$CG_ALLOC" ] || fail "not built: $CG_ALLOC"
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY
CG_MADE=()
MiB=$((1 << 20))

# The directory of this shell's cgroup in hierarchy v1 memory (cg_base 1)
# or v2 (cg_base 2), from /proc/self/cgroup and /proc/self/mountinfo.
cg_base() {
	local v=$1 path
	if [ "$v" = 1 ]; then
		path=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
	else
		path=$(awk -F: '$1 == "0" && $2 == "" { print $3; exit }' /proc/self/cgroup)
	fi
	[ -n "$path" ] || return 1
	# The path through the environment: awk -v would read escapes in it.
	path=$path LC_ALL=C awk -v v="$v" '{
		path = ENVIRON["path"]
		for (i = 7; $i != "-"; i++) ;
		type = $(i + 1); super = "," $(i + 3) ","
		if (v == 1 && (type != "cgroup" || super !~ /,memory,/)) next
		if (v == 2 && type != "cgroup2") next
		root = $4; mnt = $5
		if (root == "/") root = ""
		if (substr(path, 1, length(root)) != root) next
		rest = substr(path, length(root) + 1)
		if (rest == "/") rest = ""
		print mnt rest; exit
	}' /proc/self/mountinfo
}

# cg_make NAME [LIMIT]: a new memory cgroup with that limit in bytes (none
# when not given): CG is its directory, CG_V its version (1 or 2).
cg_make() {
	local name=gfptest.$$.$1 limit=${2:-} base
	if base=$(cg_base 1) && [ -n "$base" ] && [ -w "$base" ] && mkdir "$base/$name" 2>/dev/null; then
		CG=$base/$name CG_V=1
		CG_MADE+=("$CG")
		[ -z "$limit" ] || echo "$limit" >"$CG/memory.limit_in_bytes" ||
			fail "cannot set $CG/memory.limit_in_bytes"
		return
	fi
	if base=$(cg_base 2) && [ -n "$base" ] && grep -qw memory "$base/cgroup.controllers" 2>/dev/null &&
		mkdir "$base/$name" 2>/dev/null; then
		CG=$base/$name CG_V=2
		CG_MADE+=("$CG")
		grep -qw memory "$base/cgroup.subtree_control" ||
			echo +memory >"$base/cgroup.subtree_control" 2>/dev/null ||
			skip "cgroup v2: cannot enable the memory controller below $base"
		[ -z "$limit" ] || echo "$limit" >"$CG/memory.max" || fail "cannot set $CG/memory.max"
		return
	fi
	skip "no writable memory cgroup: neither the v1 memory hierarchy nor a cgroup v2 with the memory controller lets this test make one (run as root on a host that delegates it)"
}

# The kernel's OOM kills in cgroup CG so far.
cg_kills() {
	local f
	if [ "$CG_V" = 1 ]; then f=$CG/memory.oom_control; else f=$CG/memory.events; fi
	awk '$1 == "oom_kill" { print $2; found = 1 } END { if (!found) print "none" }' "$f"
}

# cg_survived TAG STATUS KILLS: the program (its output and log in
# $TMP/TAG.out and $TMP/TAG.log) exited 0 and the kernel killed nothing in CG
# since it counted KILLS.
cg_survived() {
	[ "$2" = 0 ] || {
		cat "$TMP/$1.out" "$TMP/$1.log" >&2 2>/dev/null
		fail "$1: status $2 (137: the kernel's OOM killer came first)"
	}
	expect_eq "$1: the kernel's OOM kills in the cgroup" "$3" "$(cg_kills)"
}

# mib_between TAG BYTES LO HI: LO MiB <= BYTES <= HI MiB.
mib_between() {
	[ "$2" -ge $(($3 << 20)) ] && [ "$2" -le $(($4 << 20)) ] ||
		fail "$1: $(($2 >> 20)) MiB, expected $3 to $4 MiB"
}

# cg_run CMD...: runs CMD inside cgroup CG (only CMD: the test's shell stays
# where it is).
CG_ENTER='echo $$ >"$0/cgroup.procs" && exec "$@"'
cg_run() {
	sh -c "$CG_ENTER" "$CG" "$@"
}

# cg_bounded SECS CMD...: cg_run under bounded, whose reaper stays outside
# CG (its memory is not CG's).
cg_bounded() {
	local secs=$1
	shift
	bounded "$secs" sh -c "$CG_ENTER" "$CG" "$@"
}

# cg_child NAME [LIMIT]: a cgroup inside CG (none when not given); CG
# becomes it.
cg_child() {
	mkdir "$CG/$1" || fail "mkdir $CG/$1"
	CG=$CG/$1
	CG_MADE+=("$CG")
	[ -z "${2:-}" ] || echo "$2" >"$CG/$([ "$CG_V" = 1 ] && echo memory.limit_in_bytes || echo memory.max)" ||
		fail "cannot set the limit of $CG"
}

cg_cleanup() {
	local d p i
	for ((i = ${#CG_MADE[@]} - 1; i >= 0; i--)); do # children first
		d=${CG_MADE[i]}
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			rmdir "$d" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "$d" ] && echo "# could not remove $d" >&2
	done
}
trap 'cg_cleanup; rm -rf "$TMP"' EXIT

# json_get FILE EXPR: a value from the one JSON document in FILE (python).
json_get() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" ||
		{ echo "--- $1:" >&2; head -c 2000 "$1" >&2; fail "cannot read $2 from $1"; }
}
