#!/bin/bash
# The manifests of doc/engines run as their job runners would run them: the
# sweep command of each (the Kubernetes Job's container command, the Slurm
# batch script, the GitLab job's script, the GitHub workflow's step, the GNU
# parallel script on this machine alone) once per part, with the variables
# that runner sets for it, on a small campaign; the merge each documents
# joins the parts into the unsharded campaign's results and findings.
source "$TESTS/lib.sh"
need_prog jq parallel
/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
ENGINES=$SRC/doc/engines
WORK=$TMP/work
mkdir -p "$WORK/build" "$WORK/results"
ln -s "$BUILD/tools" "$WORK/build/tools"
export PATH=$BUILD/tools:$PATH
unset GFP_SHARD_INDEX GFP_SHARD_COUNT PARALLEL_SEQ JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID \
	CI_NODE_INDEX CI_NODE_TOTAL
OUTPROG=$BUILD/tests/sweep/outprog
cat >"$WORK/campaign.jsonl" <<END
{"id": "binary", "argv": ["$OUTPROG", "binary"]}
{"id": "status1", "argv": ["$OUTPROG", "status1"], "status": 1}
END
gfp-sweep -j 2 --campaign "$WORK/campaign.jsonl" --state "$TMP/whole.state" \
	--json "$TMP/whole.json" >"$TMP/whole.out" 2>&1
[ $? = 1 ] || fail "the unsharded campaign: $(tail -3 "$TMP/whole.out")"

/usr/bin/python3 - "$ENGINES" "$WORK" "$TMP" "$OUTPROG" <<'PY' || fail "see above"
import glob, json, os, re, shutil, subprocess, sys
import yaml
engines, work, tmp, outprog = sys.argv[1:5]
whole = json.load(open(f"{tmp}/whole.json"))
bad = []

def fresh():
    """A clean work directory: no parts, no states from the last runner."""
    for f in glob.glob(f"{work}/part*") + glob.glob(f"{work}/results/*") + \
            glob.glob(f"{work}/*.state") + glob.glob(f"{work}/all.json"):
        os.remove(f)

def sh(script, env, what):
    p = subprocess.run(["bash", "-c", script], cwd=work, env=dict(os.environ, **env),
                       capture_output=True, text=True)
    if p.returncode:
        bad.append(f"{what}: exit {p.returncode}: {p.stderr[-400:]}")
    return p

def merged(name, parts_glob):
    parts = sorted(glob.glob(f"{work}/{parts_glob}"))
    p = subprocess.run(["gfp-report", "merge", "-o", f"{work}/all.json", *parts],
                       capture_output=True, text=True)
    if p.returncode:
        bad.append(f"{name}: merge of {parts}: {p.stderr[-300:]}")
        return
    m = json.load(open(f"{work}/all.json"))
    view = lambda d: [(t["id"], t["state"], t["runs"],
                       [(r["site"], r["hit"], r["outcome"]) for r in t["results"]],
                       [(g["outcome"], g["key"], g["count"],
                         [(p["site"], p["count"]) for p in g["call_paths"]])
                        for g in t["findings"]])
                      for t in d["targets"]]
    if view(m) != view(whole):
        bad.append(f"{name}: the merged parts differ from the unsharded campaign")
    else:
        print(f"# {name}: {len(parts)} parts merged as the unsharded campaign")

# Kubernetes: the container's command, the volumes at their mount paths.
job = yaml.safe_load(open(f"{engines}/kubernetes-job.yaml"))
c = job["spec"]["template"]["spec"]["containers"][0]
script = c["command"][2].replace("/campaign/", f"{work}/").replace("/results/",
                                                                  f"{work}/results/")
env = {e["name"]: e["value"] for e in c["env"]}
fresh()
for k in range(job["spec"]["completions"]):
    sh(script, dict(env, JOB_COMPLETION_INDEX=str(k)), f"kubernetes index {k}")
merged("kubernetes", "results/part-*.json")

# Slurm: the batch script per array task of its --array range.
lo, hi = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$",
                            open(f"{engines}/slurm-array.sbatch").read(), re.M).groups())
fresh()
for i in range(lo, hi + 1):
    sh(f"bash {engines}/slurm-array.sbatch", {
        "SLURM_ARRAY_TASK_ID": str(i), "SLURM_ARRAY_TASK_COUNT": str(hi - lo + 1),
        "SLURM_ARRAY_TASK_MIN": str(lo), "SLURM_ARRAY_TASK_MAX": str(hi),
        "SLURM_CPUS_PER_TASK": "2"}, f"slurm task {i}")
merged("slurm", "part-*.json")

# GitLab: the job's script per node, then the report job's.
ci = yaml.safe_load(open(f"{engines}/gitlab-ci.yml"))
n = ci["gfp-sweep"]["parallel"]
fresh()
for i in range(1, n + 1):
    for line in ci["gfp-sweep"]["script"]:
        sh(line, {"CI_NODE_INDEX": str(i), "CI_NODE_TOTAL": str(n)}, f"gitlab node {i}")
merged("gitlab", "part-*.json")
report = ci["gfp-report"]["script"]
for line in report[:-1]:
    sh(line, {}, "gitlab report")
p = subprocess.run(["bash", "-c", report[-1]], cwd=work, capture_output=True, text=True)
if p.returncode != 1:
    bad.append(f"gitlab: the report job's last line exits {p.returncode}, not 1 on findings")

# GitHub: the sweep step per matrix job, strategy.job-index and job-total.
wf = yaml.safe_load(open(f"{engines}/github-workflow.yml"))
sweep = wf["jobs"]["sweep"]
total = len(sweep["strategy"]["matrix"]["part"])
step = next(s for s in sweep["steps"] if s.get("name") == "sweep this part")
fresh()
for i in range(total):
    expand = lambda v: v.replace("${{ strategy.job-index }}", str(i)).replace(
        "${{ strategy.job-total }}", str(total))
    sh(expand(step["run"]), {k: expand(str(v)) for k, v in step["env"].items()},
       f"github job {i}")
merged("github", "part-*.json")

# GNU parallel: its script with this machine for the three hosts, the
# campaign's first target for ./prog.
text = open(f"{engines}/gnu-parallel.sh").read()
text = text.replace("4/:,2/host1,2/host2", "8/:").replace(
    "-- ./prog input.txt", "--campaign campaign.jsonl").replace("gfp-report all.json", "true")
fresh()
sh(text, {}, "gnu parallel")
merged("gnu parallel", "part*.json")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
