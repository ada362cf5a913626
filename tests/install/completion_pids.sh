#!/bin/bash
# gfp-ctl's completion offers the pids of the processes that listen, with
# their names when bash lists them. See completion_pids.py.
#
# gfp-ctl --list also looks in /tmp/gfpshim-UID, where every process of this
# user that listens without XDG_RUNTIME_DIR has its socket: other tests, or
# anything else the machine runs, would be listed too. The test runs in a
# mount namespace of its own with an empty directory mounted there, so that
# the processes it lists are the ones it started.
source "$TESTS/lib.sh"
need_c_utf8
need_prog unshare
dir=/tmp/gfpshim-$(id -u)
mkdir -p -m 0700 "$dir" 2>/dev/null
unshare --mount --propagation private true 2>/dev/null ||
	skip "no mount namespace of our own (unshare --mount needs CAP_SYS_ADMIN)"
# shellcheck disable=SC2016
TMPDIR=$TMP unshare --mount --propagation private -- bash -c \
	'mount -t tmpfs -o mode=0700 gfpshim-test "$1" && shift && exec "$@"' _ "$dir" \
	/usr/bin/python3 -B "$TESTS/install/completion_pids.py" || fail "completions disagree (above)"
