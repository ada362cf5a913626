#!/bin/bash
# Progress on a stderr that is no terminal (a CI log): a line every
# GFP_SWEEP_PROGRESS_S seconds (10 unless set) while the runs go, parsed as
# it arrives: runs done of the plan, runs with a finding, time elapsed and
# left; no carriage returns. None comes before the default 10 s, and a bad
# interval is a usage error. The times asserted are the sweep's own (its lines'
# elapsed seconds), one way: a loaded machine only delays lines.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/outprog

/usr/bin/python3 - "$SWEEP" "$PROG" "$TMP" <<'PY' || fail "see above"
import json, os, re, subprocess, sys, time
sweep, prog, tmp = sys.argv[1:4]
bad = []

def run(interval, tag, allocs):
    """gfp-sweep of a program whose runs take 0.4 s, its stderr a pipe:
    each line with the time it arrived."""
    env = dict(os.environ)
    env.pop("GFP_SWEEP_PROGRESS_S", None)
    if interval:
        env["GFP_SWEEP_PROGRESS_S"] = str(interval)
    t0 = time.monotonic()
    p = subprocess.Popen([sweep, "--mode", "nth", "-j", "1", "--json", f"{tmp}/{tag}.json",
                          "--", prog, "slow", str(allocs)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    lines = [(time.monotonic() - t0, l.decode()) for l in p.stderr]
    p.wait()
    return p.returncode, time.monotonic() - t0, lines

line = re.compile(r"gfp-sweep: note: (\d+)/(\d+) runs, (\d+) with a finding, (\d+) s elapsed"
                  r"(?:, ~(\d+) s left)?\n")
st, total_s, lines = run(1, "one", 24)
planned = json.load(open(f"{tmp}/one.json"))["runs"]
prog_lines = [(t, line.fullmatch(l)) for t, l in lines if l.startswith("gfp-sweep: note: ") and "/" in l.split(",")[0]]
if st != 0:
    bad.append(f"exit status {st}")
if any("\r" in l for _, l in lines):
    bad.append("a carriage return on a stderr that is no terminal")
if not prog_lines or not all(m for _, m in prog_lines):
    bad.append(f"progress lines that do not parse: {[l for _, l in lines]}")
else:
    times = [t for t, _ in prog_lines]
    done = [int(m[1]) for _, m in prog_lines]
    # One a second while the runs go (0.4 s each, 24 at -j 1: 10 s at
    # least), none sooner than a second after the last.
    if len(prog_lines) < 4:
        bad.append(f"{len(prog_lines)} progress lines in a {total_s:.1f} s sweep at 1 s")
    gaps = [b - a for a, b in zip(times, times[1:])]
    el = [int(m[4]) for _, m in prog_lines]
    if any(b <= a for a, b in zip(el, el[1:])):
        bad.append(f"progress lines at {el} s elapsed: more often than every second")
    if done != sorted(done) or any(int(m[2]) != planned for _, m in prog_lines):
        bad.append(f"runs done {done} of {[m[2] for _, m in prog_lines]}, {planned} planned")
    if any(int(m[3]) != 0 for _, m in prog_lines):
        bad.append("runs with a finding counted in a sweep without any")
    # A line cannot come before the time it says (give or take a second
    # of rounding); after it, as late as the machine makes it.
    if any(e > t + 1 for e, t in zip(el, times)):
        bad.append(f"elapsed {el} s, the lines came at {[round(t, 1) for t in times]} s")
    if any((m[5] is None) != (int(m[1]) == 0) for _, m in prog_lines):
        bad.append("a time left without a run done, or none with one")
    print(f"# {len(prog_lines)} progress lines {[round(g, 2) for g in gaps]} s apart: "
          f"{prog_lines[-1][1][0].strip()}")

st, total_s, lines = run(None, "default", 12)
early = [l for l in lines if not ((m := line.fullmatch(l[1])) and int(m[4]) >= 10)]
if st != 0 or early:
    bad.append(f"default interval: a {total_s:.1f} s sweep printed {early} (status {st})")
for v in ("0", "soon", "-1"):
    env = dict(os.environ, GFP_SWEEP_PROGRESS_S=v)
    p = subprocess.run([sweep, "--", prog, "binary"], env=env, capture_output=True, text=True)
    if p.returncode != 2 or not re.match(r"gfp-sweep: error: GFP_SWEEP_PROGRESS_S", p.stderr):
        bad.append(f"GFP_SWEEP_PROGRESS_S={v}: status {p.returncode}, {p.stderr!r}")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
