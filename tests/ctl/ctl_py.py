"""What the Python of the gfp-ctl status tests shares (status.sh, memory.sh):
their failures, the end of a target, and sizes as the shim writes them."""
import os, re, signal, subprocess

failures = []


def check(what, cond, detail=""):
    if not cond:
        failures.append(f"{what}: {detail}")
    return cond


def stop(proc):
    """End of input: the target ends, or is killed after 40 s."""
    proc.stdin.close()
    try:
        proc.wait(timeout=40)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        failures.append("the target did not end")


UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def reads_as(text, low, high, slack=0.0):
    """Whether text is a size as the shim writes one ("512 B", "84.8 KiB")
    of a number of bytes from low to high (give or take a fraction slack of
    them): bytes exact, else one decimal, rounded, in the largest unit that
    keeps it under 1024."""
    m = re.fullmatch(r"([0-9]+)(\.[0-9])? (B|KiB|MiB|GiB|TiB)", text)
    if not m or (m.group(3) == "B") != (m.group(2) is None):
        return False
    value, unit = float(m.group(1) + (m.group(2) or "")), UNITS[m.group(3)]
    low, high = low * (1 - slack), high * (1 + slack)
    if unit == 1:
        return low <= value <= high and value < 1024
    return 1 <= value < 1024 and low / unit - 0.05 - 1e-9 <= value <= high / unit + 0.05 + 1e-9


def status_rows(human, tag):
    """The status for people as {row: (value, remark)}."""
    rows = {}
    for line in human.splitlines():
        m = re.fullmatch(r"(\w+) +(.*?)(?:  (\(.*\)))?", line)
        if check(f"{tag}: a row '{line}'", m):
            rows[m.group(1)] = (m.group(2).strip(), m.group(3) or "")
    return rows


def no_control_bytes(what, *streams):
    for stream in streams:
        check(f"{what}: no raw control byte", not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", stream),
              stream)
