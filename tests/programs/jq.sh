#!/bin/bash
# jq running a nontrivial filter (group_by, reduce, sort_by, paths, string
# building) over a generated JSON document gives the same stdout, stderr and
# status under the idle shim.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/jq

# About 2 MB of records; generated without the shim.
/usr/bin/python3 - "$TMP/doc.json" <<'PY' || fail "cannot generate the JSON document"
import json, sys
recs = []
for i in range(6000):
    recs.append({
        "id": i,
        "name": "item-%05d" % i,
        "group": "g%02d" % ((i * 37) % 23),
        "price": round(((i * 7919) % 100000) / 100.0, 2),
        "tags": ["t%d" % ((i + k) % 13) for k in range(i % 6)],
        "dims": {"w": i % 97, "h": (i * 3) % 89, "d": {"x": i % 5, "y": [i % 2, i % 3]}},
        "note": None if i % 11 == 0 else ("n" * (i % 40)),
    })
json.dump({"version": 3, "records": recs}, open(sys.argv[1], "w"), indent=1)
PY

# shellcheck disable=SC2016 # a jq program, not shell
filter='
  .records
  | map(select(.note != null) | .volume = (.dims.w * .dims.h))
  | group_by(.group)
  | map({
      group: .[0].group,
      count: length,
      total: (map(.price) | add * 100 | round / 100),
      top: (sort_by(-.volume, .name) | .[:3] | map(.name)),
      tags: (map(.tags[]) | unique | join(",")),
      depth: (reduce (.[] | [paths] | length) as $n (0; if $n > . then $n else . end))
    })
  | sort_by(-.total, .group)
  | (.[] | "\(.group) \(.count) \(.total) \(.top | join("/")) [\(.tags)] \(.depth)"),
    (map(.count) | add | tostring | "records kept: " + .)'

jq_cmd=(/usr/bin/jq -r "$filter" "$TMP/doc.json")
identical_under_idle_shim jq "${jq_cmd[@]}"
expect_status jq plain 0
expect_contains "jq grouped output" "$TMP/jq.plain.out" '^g[0-9]{2} [0-9]+ [0-9.]+ item-[0-9]{5}/'
expect_contains "jq total line" "$TMP/jq.plain.out" '^records kept: 5454$'
expect_eq "jq: lines of output" 24 "$(wc -l <"$TMP/jq.plain.out")"
served_by_shim jq malloc 1000 "${jq_cmd[@]}"
