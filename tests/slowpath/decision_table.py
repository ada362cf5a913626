#!/usr/bin/python3
"""The slow path's decision table, one child process per cell.

Every base context x modifier x size x source of pressure runs sp_case: the
request is made under pressure and a helper thread frees memory once the
request has printed its first canary (it looped canary.retries=100 rounds,
far past the retries: a count of rounds, whatever the machine's speed).
The outcome is classified from the result and the log:
  fail      NULL before the free, no OOM report
  oom       NULL before the free, "invoked oom-killer" in the log
  loop      success only after the free, no OOM report
  oom+loop  success only after the free, with an OOM report (KERNEL|NOFAIL)
and anything else (success before the free, NULL after it, a hang, a crash)
is printed as it is. Each cell is compared with the kernel's rules
(__alloc_pages_slowpath, should_reclaim_retry, __alloc_pages_may_oom: the
table of doc/budget.md, doc/kernel.md case by case); the log must also
carry the failure report of a failing request (none is NOWARN here) with
frames naming the caller, the OOM report's first line, and the NOFAIL
misuse warnings.
Usage: decision_table.py SP_CASE SHIM TMPDIR [-j N]
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SP_CASE, SHIM, TMP = sys.argv[1:4]
JOBS = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "-j" else 2

BASES = {"KERNEL": 0xCC0, "NOFS": 0xC40, "NOIO": 0xC00, "NOWAIT": 0x800, "ATOMIC": 0x820}
MODS = {"": 0, "NORETRY": 0x10000, "RETRY_MAYFAIL": 0x4000, "NOFAIL": 0x8000}
SIZES = [4096, 65536]
SOURCES = ["budget", "enomem"]
COSTLY = 32768
POLICY = "default=KERNEL;wait=5ms;retries=8;oom=fail"


def expected(base, mod, size):
    """__alloc_pages_slowpath's checks in its order: no direct reclaim,
    NORETRY and costly requests, then the retry and OOM decision."""
    costly = size > COSTLY
    if base in ("NOWAIT", "ATOMIC"):
        return "fail"          # no reclaim, no wait; NOFAIL warns and fails
    if mod == "NORETRY":
        return "fail"          # one round
    if mod == "NOFAIL":
        # loops forever; a small KERNEL request still reaches the OOM step
        # (kernel: out_of_memory() runs for NOFAIL too), which with oom=fail
        # reports but cannot fail a NOFAIL request
        return "oom+loop" if base == "KERNEL" and not costly else "loop"
    if costly:
        return "fail"          # one round unless RETRY_MAYFAIL or NOFAIL
    if mod == "RETRY_MAYFAIL":
        return "fail"          # after `retries` rounds, never OOM
    return "oom" if base == "KERNEL" else "loop"   # too small to fail


def order(size):
    pages = (size + 4095) // 4096
    o = 0
    while (1 << o) < pages:
        o += 1
    return o


def run(cell):
    source, base, mod, size = cell
    name = f"{source}-{base}-{mod or 'none'}-{size}"
    log = os.path.join(TMP, name + ".log")
    flags = base + ("|" + mod if mod else "")
    env = dict(os.environ)
    env["LD_PRELOAD"] = SHIM
    env["GFP_POLICY"] = POLICY + (";limit=8M" if source == "budget" else "")
    env["GFP_LOG"] = log
    env.pop("GFP_REPORT", None)
    args = [SP_CASE, "--flags", flags, "--size", str(size), "--source", source,
            "--free-on-canary", "1"]
    try:
        # A hang is what outlasts a generous deadline, not a slow machine.
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = "", "timeout"
    try:
        text = open(log, errors="replace").read()
    except FileNotFoundError:
        text = ""
    return cell, flags, out, err, rc, text


def classify(out, rc, text):
    if rc == "timeout":
        return "hang"
    m = re.search(r"result=(\w+) errno=(\d+) elapsed_ms=([\d.]+) freed=(\d)", out)
    if not m:
        if isinstance(rc, int) and rc < 0:
            return f"signal {-rc}"
        return f"exit {rc}: {out.strip()[:60]}"
    res, err, ms, freed = m.group(1), int(m.group(2)), float(m.group(3)), m.group(4) == "1"
    oom = bool(re.search(OOM_STEP, text, re.M))
    if res == "null" and not freed:
        got = "oom" if oom else "fail"
        if err != 12:
            got += f" (errno {err})"
    elif res == "ok" and freed:
        got = "oom+loop" if oom else "loop"
    elif res == "ok":
        got = f"ok before the free ({ms:.0f} ms)" + (" +oom" if oom else "")
    else:
        got = f"NULL after the free ({ms:.0f} ms)" + (" +oom" if oom else "")
    if rc != 0:
        got += f" [exit {rc}]"
    return got


FRAME = r"^(gfpshim: )? *#[0-9]+ "
# The OOM step ran: under oom=fail no killer is invoked, so the failure
# report's reason (or NOFAIL's warning that it keeps looping) says so.
OOM_STEP = (r"invoked oom-killer|: the OOM step gave up \(oom=fail\)"
            r"|out of memory and oom=fail, but a NOFAIL request cannot fail")


def message_tail(text, pos):
    """The continuation lines of the message whose first line ends at pos."""
    lines = []
    for line in text[pos:].split("\n")[1:]:
        if re.match(r"gfpshim: (warning|error|info):", line):
            break
        lines.append(line)
    return "\n".join(lines)


def log_problems(cell, flags, want, text):
    """What the log must say besides the outcome."""
    source, base, mod, size = cell
    bits = BASES[base] | MODS[mod]
    mode = f"mode:{flags} 0x{bits:x}"
    probs = []
    if want == "fail":
        pat = (rf"^gfpshim: warning: sp_case\(\d+\): allocation failure: size:{size} "
               rf"order:{order(size)}, {re.escape(mode)}([^0-9a-fx]|$)")
        m = re.search(pat, text, re.M)
        if not m:
            probs.append(f"no failure report 'allocation failure: size:{size} "
                         f"order:{order(size)}, {mode}'")
        elif not re.search(FRAME + r"sp_request_under_pressure\+0x[0-9a-f]+ ",
                           message_tail(text, m.end())):
            probs.append("failure report frames do not name sp_request_under_pressure")
    if want.startswith("oom"):
        pat = (rf"^gfpshim: error: sp_case\(\d+\) invoked oom-killer: size={size} "
               rf"order={order(size)} {re.escape(mode)} oom_score_adj=-?\d+([^0-9a-fx]|$)")
        if "invoked oom-killer" in text and not re.search(pat, text, re.M):
            probs.append(f"OOM report first line is not 'invoked oom-killer: size={size} "
                         f"order={order(size)} {mode} oom_score_adj=N'")
    if mod == "NOFAIL" and base in ("NOWAIT", "ATOMIC"):
        if not re.search(r"^gfpshim: .*NOFAIL.*cannot wait", text, re.M):
            probs.append("no NOFAIL 'cannot wait' misuse warning")
    if mod == "NOFAIL" and size > 8192:
        if not re.search(r"^gfpshim: .*NOFAIL.*above 8192", text, re.M):
            probs.append("no NOFAIL 'above 8192' misuse warning")
    return probs


def judge(cell, flags, out, err, rc, text):
    """(cell, flags, want, problems, out, err, text, outcome) of one run."""
    want = expected(*cell[1:])
    got = classify(out, rc, text)
    probs = []
    # Real ENOMEM, small KERNEL|NOFAIL: after the OOM report the address
    # space the shim's unwinder held in reserve may serve the request, as
    # the kernel lets NOFAIL ignore watermarks at the OOM step.
    if (want == "oom+loop" and cell[0] == "enomem"
            and re.fullmatch(r"ok before the free \(\d+ ms\) \+oom", got)):
        got = want
    if got != want:
        probs.append(f"outcome {got}")
    else:
        probs += log_problems(cell, flags, want, text)
    return cell, flags, want, probs, out, err, text, got


def main():
    cells = [(src, b, m, s) for src in SOURCES for b in BASES for m in MODS for s in SIZES]
    with ThreadPoolExecutor(max_workers=JOBS) as ex:
        results = list(ex.map(run, cells))
    bad = []
    counts = {}
    reruns = []
    for result in results:
        cell = result[0]
        problems = judge(*result)
        # Real ENOMEM is not fully repeatable: jemalloc and libunwind map and
        # unmap address space of their own between the fill and the request.
        # Such a cell must agree on one of three runs; the budget is exact.
        for _ in range(2 if cell[0] == "enomem" else 0):
            if not problems[3]:
                break
            reruns.append(f"{cell[0]} {problems[1]} {cell[3]}: {'; '.join(problems[3])}")
            result = run(cell)
            problems = judge(*result)
        got = problems[-1]
        counts[got] = counts.get(got, 0) + 1
        if problems[3]:
            bad.append(problems[:-1])
    for line in reruns:
        print(f"# re-ran (real ENOMEM) after: {line}")
    print(f"# {len(cells)} cells, outcomes: " +
          ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    if not bad:
        print("# every cell as expected")
        return 0
    print(f"# {len(bad)} mismatch(es):")
    print(f"{'source':7} {'flags':22} {'size':>6}  {'expected':9} got")
    for cell, flags, want, probs, out, err, text in bad:
        print(f"{cell[0]:7} {flags:22} {cell[3]:>6}  {want:9} {'; '.join(probs)}")
    print("# first mismatch in detail:")
    cell, flags, want, probs, out, err, text = bad[0]
    print("stdout:", out.strip()[:300])
    print("stderr:", err.strip()[:300])
    print("log:\n" + text[:1500])
    return 1


sys.exit(main())
