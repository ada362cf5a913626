/*
 * rules.c - GFP_RULES: per-call-site contexts for unmodified programs
 * (doc/design.md, "Where a request is decided").
 *
 *   GFP_RULES='lib:libxml2.so* => NOFAIL|NOFS; sym:png_* & size>64K => NORETRY'
 *
 * A rule is matchers joined by '&' and the flags a matching request gets in
 * place of default=; the first rule that matches wins, explicit flags
 * (gfp_malloc) and scopes keep their say. The matchers on the call path
 * (sym:, lib:) are decided once per call site and cached; size and thread
 * name are looked at per request, against the cached answer. The thread's
 * name is read each time it is needed, so a rename counts.
 *
 * What makes a call site is what the rules look at: with sym: rules, the
 * first rules.depth frames outside the shim; with lib: rules only, the
 * first frame outside the shim and libc (the caller of strdup, not strdup:
 * site_outside_libc). So two callers of one wrapper are two sites exactly
 * when a rule could tell them apart. The cache's read path takes no lock (ipcache.c: struct
 * gfp_ipcache).
 *
 * Nothing here runs per call unless the request's context is needed: under
 * a budget near its watermark, for an injection decision, or in the slow
 * path.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "glob.h"
#include "meaning.h"
#include "thread.h"
#include "rules.h"
#include "unwind.h"
#include "site.h"
#include "ipcache.h"

/* The rules of GFP_RULES, as rules_parse.c made them. */
static struct gfp_rule_set set;
static char text_copy[2048];
bool gfp_rules_on;

static struct gfp_ipcache cache;

/* ------------------------------------------------------------------------
 * Start-up
 * ---------------------------------------------------------------------- */

int rules_init(const char *text, char *err, size_t errlen)
{
	gfp_rules_on = false;
	if (!text || !*text)
		return 0;
	if (rules_parse(&set, text, err, errlen))
		return -1;
	gfp_snprintf(text_copy, sizeof(text_copy), "%s", text);
	gfp_rules_on = set.n > 0;
	return 0;
}

const char *rules_text(void)
{
	return gfp_rules_on ? text_copy : "";
}

/* ------------------------------------------------------------------------
 * Matching
 * ---------------------------------------------------------------------- */

static const char *module_of(uintptr_t ip)
{
	uintptr_t off;
	const char *name = site_module(ip, &off);
	if (!name)
		return "?";
	return *name ? name : program_invocation_short_name;
}

struct path {
	int n;            /* frames to name, for sym: */
	uintptr_t lib_ip; /* the frame whose module lib: looks at */
};

/* The path matchers of every rule, as a mask: bit i set when rule i has no
 * path matcher or all of them match. */
static uint64_t path_mask(const void *arg)
{
	int n = ((const struct path *)arg)->n;
	uintptr_t lib_ip = ((const struct path *)arg)->lib_ip;
	struct gfp_frame frames[32];
	int nf = 0;
	if (set.need_sym)
		nf = unwind_capture(frames, n < 32 ? n : 32);
	const char *lib = lib_ip ? module_of(lib_ip) : "?";
	uint64_t mask = 0;
	for (int i = 0; i < set.n; i++) {
		bool ok = true;
		for (int k = 0; k < set.rule[i].nm && ok; k++) {
			const struct gfp_matcher *m = &set.rule[i].m[k];
			if (m->kind == GFP_MATCH_LIB) {
				ok = glob_match(m->glob, lib);
			} else if (m->kind == GFP_MATCH_SYM) {
				ok = unwind_any_frame(frames, nf, m->glob, false);
			}
		}
		if (ok)
			mask |= 1ull << i;
	}
	return mask | (1ull << 63); /* never 0: 0 is the cache's "absent" */
}

static uint64_t site_mask(const struct gfp_req *req)
{
	/* The key covers what the rules look at: every frame for sym:, the
	 * first frame outside libc for lib:. */
	uintptr_t ips[32], lib_ip;
	int n = 0;
	uint64_t key;
	if (set.need_sym) {
		n = site_ips(ips, (int)gfp_policy.rules_depth);
		lib_ip = site_first_outside_libc(ips, n);
		key = site_key(ips, n);
	} else {
		lib_ip = site_outside_libc(req->caller);
		key = site_key(&lib_ip, 1);
	}
	struct path path = {n, lib_ip};
	return ipcache_lookup(&cache, key, path_mask, &path);
}

/* The flags of the first rule that matches `req`, or 0. */
gfp_t rules_flags(const struct gfp_req *req)
{
	uint64_t mask = ~0ull;
	bool have_mask = false;
	char name[16] = "";
	for (int i = 0; i < set.n; i++) {
		const struct gfp_rule *r = &set.rule[i];
		bool ok = true;
		for (int k = 0; k < r->nm && ok; k++) {
			const struct gfp_matcher *m = &r->m[k];
			switch (m->kind) {
			case GFP_MATCH_SIZE_GT:
				ok = req->size > m->size;
				break;
			case GFP_MATCH_SIZE_LT:
				ok = req->size < m->size;
				break;
			case GFP_MATCH_THREAD:
				/* Read when a rule needs it, which is only when the
				 * context matters: a rename is seen by the next one. */
				ok = glob_match(m->glob, name[0] ? name : thread_name(name));
				break;
			default:
				break;
			}
		}
		if (ok && r->on_path) {
			if (!have_mask) {
				mask = site_mask(req);
				have_mask = true;
			}
			ok = mask & (1ull << i);
		}
		if (ok)
			return r->flags;
	}
	return 0;
}
