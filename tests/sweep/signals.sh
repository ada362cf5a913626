#!/bin/bash
# Under the shim with GFP_RECORD (its fatal-signal handler installed), a
# program reads back exactly its own actions of SEGV, BUS, ABRT, FPE and
# ILL, set through sigaction, signal, sysv_signal, sigset and sigignore
# (handler, flags, mask as the kernel keeps them), and at delivery sees the
# same mask, SA_RESETHAND and SA_NODEFER behaviour, siginfo and a siglongjmp
# out: sigprog prints the same lines as without the shim. The records hold
# a "caught" record (with the fault's frames) per delivery and a
# "caught_left" when the handler returned or jumped out. python3's
# faulthandler, which installs its own handlers on an alternate stack,
# still prints its traceback and dies by SIGSEGV, the fault caught first.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/sweep/sigprog

"$PROG" >"$TMP/plain.out" || fail "sigprog without the shim: status $?"
run_shim GFP_RECORD="$TMP/sig.rec" "$PROG" >"$TMP/shim.out" || fail "sigprog under the shim: status $?"
diff "$TMP/plain.out" "$TMP/shim.out" >&2 || fail "sigprog saw its actions differently under the shim"
grep -q '^deliveries 4$' "$TMP/plain.out" || fail "sigprog: not 4 deliveries: $(tail -1 "$TMP/plain.out")"
run_shim "$PROG" >"$TMP/norec.out" || fail "sigprog under the shim without records: status $?"
diff -q "$TMP/plain.out" "$TMP/norec.out" >/dev/null || fail "sigprog differs under the shim without GFP_RECORD"
note "sigprog's $(wc -l <"$TMP/plain.out") lines are the same with and without the shim"

got=$(/usr/bin/python3 - "$TMP/sig.rec" <<'PY'
import json, sys
out = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["event"] == "caught":
        # a fault's first frame is where it hit; a raise's is inside libc
        top = r["frames"][0].get("symbol", "?").split("+")[0] if r["code"] > 0 else "raise"
        out.append(f"caught {r['signal']} {'fault' if r['code'] > 0 else 'sent'} {top}")
    else:
        out.append(f"{r['event']} {r.get('signal')} {r.get('how', '')}".strip())
print("; ".join(out))
PY
)
expect_eq "the records of the four deliveries" \
	"caught 11 sent raise; caught_left 11 return; caught 11 sent raise; caught_left 11 return; caught 11 fault main; caught_left 11 longjmp; caught 11 fault main; caught_left 11 longjmp" \
	"$got"

need_prog python3
code='import ctypes; ctypes.string_at(0)'
rc=0
python3 -X faulthandler -c "$code" 2>"$TMP/py.plain" || rc=$?
src=0
run_shim GFP_RECORD="$TMP/py.rec" python3 -X faulthandler -c "$code" 2>"$TMP/py.shim" || src=$?
expect_eq "python3 faulthandler: status" "$rc" "$src"
expect_eq "python3 faulthandler: status is SIGSEGV's" 139 "$src"
expect_eq "python3 faulthandler: its first line" "$(head -1 "$TMP/py.plain")" "$(head -1 "$TMP/py.shim")"
expect_contains "python3 faulthandler: its traceback" "$TMP/py.shim" '^  File "<string>", line 1'
# records_of FILE: the records, "caught SIG fault|sent" and "EVENT SIG".
records_of() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
out = []
for r in map(json.loads, open(sys.argv[1])):
    kind = "fault" if r.get("code", 0) > 0 else "sent"
    out.append(f"{r['event']} {r.get('signal')} {kind}" if r["event"] == "caught"
               else f"{r['event']} {r.get('signal')}")
print("; ".join(out))
PY
}
# faulthandler's handler runs on its own alternate stack, where the shim
# records only with room enough left (room_to_record): that stack's size
# follows the CPU's signal frame, so the room differs between machines. The
# legal records: none (no room), the fault caught (room for that), or the
# fault caught and then the crash of faulthandler's re-raise, which runs
# deeper on the same stack. Nothing else: no caught_left (the handler never
# returns), no crash without its caught, no second fault, no other signal.
records=$(records_of "$TMP/py.rec")
case "$records" in
"" | "caught 11 fault" | "caught 11 fault; crash 11") ;;
*) fail "python3 faulthandler: records '$records': expected none, 'caught 11 fault', or that and 'crash 11'" ;;
esac
note "python3 -X faulthandler: records '${records:-none}'"
# The same handler on stacks whose room is known: 1 MiB holds both
# records, 8 KiB (less than a record takes) neither; both die by SIGSEGV.
for size in 1048576 8192; do
	st=0
	run_shim GFP_RECORD="$TMP/alt$size.rec" "$PROG" altstack $size 2>/dev/null || st=$?
	expect_eq "an alternate stack of $size bytes: status" 139 "$st"
	want=$([ $size = 8192 ] || echo "caught 11 fault; crash 11")
	expect_eq "an alternate stack of $size bytes: records" "$want" "$(records_of "$TMP/alt$size.rec")"
done
note "python3 -X faulthandler: traceback and SIGSEGV as without the shim"
