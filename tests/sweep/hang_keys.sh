#!/bin/bash
# A hang is keyed by where it waits however the samples of its stack fall
# (tests/sweep/hangprog.c; 4 failed allocations lead to one hang each):
# a busy loop over three functions is one hang finding keyed by the loop's
# function (spin_outer), in two sweeps alike, and so is one in a thread
# that is not the initial one; in the stripped copy, one finding keyed by
# the loop function's start ("fn@hangprog_stripped+0x..."), the same in
# two sweeps, its backtrace still at the real offsets. A loop that spends
# its time in the allocator has no frame of the shim's or jemalloc's in its
# state, and at most three names. A library loaded through a symlink is
# named by the loader's name for it (the link's), in the hang's stack as in
# the failed allocation's. The stripped program's two failed calls in one
# function that reach one crash are one finding; an abort site whose call
# to abort is its function's last instruction is named by that function.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/hangprog
STRIPPED=$BUILD/tests/sweep/hangprog_stripped
LIB=$(ls "$BUILD"/tests/sweep/libhanglib.so)
[ -n "$LIB" ] || fail "no libhanglib.so in $BUILD/tests/sweep"
# Yama's 2 and 3: only root, or no one, may read another process's stack.
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$scope" -ge 3 ] || { [ "$scope" = 2 ] && [ "$(id -u)" != 0 ]; }; then
	skip "this system forbids ptrace: a hang's stack cannot be read"
fi
ln -s "$LIB" "$TMP/libhang-link.so" || fail "ln -s"

/usr/bin/python3 - "$SWEEP" "$PROG" "$STRIPPED" "$TMP" <<'PY' || fail "see above"
import json, os, re, subprocess, sys
sys.path.insert(0, os.environ["TESTS"] + "/sweep")
import bounded

sweep, prog, stripped, tmp = sys.argv[1:5]
bad = []
TOOL = ("libgfpshim.so", "libjemalloc")


def run(name, *argv, timeout="3"):
    out = f"{tmp}/{name}"
    st, so, se = bounded.run([sweep, "--timeout", timeout, "-j", "2", "--json", f"{out}.json",
                              "--", *argv], 300)
    open(f"{out}.out", "wb").write(so)
    if st not in (0, 1):
        bad.append(f"{name}: exit status {st}\n{se.decode(errors='replace')[-2000:]}")
        return [], ""
    return json.load(open(f"{out}.json", encoding="utf-8"))["findings"], so.decode()


def hangs(name, fs):
    h = [f for f in fs if f["outcome"] == "hang"]
    print(f"# {name}: " + "; ".join(f"{f['title']} ({f['count']} runs)" for f in fs))
    return h


# A busy loop over three functions, twice; in a thread.
states = []
for name, argv in (("spin1", [prog, "spin"]), ("spin2", [prog, "spin"]),
                   ("thread", [prog, "thread"])):
    h = hangs(name, run(name, *argv)[0])
    if len(h) != 1 or not h[0]["state"] or h[0]["state"][0] != "spin_outer":
        bad.append(f"{name}: {[(f['state'], f['count']) for f in h]}, expected one hang "
                   f"keyed by spin_outer")
    states += [h[0]["state"]] if h else []
if len(states) == 3 and states[0] != states[1]:
    bad.append(f"spin: two sweeps, two keys: {states[0]} and {states[1]}")

# The stripped copy: its functions by their start (the unstripped
# program's symbols give them: objcopy keeps the addresses), twice alike.
nm = subprocess.run(["nm", prog], capture_output=True, text=True).stdout
starts = {l.split()[2]: int(l.split()[0], 16) for l in nm.splitlines() if len(l.split()) == 3}
base = os.path.basename(stripped)
keys = []
for name in ("strip1", "strip2"):
    fs, text = run(name, stripped, "spin")
    h = hangs(name, fs)
    want = f"fn@{base}+{starts.get('spin_outer', -1):#x}"
    if len(h) != 1 or h[0]["state"][0] != want:
        bad.append(f"{name}: {[(f['state'], f['count']) for f in h]}, expected one hang "
                   f"keyed by {want} (spin_outer)")
        continue
    keys.append(h[0]["state"])
    offs = [f["offset"] for f in h[0]["crash_frames"] if f["module"] == base]
    if not offs or "fn@" in text.split("where it waited")[1].split("reproduce")[0]:
        bad.append(f"{name}: the backtrace does not show the real offsets: {offs}")
if len(keys) == 2 and keys[0] != keys[1]:
    bad.append(f"stripped: two sweeps, two keys: {keys[0]} and {keys[1]}")

# A loop in the allocator: none of the tool's frames in the state.
for f in hangs("allocspin", run("allocspin", prog, "allocspin")[0]):
    tool_names = {n for fr in f["crash_frames"] if fr["module"].startswith(TOOL)
                  for n in [fr["module"], fr["function"]] +
                  [i["function"] for i in fr.get("inlined_into") or []] if n}
    if len(f["state"]) > 3 or any(n.split("(")[0] in {t.split("(")[0] for t in tool_names}
                                  or n.startswith(TOOL) for n in f["state"]):
        bad.append(f"allocspin: state {f['state']} has the tool's frames or more than three")

# A library loaded through a symlink: the link's name on both sides.
fs, _ = run("lib", prog, "lib", f"{tmp}/libhang-link.so")
for f in hangs("lib", fs):
    mods = {fr["module"] for k in ("injection_frames", "crash_frames") for fr in f[k]}
    crash = [fr["module"] for fr in f["crash_frames"] if fr["function"] in ("lib_loop",
                                                                            "hanglib_spin")]
    if "libhanglib.so" in mods or not crash or set(crash) != {"libhang-link.so"}:
        bad.append(f"lib: modules {sorted(mods)}, the library's frames in {crash}; "
                   f"expected libhang-link.so")
if not any(f["outcome"] == "hang" for f in fs):
    bad.append("lib: no hang")

# Two failed calls in one function of a stripped program, one abort.
fs, _ = run("twocalls", stripped, "twocalls", timeout="60")
crashes = [f for f in fs if f["outcome"] == "crash"]
print("# twocalls: " + "; ".join(f"{f['title']} ({f['count']} runs)" for f in fs))
want = [f"fn@{base}+{starts.get('die', -1):#x}"]
if len(crashes) != 1 or crashes[0]["count"] != 2 or crashes[0]["state"] != want:
    bad.append(f"twocalls: {[(f['state'], f['count']) for f in crashes]}, expected one crash "
               f"of 2 runs keyed by {want} (die)")

# die_abort's call to abort is its last instruction: the abort site is
# die_abort, the function that holds the call, not what follows it.
fs, text = run("abort", stripped, "abort", timeout="60")
want = f"fn@{base}+{starts.get('die_abort', -1):#x} ("
sites = re.findall(r"^  \[A\d+\] \d+ runs?: (.*) aborted for ", text, re.M)
print(f"# abort: {sites}, die_abort at {want}")
if len(sites) != 2 or any(not s.startswith(want) for s in sites):
    bad.append(f"abort: the abort sites {sites}, expected die_abort's ({want}...)")

for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit 0
