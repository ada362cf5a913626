#!/bin/bash
# GNU parallel runs the three parts of a sweep of the bundled example with
# --shard auto (PARALLEL_SEQ, and GFP_SHARD_COUNT passed with --env): once
# on this machine, once through --sshlogin to an sshd this test starts on
# 127.0.0.1 (its own host key and authorized key in $TMP, a free high port,
# StrictHostKeyChecking=no; the system's ssh configuration untouched).
# gfp-report merge joins each set of parts, and the merged results and
# findings, parsed from its JSON, are the unsharded sweep's. Without root
# or sshd, the ssh half is skipped with the reason.
source "$TESTS/lib.sh"
need_prog parallel
SWEEP=$BUILD/tools/gfp-sweep
REPORT=$BUILD/tools/gfp-report
INV=$BUILD/tests/example/inventory
INPUT=$SRC/tests/example/inventory.txt
unset GFP_SHARD_INDEX PARALLEL_SEQ JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID CI_NODE_INDEX
export GFP_SHARD_COUNT=3

"$SWEEP" --timeout 5 -j 2 --json "$TMP/whole.json" -- "$INV" "$INPUT" >"$TMP/whole.out" 2>&1
[ $? = 1 ] || fail "the unsharded sweep: $(tail -3 "$TMP/whole.out")"

# compare TAG: the parts' headers name PARALLEL_SEQ 1 to 3, and their merge
# is the unsharded sweep.
compare() {
	# Each part ran to its end: exit 0, or 1 for its findings (the
	# joblog's Exitval column, under its header).
	/usr/bin/python3 - "$TMP/$1.joblog" <<'PY' || fail "$1: a part failed: $(cat "$TMP/$1.joblog"; tail -5 "$TMP/$1.log")"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
col = rows[0].index("Exitval")
sys.exit(len(rows) != 4 or any(r[col] not in ("0", "1") for r in rows[1:]))
PY
	"$REPORT" merge -o "$TMP/$1.json" "$TMP/$1".part*.json || fail "$1: merge failed"
	/usr/bin/python3 - "$TMP" "$1" <<'PY' || fail "$1: see above"
import json, re, sys
tmp, tag = sys.argv[1:3]
log = open(f"{tmp}/{tag}.log").read()
seqs = sorted(re.findall(r"shard (\d)/3 from PARALLEL_SEQ=(\d) GFP_SHARD_COUNT=3", log))
if seqs != [("1", "1"), ("2", "2"), ("3", "3")]:
    sys.exit(f"FAIL: {tag}: the parts' headers: {seqs}\n{log[-1500:]}")
whole, merged = (json.load(open(f"{tmp}/{n}.json")) for n in ("whole", tag))
def results(d):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in d["results"]]
def findings(d):
    return [(g["outcome"], g["key"], g["site"], g["crash_site"], g["count"], g["first_run"],
             g["policy"], [(p["site"], p["count"], p["first_run"]) for p in g["call_paths"]])
            for g in d["findings"]]
if results(merged) != results(whole):
    sys.exit(f"FAIL: {tag}: merged results differ from the unsharded sweep's")
if findings(merged) != findings(whole) or merged["outcomes"] != whole["outcomes"] or \
        merged["shard"] != "1/1":
    sys.exit(f"FAIL: {tag}: findings {findings(merged)}\n  unsharded {findings(whole)}")
print(f"# {tag}: {len(merged['results'])} runs, {len(merged['findings'])} findings, "
      "as unsharded")
PY
}

parallel --will-cite -j 3 --joblog "$TMP/local.joblog" \
	"$SWEEP" --timeout 5 -j 1 --shard auto --json "$TMP/local.part{}.json" -- "$INV" "$INPUT" \
	::: 1 2 3 >"$TMP/local.log" 2>&1
compare local

# The same through ssh, to an sshd of this test's own.
[ "$(id -u)" = 0 ] || skip "ssh half: not root, so no sshd of our own can start"
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || skip "ssh half: no sshd (Debian's openssh-server)"
need_prog ssh ssh-keygen
ssh-keygen -q -t ed25519 -N '' -f "$TMP/host_key" || fail "ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -f "$TMP/id" || fail "ssh-keygen"
cp "$TMP/id.pub" "$TMP/authorized_keys"
PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$TMP/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $TMP/host_key
PidFile $TMP/sshd.pid
AuthorizedKeysFile $TMP/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
EOF
# sshd's privilege separation directory, as its service would make it.
[ -d /run/sshd ] || mkdir -m 755 /run/sshd || skip "ssh half: cannot make /run/sshd"
"$SSHD" -f "$TMP/sshd_config" -D -e 2>"$TMP/sshd.log" &
SSHD_PID=$!
trap 'kill $SSHD_PID 2>/dev/null; wait $SSHD_PID 2>/dev/null; rm -rf "$TMP"' EXIT
SSH="ssh -i $TMP/id -p $PORT -o StrictHostKeyChecking=no -o UserKnownHostsFile=$TMP/known_hosts -o BatchMode=yes"
USER_AT=$(id -un)@127.0.0.1
for _ in $(seq 300); do
	$SSH "$USER_AT" true 2>/dev/null && break
	kill -0 $SSHD_PID 2>/dev/null || skip "ssh half: sshd could not start: $(tail -3 "$TMP/sshd.log")"
	sleep 0.1
done
$SSH "$USER_AT" true 2>"$TMP/ssh.err" || skip "ssh half: no login to our sshd: $(cat "$TMP/ssh.err")"

parallel --will-cite -j 3 --joblog "$TMP/ssh.joblog" --ssh "$SSH" --sshlogin "3/$USER_AT" \
	--env GFP_SHARD_COUNT \
	"$SWEEP" --timeout 5 -j 1 --shard auto --json "$TMP/ssh.part{}.json" -- "$INV" "$INPUT" \
	::: 1 2 3 >"$TMP/ssh.log" 2>&1
grep -q "Accepted publickey" "$TMP/sshd.log" || fail "the parts did not go through our sshd"
compare ssh
