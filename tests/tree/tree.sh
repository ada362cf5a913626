# tests/tree/tree.sh - sourced by the tree tests after tests/lib.sh.
PROG="$BUILD/tests/tree/tree_prog"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_TREE GFP_LOG GFP_POLICY

# field FILE EVENT KEY [N]: KEY of the Nth (default 1st) JSON line of FILE
# whose "event" is EVENT.
field() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
path, event, key = sys.argv[1:4]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 1
seen = 0
for line in open(path):
    line = line.strip()
    if not line.startswith("{"):
        continue
    obj = json.loads(line)
    if obj.get("event") == event:
        seen += 1
        if seen == n:
            v = obj[key]
            print(str(v).lower() if isinstance(v, bool) else v)
            sys.exit(0)
sys.exit("no %s line %d with %s in %s" % (event, n, key, path))
PY
}

# wait_line FILE EVENT [SECONDS]: until FILE has a JSON line of EVENT.
wait_line() {
	local i
	for ((i = 0; i < ${3:-60} * 20; i++)); do
		grep -q "\"event\":\"$2\"" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no $2 line in $1 within ${3:-60} s"
}

# wait_lines FILE EVENT N [SECONDS]: until FILE has N JSON lines of EVENT.
wait_lines() {
	local i
	for ((i = 0; i < ${4:-60} * 20; i++)); do
		[ "$(grep -c "\"event\":\"$2\"" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.05
	done
	fail "fewer than $3 $2 lines in $1 within ${4:-60} s"
}

# wait_dead PID [SECONDS]: until PID has ended (a zombie, or reaped): a
# process SIGKILL was sent to may still be exiting.
wait_dead() {
	local i line
	for ((i = 0; i < ${2:-60} * 20; i++)); do
		read -r line 2>/dev/null <"/proc/$1/stat" || return 0
		line=${line##*) }
		[ "${line%% *}" = Z ] && return 0
		sleep 0.05
	done
	fail "process $1 still there ${2:-60} s after it was killed"
}

MiB=$((1024 * 1024))
