#!/bin/bash
# Reproducers run from any directory. scriptprog is swept (-j 2) as
# "./PROG -f script" with --input input from its own directory, whose name
# holds spaces, quotes, a '$', a newline and UTF-8, as does the program's:
# every finding is confirmed (console and JSON), and each finding's
# reproducer, run by bash from / exactly as printed, ends as its finding
# ended (the crash's signal, a silent loss's status and changed output).
# The confirmation is a run of the printed reproducer from another
# directory: a gfp-sweep whose reproducers name a gfp-run that is nowhere
# to be found confirms none of its findings.
source "$TESTS/lib.sh"
need_c_utf8
export LC_ALL=C.UTF-8
SWEEP=$BUILD/tools/gfp-sweep

/usr/bin/python3 - "$SWEEP" "$BUILD/tests/sweep/scriptprog" "$TMP" "$SHIM" <<'PY' || fail "see above"
import json, os, re, shutil, subprocess, sys
sys.path.insert(0, os.environ["TESTS"] + "/sweep")
import bounded
sweep, scriptprog, tmp, shim = sys.argv[1:5]
bad = []
d = os.path.join(tmp, "dir 'q\" $x\nü")
os.mkdir(d)
prog = "prog 'p\" $y\né"
shutil.copy(scriptprog, os.path.join(d, prog))
with open(os.path.join(d, "script"), "w") as f:
    f.write("alpha\nbeta\n")
with open(os.path.join(d, "input"), "w") as f:
    f.write("one\ntwo\nthree\n")
plain = subprocess.run([f"./{prog}", "-f", "script"], cwd=d, stdin=open(os.path.join(d, "input")),
                       capture_output=True)
if plain.returncode != 0 or plain.stdout != b"alpha\nbeta\none\ntwo\nthree\n":
    sys.exit(f"FAIL: the plain run: {plain}")

def swept(tag, sweep_path, env=None):
    st, out, err = bounded.run([sweep_path, "--timeout", "60", "-j", "2", "--lib", shim, "--json", f"{tmp}/{tag}.json",
                                "--input", "input", "--", f"./{prog}", "-f", "script"], 200,
                               cwd=d, env=env)
    if st != 1:
        sys.exit(f"FAIL: {tag}: exit {st}: {err[-600:]!r}")
    sw = json.load(open(f"{tmp}/{tag}.json"))
    if not sw["findings"]:
        sys.exit(f"FAIL: {tag}: no finding: {out.decode()[-600:]}")
    return sw, out.decode()

sw, out = swept("here", sweep)
shown = re.findall(r"^  reproduce \((.*?)\): (.*)$", out, re.M)
groups = sw["findings"]
if [(s, r) for s, r in shown] != [("confirmed", g["reproducer"]) for g in groups]:
    bad.append(f"the console's reproducers {shown}\n  the JSON's {[g['reproducer'] for g in groups]}")
for g in groups:
    first = sw["results"][g["first_run"]]
    if not g["confirmed"]:
        bad.append(f"finding {g['site']} ({g['outcome']}) not confirmed: {g['reproducer']}")
    st, rout, rerr = bounded.run(["bash", "-c", g["reproducer"]], 60, cwd="/")
    # A program killed by a signal: bash ends by it too when it ran the
    # program itself, else says so with 128 + the signal.
    sig = first["signal"]
    want = (-sig, 128 + sig) if sig else (first["status"],)
    if st not in want or (g["outcome"] == "silent" and rout == plain.stdout):
        bad.append(f"{g['outcome']} finding's reproducer, from /: exit {st} (expected {want}), "
                   f"stdout {rout[:80]!r}, stderr {rerr[-300:]!r}\n    {g['reproducer']}")
print(f"# {len(groups)} findings ({', '.join(g['outcome'] for g in groups)}), e.g. "
      f"{groups[0]['reproducer']!r}")

# A gfp-sweep alone in a directory, without gfp-run on PATH: its
# reproducers cannot run, and none is confirmed.
bindir = os.path.join(tmp, "bin")
os.mkdir(bindir)
shutil.copy(sweep, bindir)
env = dict(os.environ, PATH="/usr/bin:/bin")
if shutil.which("gfp-run", path=env["PATH"]):
    print("# a gfp-run is installed on PATH: the unrunnable reproducer is not tried")
else:
    sw, out = swept("alone", os.path.join(bindir, "gfp-sweep"), env)
    if [g["confirmed"] for g in sw["findings"]] != [False] * len(sw["findings"]) or \
            "reproduce (confirmed)" in out:
        bad.append(f"reproducers naming no gfp-run confirmed: "
                   f"{[(g['confirmed'], g['reproducer']) for g in sw['findings']]}")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
