#!/bin/bash
# --shard auto takes the part from the job runner that started the sweep,
# as each documents its variables: a Kubernetes Indexed Job
# (JOB_COMPLETION_INDEX from 0, the count the manifest sets as
# GFP_SHARD_COUNT), a Slurm job array (SLURM_ARRAY_TASK_ID, _COUNT, _MIN,
# _STEP), GitLab's parallel: (CI_NODE_INDEX from 1, CI_NODE_TOTAL), a GitHub
# Actions matrix (GFP_SHARD_INDEX from 0 and GFP_SHARD_COUNT, which the
# workflow sets) and GNU parallel (PARALLEL_SEQ from 1, GFP_SHARD_COUNT).
# The JSON names the part, the header line the variables it came from;
# without a runner's variables, or with a count missing or a part out of
# range, it is a usage error that says what to set.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/outprog

/usr/bin/python3 - "$SWEEP" "$PROG" "$TMP" <<'PY' || fail "see above"
import json, os, re, subprocess, sys
sweep, prog, tmp = sys.argv[1:4]
ENGINE_VARS = ["GFP_SHARD_INDEX", "GFP_SHARD_COUNT", "PARALLEL_SEQ", "JOB_COMPLETION_INDEX",
               "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
               "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "CI_NODE_INDEX", "CI_NODE_TOTAL"]
clean = {k: v for k, v in os.environ.items() if k not in ENGINE_VARS}
bad = []

def run(env):
    p = subprocess.run([sweep, "--timeout", "60", "-j", "2", "--shard", "auto", "--json", f"{tmp}/s.json", "--",
                        prog, "binary"], env=dict(clean, **env), capture_output=True, text=True)
    return p

cases = [  # environment, the part, the variables the header names
    ({"JOB_COMPLETION_INDEX": "2", "GFP_SHARD_COUNT": "3"}, "3/3",
     "JOB_COMPLETION_INDEX=2 GFP_SHARD_COUNT=3"),
    ({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "4",
      "SLURM_ARRAY_TASK_MAX": "7"}, "2/4", "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=4"),
    ({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1",
      "SLURM_ARRAY_TASK_MAX": "7", "SLURM_ARRAY_TASK_STEP": "2"}, "3/4",
     "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=4"),
    ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2"}, "1/2", "CI_NODE_INDEX=1 CI_NODE_TOTAL=2"),
    ({"GFP_SHARD_INDEX": "0", "GFP_SHARD_COUNT": "2"}, "1/2",
     "GFP_SHARD_INDEX=0 GFP_SHARD_COUNT=2"),
    ({"PARALLEL_SEQ": "2", "GFP_SHARD_COUNT": "2"}, "2/2", "PARALLEL_SEQ=2 GFP_SHARD_COUNT=2"),
    # GNU parallel inside a Slurm array task: parallel's part is this one's.
    ({"PARALLEL_SEQ": "1", "GFP_SHARD_COUNT": "2", "SLURM_ARRAY_TASK_ID": "0",
      "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "0"}, "1/2",
     "PARALLEL_SEQ=1 GFP_SHARD_COUNT=2"),
]
parts = {}
for env, want, vars_ in cases:
    p = run(env)
    shard = json.load(open(f"{tmp}/s.json"))["shard"] if p.returncode in (0, 1) else None
    head = re.search(r"shard (\d+/\d+) from ([^,]*),", p.stdout)
    if shard != want or not head or head.groups() != (want, vars_):
        bad.append(f"{env}: exit {p.returncode}, shard {shard}, header {head and head[0]!r}, "
                   f"{want} from {vars_} expected: {p.stderr[-300:]}")
    if p.returncode in (0, 1):
        parts[want] = [r["hit"] for r in json.load(open(f"{tmp}/s.json"))["results"]]
# The split is --shard K/N's.
for want in ("1/2", "2/2"):
    p = subprocess.run([sweep, "--timeout", "60", "-j", "2", "--shard", want, "--json", f"{tmp}/k.json", "--",
                        prog, "binary"], env=clean, capture_output=True, text=True)
    hits = [r["hit"] for r in json.load(open(f"{tmp}/k.json"))["results"]]
    if parts.get(want) != hits:
        bad.append(f"--shard auto's part {want} ran {parts.get(want)}, --shard {want} {hits}")

errors = [  # environment, what the message must say
    ({}, "no job runner's part number in the environment"),
    ({"JOB_COMPLETION_INDEX": "1"}, "JOB_COMPLETION_INDEX=1 (a Kubernetes Indexed Job) but no "
     "GFP_SHARD_COUNT"),
    ({"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "2"}, "CI_NODE_INDEX=3 but CI_NODE_TOTAL=2: not a "
     "part of 2"),
    ({"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "2"}, "counts from 1"),
    ({"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1",
      "SLURM_ARRAY_TASK_MAX": "7"}, "is not one of a range"),
    ({"PARALLEL_SEQ": "x", "GFP_SHARD_COUNT": "2"}, "PARALLEL_SEQ='x' is not a whole number"),
]
for env, msg in errors:
    p = run(env)
    if p.returncode != 2 or msg not in p.stderr or not p.stderr.startswith("gfp-sweep: error:"):
        bad.append(f"{env}: exit {p.returncode}, stderr {p.stderr!r}, expected {msg!r}")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
