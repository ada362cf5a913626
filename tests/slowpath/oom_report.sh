#!/bin/bash
# The OOM and allocation-failure reports read like the kernel's and are
# parsed here whole: the request line, one backtrace, Mem-Info (human sizes
# that add up to the limit, watermarks in order), under stats=sites the top
# call sites by live bytes (sorted, the filling site first), and the outcome
# line. oom=fail invokes no killer and prints one report with one backtrace.
# stats=sites keeps each site's peak (exact for large blocks): threads take 32 MiB at one site and
# hand it to a detached thread that only frees; at exit the site has 0 live
# bytes and a peak of 32 MiB. A program named with an escape sequence and
# UTF-8 reads quoted in every report line.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/slowpath/sp_report

LC_ALL=C.UTF-8 GFP_POLICY='limit=8M;stats=sites' LD_PRELOAD="$SHIM" "$PROG" fill 1000 \
	>"$TMP/kill.out" 2>"$TMP/kill.log"
expect_eq "oom=kill: SIGKILL" 137 "$?"
GFP_POLICY='limit=8M;stats=sites;oom=fail' LD_PRELOAD="$SHIM" "$PROG" fill 1000 \
	>"$TMP/fail.out" 2>"$TMP/fail.log"
expect_eq "oom=fail: the program sees NULL and exits" 0 "$?"
GFP_POLICY='limit=8M;oom=fail' LD_PRELOAD="$SHIM" "$PROG" fill 1000 \
	>"$TMP/nosites.out" 2>"$TMP/nosites.log"
expect_eq "oom=fail without stats=sites: exit status" 0 "$?"
GFP_POLICY='stats=sites' GFP_REPORT=$TMP/peak.json LD_PRELOAD="$SHIM" "$PROG" peak 4 \
	>"$TMP/peak.out" 2>"$TMP/peak.log"
expect_eq "peak: exit status" 0 "$?"
odd=$TMP/$'pr\xc3\xb8g\e[31m'
cp "$PROG" "$odd"
GFP_POLICY='limit=8M;oom=fail' LD_PRELOAD="$SHIM" "$odd" fill 1000 >/dev/null 2>"$TMP/odd.log"
expect_eq "odd name: exit status" 0 "$?"

/usr/bin/python3 - "$TMP" <<'PY' || fail "see above"
import json, re, sys
tmp = sys.argv[1]
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
SIZE = r"(-?\d+(?:\.\d)?) (B|KiB|MiB|GiB)"

def size(num, unit):
    return float(num) * UNITS[unit]

def close(a, b, unit_of_b):
    """Equal within the rounding of one decimal of b's unit."""
    return abs(a - b) <= 0.051 * UNITS[unit_of_b] * 2

bad = []
def check(ok, what):
    if not ok:
        bad.append(what)

def report(path, level):
    """The report's lines without the frames, and its frames."""
    text = open(path, encoding="utf-8", errors="strict").read()
    lines = text.splitlines()
    frames = [l for l in lines if re.match(r"^  #\d+ ", l)]
    return text, lines, frames

def mem_info(lines, level, name):
    p = f"gfpshim: {level}: "
    mi = [l for l in lines if l.startswith(p + "Mem-Info: live:")]
    wm = [l for l in lines if l.startswith(p + "Mem-Info: watermarks ")]
    check(len(mi) == 1 and len(wm) == 1, f"{name}: one Mem-Info pair, got {len(mi)}, {len(wm)}")
    if not mi or not wm:
        return None
    m = re.fullmatch(p + rf"Mem-Info: live:{SIZE} limit:{SIZE} free:{SIZE} reserved:{SIZE} "
                     r"waiting:(\d+) threads:(\d+)", mi[0])
    check(m, f"{name}: Mem-Info line shape: {mi[0]!r}")
    if not m:
        return None
    live, limit, free = size(*m.group(1, 2)), size(*m.group(3, 4)), size(*m.group(5, 6))
    check(limit == 8 << 20, f"{name}: limit {limit}, expected 8 MiB")
    check(close(live + free, limit, m.group(2)), f"{name}: live {live} + free {free} != limit")
    check(live > 7 * (1 << 20), f"{name}: live {live}: the budget was full")
    check(int(m.group(10)) >= 1, f"{name}: threads {m.group(10)}")
    w = re.fullmatch(p + rf"Mem-Info: watermarks kernel:{SIZE} high:{SIZE} atomic:{SIZE} "
                     rf"memalloc:{SIZE} min_free:{SIZE}", wm[0])
    check(w, f"{name}: watermarks line shape: {wm[0]!r}")
    if w:
        k, h, a, mem, mf = (size(*w.group(i, i + 1)) for i in range(1, 11, 2))
        check(k <= h <= a <= mem <= limit, f"{name}: watermarks out of order {k} {h} {a} {mem}")
        check(close(limit - mf, k, w.group(2)), f"{name}: kernel watermark {k} != limit - min_free {mf}")
    return live

def top_sites(lines, level, name, live):
    p = f"gfpshim: {level}: "
    heads = [i for i, l in enumerate(lines) if l.startswith(p + "Memory allocations")]
    check(len(heads) == 1, f"{name}: one 'Memory allocations' section, got {len(heads)}")
    if not heads:
        return
    h = re.fullmatch(p + r"Memory allocations \(top (\d+) call sites by live bytes\):",
                     lines[heads[0]])
    check(h, f"{name}: section head {lines[heads[0]]!r}")
    n = int(h.group(1)) if h else 0
    rows = []
    for l in lines[heads[0] + 1:heads[0] + 1 + n]:
        r = re.fullmatch(p + rf" +{SIZE} +(\d+) calls  peak +{SIZE}  (\S+)? ?\((\S+)\+0x[0-9a-f]+\)", l)
        check(r, f"{name}: site row shape {l!r}")
        if r:
            rows.append((size(*r.group(1, 2)), int(r.group(3)), size(*r.group(4, 5)), r.group(6)))
    check(2 <= len(rows) <= 10, f"{name}: {len(rows)} rows")
    check([x[0] for x in rows] == sorted((x[0] for x in rows), reverse=True),
          f"{name}: rows not sorted by live bytes")
    check(all(pk >= lv for lv, _, pk, _ in rows), f"{name}: a peak below its live bytes")
    if rows:
        check((rows[0][3] or "").startswith("fill_site+"), f"{name}: first row {rows[0]}")
        check(rows[0][0] > 0.8 * live, f"{name}: fill_site holds {rows[0][0]} of {live}")
    check(any(re.match(r"other_site(\.\w+)*\+", r[3] or "") and close(r[0], 1 << 20, "MiB") for r in rows),
          f"{name}: no other_site row with 1.0 MiB: {rows}")

# oom=kill under stats=sites.
text, lines, frames = report(f"{tmp}/kill.log", "error")
pid = re.search(r"sp_report\((\d+)\) invoked oom-killer", text)
check(pid, "oom=kill: no 'invoked oom-killer' line")
check(re.search(r"^gfpshim: error: thread \S+ \(tid \d+\) looped \d+ rounds? without progress "
                r"on 1000 B: the budget is at its watermark$", text, re.M), "oom=kill: thread line")
check(sum(1 for f in frames if f.startswith("  #0 ")) == 1, f"oom=kill: {len(frames)} frames, not one backtrace")
check(any("fill_site+" in f for f in frames), "oom=kill: the backtrace does not name fill_site")
live = mem_info(lines, "error", "oom=kill")
if live:
    top_sites(lines, "error", "oom=kill", live)
last = lines[-1] if lines else ""
check(pid and re.fullmatch(rf"gfpshim: error: Out of memory: Killed process {pid.group(1)} "
                           rf"\(sp_report\) live:{SIZE}", last), f"oom=kill: last line {last!r}")

# oom=fail under stats=sites: no killer, one failure report, one backtrace.
text, lines, frames = report(f"{tmp}/fail.log", "warning")
check("oom-killer" not in text and "Killed process" not in text, "oom=fail: a killer report")
fails = re.findall(r"^gfpshim: warning: sp_report\(\d+\): allocation failure: size:1000 order:0, "
                   r"mode:KERNEL 0xcc0: the OOM step gave up \(oom=fail\) \(after \d+ rounds?\)$", text, re.M)
check(len(fails) == 1, f"oom=fail: {len(fails)} allocation failure reports")
check(sum(1 for f in frames if f.startswith("  #0 ")) == 1, "oom=fail: the backtrace printed more than once")
live = mem_info(lines, "warning", "oom=fail")
if live:
    top_sites(lines, "warning", "oom=fail", live)
check(re.fullmatch(r"filled \d+\n", open(f"{tmp}/fail.out").read()), "oom=fail: the program did not see NULL")

# Without stats=sites: Mem-Info, no site list.
text, lines, _ = report(f"{tmp}/nosites.log", "warning")
mem_info(lines, "warning", "no stats=sites")
check("Memory allocations" not in text, "no stats=sites: a site list")

# The peak of a site whose blocks a detached thread freed.
rep = json.load(open(f"{tmp}/peak.json"))
rows = [r for r in rep["allocinfo"] if (r.get("symbol") or "").startswith("peak_site+")]
check(len(rows) == 1, f"peak: {len(rows)} peak_site rows")
if rows:
    r = rows[0]
    check(r["live_bytes"] == 0, f"peak: live_bytes {r['live_bytes']} after the frees")
    check(r["peak_bytes"] == 32 << 20, f"peak: peak_bytes {r['peak_bytes']}, 32 MiB held at once")
    check(all(x["peak_bytes"] >= x["live_bytes"] for x in rep["allocinfo"]), "peak below live")

# A name with an escape sequence and UTF-8: quoted, never raw.
raw = open(f"{tmp}/odd.log", "rb").read()
check(b"\x1b" not in raw, "odd name: a raw ESC in the log")
check("pr\u00f8g\\x1b[31m(" in raw.decode("utf-8"), "odd name: the name is not quoted as prøg\\x1b[31m")

if bad:
    print("FAIL: " + "\nFAIL: ".join(bad))
    sys.exit(1)
print(f"# oom=kill, oom=fail and peak reports parsed; peak_site peak {rows[0]['peak_bytes'] >> 20} MiB of 32")
PY
