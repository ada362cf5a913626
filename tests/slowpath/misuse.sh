#!/bin/bash
# NOFAIL misuse is warned once per call site: NOFAIL with NOWAIT/ATOMIC
# ("cannot wait"; the request fails, as in the kernel) and NOFAIL above
# 8192 bytes ("above 8192"; the request still loops until memory is freed).
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"

# Two call sites, four requests each alternating: two warnings.
sp_run atomic 'limit=8M;warn.burst=0' --flags 'ATOMIC|NOFAIL' --size 4096 --source budget \
	--repeat 4 --sites 2
for i in 0 1 2 3; do sp_expect_result atomic $i null 0; done
expect_eq "'cannot wait' warnings for 2 call sites" 2 \
	"$(grep -cE '^gfpshim: .*NOFAIL.*cannot wait' "$TMP/atomic.log")"
sp_run nowait 'limit=8M' --flags 'NOWAIT|NOFAIL' --size 4096 --source budget --repeat 2
sp_expect_result nowait 1 null 0
expect_eq "'cannot wait' warnings for NOWAIT|NOFAIL, 1 site" 1 \
	"$(grep -cE '^gfpshim: .*NOFAIL.*cannot wait' "$TMP/nowait.log")"

# NOFAIL 16384: loops until the free, twice at one site, once at another.
sp_run big 'limit=8M;wait=5ms' --flags 'NOFS|NOFAIL' --size 16384 --source budget \
	--free-on-canary 1 --repeat 3 --sites 2
for i in 0 1 2; do sp_expect_result big $i ok 1; done
expect_eq "'above 8192' warnings for 2 call sites" 2 \
	"$(grep -cE '^gfpshim: .*NOFAIL.*above 8192' "$TMP/big.log")"
grep -E '^gfpshim: .*NOFAIL.*above 8192' "$TMP/big.log" | head -1 | sed 's/^/# /'

# 8192 is not above 8192.
sp_run edge 'limit=8M;wait=5ms' --flags 'NOFS|NOFAIL' --size 8192 --source budget --free-on-canary 1
sp_expect_result edge 0 ok 1
sp_no_match "NOFAIL 8192 warned" "$TMP/edge.log" "above 8192"
