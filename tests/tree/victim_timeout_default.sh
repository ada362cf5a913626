#!/bin/bash
# oom.victim_timeout defaults to 2 s: the kernel's OOM reaper starts on a
# victim 2 s after the kill (oom_reaper's OOM_REAPER_DELAY), and a victim
# that has not given its memory back by then is one the reaper must deal
# with. As gfp-run --list-keys and a process's effective policy show it.
source "$TESTS/lib.sh"
"$GFP_RUN" --list-keys >"$TMP/keys" || fail "gfp-run --list-keys failed"
python3 - "$TMP/keys" <<'PY' || fail "--list-keys (above)"
import sys
rows = [l for l in open(sys.argv[1]) if l.startswith("oom.victim_timeout ")]
assert len(rows) == 1, rows
print("# " + rows[0].rstrip())
words = rows[0].split()
assert "2s" in words or "2000ms" in words, rows[0]
assert "reaper" in rows[0], rows[0]
PY
env GFP_POLICY='confirm=1' LD_PRELOAD="$SHIM" GFP_LOG="$TMP/log" /bin/true || fail "/bin/true under the shim"
grep -q " oom.victim_timeout=2000ms " "$TMP/log" || fail "the effective policy: $(cat "$TMP/log")"
