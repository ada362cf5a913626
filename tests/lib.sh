# tests/lib.sh - sourced by the shell tests. Meson sets SHIM, GFP_RUN, BUILD,
# SRC and TESTS. Every helper fails loudly: a test must be able to fail.
set -u
# The reaper: runs a command as a child subreaper (PR_SET_CHILD_SUBREAPER),
# so that every process the command starts stays in its tree, even one that
# daemonizes (double fork, setsid) and is orphaned. When the command ends,
# when its deadline passes, or when the reaper is told to stop (SIGTERM,
# SIGINT, SIGHUP: meson's timeout sends SIGTERM to the test's process
# group), it kills the whole tree with SIGKILL, which a process blocking
# every signal cannot escape either, until none is left. Its exit status is
# the command's (128+N for a signal N), 124 when the deadline passed, 128+N
# when stopped by signal N.
# It runs outside the shim: LD_PRELOAD, if set, is passed with --preload
# and set again for CMD alone.
#   reaper [--deadline SECS] [--say-leftovers] [--preload VALUE] -- CMD...
read -r -d '' _GFP_REAPER_PY <<'PY' || true
import ctypes, os, signal, sys, time

args = sys.argv[1:]
deadline = None
say_left = False
while args and args[0] != "--":
    if args[0] == "--deadline":
        deadline = time.monotonic() + float(args[1])
        args = args[2:]
    elif args[0] == "--say-leftovers":
        say_left = True
        args = args[1:]
    elif args[0] == "--preload":
        os.environ["LD_PRELOAD"] = args[1]
        args = args[2:]
    else:
        sys.exit("reaper: unknown option " + args[0])
argv = args[1:]
if not argv:
    sys.exit("reaper: no command")
me = os.getpid()
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
stops = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, stops | {signal.SIGCHLD})
pid = os.fork()
if pid == 0:
    try:
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.execvp(argv[0], argv)
    except OSError as e:
        os.write(2, ("reaper: %s: %s\n" % (argv[0], e.strerror)).encode())
        os._exit(127 if isinstance(e, FileNotFoundError) else 126)


def descendants():
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d, "rb") as f:
                    st = f.read()
            except OSError:
                continue
            ppid = int(st[st.rindex(b")") + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [me]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


status = None


def reap():
    global status
    while True:
        try:
            w, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if w == 0:
            return
        if w == pid:
            status = st


def kill_tree():
    """SIGKILL to every descendant until none is left; how many there were."""
    seen = set()
    give_up = time.monotonic() + 30
    while True:
        reap()
        left = descendants()
        if not left:
            return len(seen)
        if time.monotonic() > give_up:
            os.write(2, ("reaper: processes that SIGKILL did not end: %s\n" % left).encode())
            return len(seen)
        for p in left:
            seen.add(p)
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.002)


def said(what):
    os.write(2, ("reaper: %s: %s\n" % (" ".join(argv)[:200], what)).encode())


while True:
    reap()
    if status is not None:
        break
    wait = None if deadline is None else deadline - time.monotonic()
    if wait is not None and wait <= 0:
        n = kill_tree()
        said("did not end in time: killed it and what it started (%d processes)" % n)
        sys.exit(124)
    info = signal.sigtimedwait(stops | {signal.SIGCHLD}, 3600 if wait is None else wait)
    if info is not None and info.si_signo != signal.SIGCHLD:
        n = kill_tree()
        said("stopped by signal %d: killed it and what it started (%d processes)"
             % (info.si_signo, n))
        sys.exit(128 + info.si_signo)
n = kill_tree()
if n and say_left:
    said("left %d processes behind: killed" % n)
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
PY

# A test runs under the reaper: whatever it started, it leaves nothing
# behind, whether it passed, failed or was stopped by meson's timeout.
if [ -z "${GFPTEST_REAPED:-}" ] && [ "${BASH_SOURCE[1]:-}" = "$0" ] && [ -f "$0" ] &&
	command -v python3 >/dev/null 2>&1; then
	export GFPTEST_REAPED=1
	_gfp_pre=()
	[ -z "${LD_PRELOAD+set}" ] || _gfp_pre=(--preload "$LD_PRELOAD")
	unset LD_PRELOAD
	exec python3 -c "$_GFP_REAPER_PY" --say-leftovers "${_gfp_pre[@]}" -- bash "$0" "$@"
fi
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

# bounded SECS CMD...: runs CMD for at most SECS seconds; then it and every
# process it started (orphans, other sessions, processes that block every
# signal) are killed with SIGKILL and the status is 124, as timeout(1)'s.
# What CMD leaves running when it ends is killed too. LD_PRELOAD=$SHIM
# bounded ... preloads the shim into CMD, not into the reaper.
bounded() {
	local secs=$1 pre=()
	shift
	[ -z "${LD_PRELOAD+set}" ] || pre=(--preload "$LD_PRELOAD")
	(
		unset LD_PRELOAD # not even a program between: it would run under the shim
		exec python3 -c "$_GFP_REAPER_PY" --deadline "$secs" "${pre[@]}" -- "$@"
	)
}

# lines_after FILE ERE: the lines of FILE after its first line matching ERE,
# up to the shim's next message ("gfpshim: warning|error|info:"): the frames
# of a report. Matched as grep -E does, in bash: awk -v would first read the
# escapes in ERE, each awk its own way.
lines_after() {
	local line on=0
	while IFS= read -r line || [ -n "$line" ]; do
		if [ "$on" = 1 ]; then
			[[ $line =~ ^gfpshim:\ (warning|error|info): ]] && break
			printf '%s\n' "$line"
		elif [[ $line =~ $2 ]]; then
			on=1
		fi
	done <"$1"
}
