#!/bin/bash
# What a run that fails one site (gfp-sweep's runs: fail.site=ID;
# fail.site.hit=K) unwinds. A site id's top 12 bits are the low 12 bits of
# its innermost frame's offset, so a call whose return address has other low
# bits is ruled out without unwinding; and once the Kth hit has failed no
# call can fail, so none is unwound. The report's "unwinds" counts the call
# paths the process unwound. The failed call is still exactly the Kth hit.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

ROUNDS=20
# Every call of inj_site fails once, so the four sites show their ids and
# innermost frames in the injection records.
inj_run all 'fail.probability=1' "$INJ/inj_site" "$ROUNDS"
inj_ok all
/usr/bin/python3 - "$TMP/all.rec" >"$TMP/sites" <<'PY' || fail "see above"
import json, sys
sites = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["event"] != "injection":
        continue
    top = int(r["frames"][0]["offset"], 16) & 0xfff
    if int(r["site"], 16) >> 52 != top:
        sys.exit(f"site {r['site']}: top 12 bits {int(r['site'], 16) >> 52:#x}, "
                 f"innermost frame {r['frames'][0]} (offset's low bits {top:#x})")
    sites[r["size"]] = r["site"]
# inj_site's order: site_a (111 bytes), site_b (222), strdup of 11, of 21.
if sorted(sites) != [11, 21, 111, 222]:
    sys.exit(f"sites by size: {sites}")
print(" ".join(sites[s] for s in (111, 222, 11, 21)))
PY
read -r A B D1 D2 <"$TMP/sites"
note "each site's top 12 bits are its innermost frame's: site_a $A, site_b $B, strdup $D1 $D2"

# The calls that may be site X: those of the sites with X's top bits.
same_top() { local x=$1 n=0 s; for s in $A $B $D1 $D2; do [ "${s:0:3}" = "${x:0:3}" ] && n=$((n + 1)); done; echo $n; }

for hit in 1 3 "$ROUNDS"; do
	for s in A B D2; do
		id=${!s}
		tag=$s.$hit
		GFP_REPORT=$TMP/$tag.json inj_run "$tag" "fail.site=$id;fail.site.hit=$hit" \
			"$INJ/inj_site" "$ROUNDS"
		inj_ok "$tag"
		# Exactly the hit-th call of the site failed.
		line=$(case $s in A) echo a ;; B) echo b ;; D2) echo e ;; esac)
		want="$(dots $((hit - 1)))X$(dots $((ROUNDS - hit)))"
		expect_eq "$tag: the calls of site $line" "$want" "$(sed -n "s/^$line //p" "$TMP/$tag.out")"
		expect_eq "$tag: the other sites" 0 "$(grep -v "^$line \|^data=" "$TMP/$tag.out" | grep -c X)"
		# Rounds before the hit's: every site's call; in its round the
		# sites up to this one (the order is a b d e).
		pos=$(case $s in A) echo 1 ;; B) echo 2 ;; D2) echo 4 ;; esac)
		k=$(same_top "$id")
		before=0
		i=0
		for t in $A $B $D1 $D2; do
			i=$((i + 1))
			[ "${t:0:3}" = "${id:0:3}" ] && [ "$i" -le "$pos" ] && before=$((before + 1))
		done
		want=$(((hit - 1) * k + before))
		got=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["unwinds"])' \
			"$TMP/$tag.json") || fail "$tag: no \"unwinds\" in the report"
		expect_eq "$tag: call paths unwound (the calls that may be the site, up to its hit $hit)" \
			"$want" "$got"
	done
done
note "a one-site run unwinds only the calls that may be that site, and none after its hit"

