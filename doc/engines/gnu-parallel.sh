#!/bin/bash
# A sweep in 8 parts with GNU parallel: 4 on this machine (':') and 2 each on
# two others over ssh. Each part's gfp-sweep takes PARALLEL_SEQ (1..8) as
# its part and GFP_SHARD_COUNT, passed with --env, as the count.
# tests/sweep/gnu_parallel.sh runs this here and through --sshlogin.
# --return brings each part's JSON back (rsync on both sides); the hosts
# need gfpshim and ./prog at the same paths (or --transferfile).
set -u
export GFP_SHARD_COUNT=8
parallel --env GFP_SHARD_COUNT --sshlogin 4/:,2/host1,2/host2 --workdir . \
	--return part{}.json --cleanup \
	gfp-sweep -j 1 --shard auto --json part{}.json -- ./prog input.txt \
	::: $(seq "$GFP_SHARD_COUNT")
gfp-report merge -o all.json part*.json
gfp-report all.json
