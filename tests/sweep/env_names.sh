#!/bin/bash
# A campaign target's environment variable names may hold any byte but '='
# and NUL: an ESC sequence that retitles the terminal (ESC ] 0 ; ... BEL),
# a CSI (ESC [ and U+009B) that clears it. Under a UTF-8 locale, neither
# gfp-sweep's standard output (reproducers, results) nor its standard error
# carries one of those bytes raw; the reproducer names them through env(1)
# with each NAME=VALUE one quoted word, which bash takes back to the exact
# bytes, and the console's reproducer is the JSON's. A name with '=' is
# refused with one line, its bytes spelled out; so is an unknown key.
source "$TESTS/lib.sh"
need_c_utf8
SWEEP=$BUILD/tools/gfp-sweep
OUTPROG=$BUILD/tests/sweep/outprog
export LC_ALL=C.UTF-8

/usr/bin/python3 - "$SWEEP" "$OUTPROG" "$TMP" <<'PY' || fail "see above"
import json, os, re, subprocess, sys
sys.path.insert(0, os.environ["TESTS"] + "/sweep")
import bounded
sweep, outprog, tmp = sys.argv[1:4]
bad = []
RAW = (b"\x1b", b"\x07", b"\xc2\x9b")
names = {"\x1b]0;gfp-pwned\x07TITLE": "t", "CSI\u009b2J": "c", "ESC\x1b[31mRED": "v\x1b[2J",
         "PLAIN_NAME": "p"}

def run(args):
    return bounded.run([sweep, "--timeout", "60", *args], 100)

def raw(tag, what, data):
    found = [r for r in RAW if r in data]
    if found:
        bad.append(f"{tag}: {what} carries {found} raw: {data[-400:]!r}")

camp = f"{tmp}/names.jsonl"
with open(camp, "w") as f:
    f.write(json.dumps({"id": "bin", "argv": [outprog, "binary"], "env": names}) + "\n")
st, out, err = run(["-j", "2", "--campaign", camp, "--json", f"{tmp}/n.json", "--html",
                    f"{tmp}/n.html", "--junit", f"{tmp}/n.xml"])
if st != 1:
    bad.append(f"campaign: exit {st}: {err[-300:]!r}")
raw("campaign", "stdout", out)
raw("campaign", "stderr", err)
found = json.load(open(f"{tmp}/n.json"))["targets"][0]["findings"]
repro = found[0]["reproducer"] if found else ""
shown = re.findall(r"reproduce \(confirmed\): (.*)", out.decode())
if shown != [repro]:
    bad.append(f"the reproducer: JSON {repro!r}, console {shown}")
# After the directory the runs ran in (no " && " in this test's).
repro = repro.split(" && ", 1)[1] if repro.startswith("cd -- ") else repro
if not repro.startswith("env -- "):
    bad.append(f"the reproducer: JSON {repro!r}, console {shown}")
# bash takes each quoted word back to its bytes (run as words, not run).
words = subprocess.run(["bash", "-c", 'eval "w=($1)"; printf "%s\\0" "${w[@]}"', "_", repro],
                       capture_output=True).stdout.split(b"\0")[:-1]
want = [f"{k}={v}".encode() for k, v in names.items()]
if words[2:2 + len(want)] != want:
    bad.append(f"the reproducer's words {words[:6]}, {want} expected")

for tag, env in (("a name with '='", {"A=\x1b[31m": "v"}), ("unknown key", None)):
    with open(camp, "w") as f:
        t = {"id": "bin", "argv": [outprog, "binary"]}
        if env:
            t["env"] = env
        else:
            t["\x1b]0;key\x07"] = 1
        f.write(json.dumps(t) + "\n")
    st, out, err = run(["--campaign", camp, "--state", f"{tmp}/s.{len(tag)}"])
    if st != 2 or len(err.splitlines()) != 1 or b"\\x1b" not in err:
        bad.append(f"{tag}: exit {st}, stderr {err!r}")
    raw(tag, "stderr", err)

if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
print(f"# reproducer: {repro[:120]}")
PY
