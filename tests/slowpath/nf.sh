# tests/slowpath/nf.sh - sourced after lib.sh and sp.sh by the tests that
# run sp_nofail.
NF=$BUILD/tests/slowpath/sp_nofail
[ -x "$NF" ] || fail "not built: $NF"

# nf_run TAG POLICY ARGS...: sp_nofail with GFP_LOG $TMP/TAG.log and
# GFP_RECORD $TMP/TAG.rec, killed (SIGKILL) after 120 s; SP_RC, as sp_run
# leaves it (sp_show shows the run).
nf_run() {
	local tag=$1 policy=$2
	shift 2
	SP_RC=0
	GFP_POLICY=$policy GFP_LOG=$TMP/$tag.log GFP_RECORD=$TMP/$tag.rec LD_PRELOAD=$SHIM \
		bounded 120 "$NF" "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err" || SP_RC=$?
	touch "$TMP/$tag.log" "$TMP/$tag.rec"
}
