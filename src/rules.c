/*
 * rules.c - GFP_RULES: per-call-site contexts for unmodified programs
 * (SPEC §6).
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
 * when a rule could tell them apart. The cache's read path takes no lock (site.c: struct
 * gfp_ipcache).
 *
 * Nothing here runs per call unless the request's context is needed: under
 * a budget near its watermark, for an injection decision, or in the slow
 * path.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"

#define MAX_RULES 32
#define GLOB_MAX  128

enum m_kind { M_SYM, M_LIB, M_SIZE_GT, M_SIZE_LT, M_THREAD };

struct matcher {
	enum m_kind kind;
	char glob[GLOB_MAX];
	uint64_t size;
};

struct rule {
	struct matcher m[8];
	int nm;
	gfp_t flags;
	bool on_path; /* has sym: or lib: */
};

static struct rule rules[MAX_RULES];
static int nrules;
static bool need_sym; /* some rule looks at function names */
static char text_copy[2048];
bool gfp_rules_on;

static struct gfp_ipcache cache;

/* ------------------------------------------------------------------------
 * Parsing
 * ---------------------------------------------------------------------- */

struct parser {
	const char *s, *p;
	int rule; /* 1-based, for messages */
	char *err;
	size_t errlen;
};

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int fail(struct parser *ps, const char *expected)
{
	int col = (int)(ps->p - ps->s) + 1;
	char at[12 * 4 + 1];
	gfp_quote(at, sizeof(at), ps->p, strnlen(ps->p, 12));
	gfp_snprintf(ps->err, ps->errlen,
	             "GFP_RULES: rule %d, column %d (at '%s'): expected %s (e.g. "
	             "'lib:libfoo.so* & size>64K => NORETRY; sym:png_* => NOFAIL')",
	             ps->rule, col, *ps->p ? at : "the end", expected);
	return -1;
}

static bool starts(const char *p, const char *w)
{
	return strncmp(p, w, strlen(w)) == 0;
}

/* A glob runs to the next '&', '=>' or ';' (or whitespace before them). */
static int parse_glob(struct parser *ps, char *out)
{
	const char *b = ps->p;
	while (*ps->p && *ps->p != '&' && *ps->p != ';' && *ps->p != ' ' && *ps->p != '\t' &&
	       *ps->p != '\n' && !starts(ps->p, "=>"))
		ps->p++;
	size_t n = (size_t)(ps->p - b);
	if (n == 0)
		return fail(ps, "a glob pattern");
	if (n >= GLOB_MAX)
		return ps->p = b, fail(ps, "a glob of at most 127 characters");
	memcpy(out, b, n);
	out[n] = '\0';
	return 0;
}

static int parse_size(struct parser *ps, uint64_t *out)
{
	static const struct gfp_key size_key = {
	    .name = "size", .type = GFP_T_SIZE, .max = INT64_MAX};
	const char *b = ps->p;
	while (*ps->p && *ps->p != '&' && *ps->p != ';' && *ps->p != ' ' && *ps->p != '\t' &&
	       !starts(ps->p, "=>"))
		ps->p++;
	const char *expect;
	if (ps->p == b || config_parse_value(&size_key, b, (size_t)(ps->p - b), out, &expect))
		return ps->p = b, fail(ps, "a size (bytes, or with K, M, G)");
	return 0;
}

static int parse_matcher(struct parser *ps, struct rule *r)
{
	if (r->nm == (int)(sizeof(r->m) / sizeof(r->m[0])))
		return fail(ps, "at most 8 matchers in one rule");
	struct matcher *m = &r->m[r->nm];
	if (starts(ps->p, "sym:")) {
		ps->p += 4;
		m->kind = M_SYM;
		need_sym = r->on_path = true;
		if (parse_glob(ps, m->glob))
			return -1;
	} else if (starts(ps->p, "lib:")) {
		ps->p += 4;
		m->kind = M_LIB;
		r->on_path = true;
		if (parse_glob(ps, m->glob))
			return -1;
	} else if (starts(ps->p, "thread:")) {
		ps->p += 7;
		m->kind = M_THREAD;
		if (parse_glob(ps, m->glob))
			return -1;
	} else if (starts(ps->p, "size>") || starts(ps->p, "size<")) {
		m->kind = ps->p[4] == '>' ? M_SIZE_GT : M_SIZE_LT;
		ps->p += 5;
		if (parse_size(ps, &m->size))
			return -1;
	} else {
		return fail(ps, "a matcher: sym:GLOB, lib:GLOB, thread:GLOB, size>N or size<N");
	}
	r->nm++;
	return 0;
}

static int parse_rule(struct parser *ps, struct rule *r)
{
	for (;;) {
		skip_ws(ps);
		if (parse_matcher(ps, r))
			return -1;
		skip_ws(ps);
		if (*ps->p == '&') {
			ps->p++;
			continue;
		}
		if (starts(ps->p, "=>"))
			break;
		return fail(ps, "'&' and another matcher, or '=>' and the flags");
	}
	ps->p += 2;
	skip_ws(ps);
	/* The flags run to the end of the rule, spaced around '|' as in
	 * GFP_POLICY's default= if the writer likes. */
	const char *b = ps->p, *e;
	while (*ps->p && *ps->p != ';' && *ps->p != '\n')
		ps->p++;
	for (e = ps->p; e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
		;
	const char *bad;
	size_t badlen;
	if (e == b)
		return fail(ps, "flags after '=>' (e.g. NORETRY, NOFAIL|NOFS)");
	int rc = gfp_flags_parse(b, (size_t)(e - b), &r->flags, &bad, &badlen);
	if (rc == -1)
		return ps->p = bad,
		       fail(ps, "a flag name (KERNEL, NOFS, NOIO, NOWAIT, ATOMIC, NORETRY, "
		                "RETRY_MAYFAIL, NOFAIL, NOWARN, HIGH, ...)");
	if (rc == -2)
		return ps->p = b,
		       fail(ps, "at most one base context (KERNEL, NOFS, NOIO, NOWAIT, ATOMIC)");
	r->flags = context_normalize(r->flags);
	skip_ws(ps);
	return 0;
}

int rules_parse(const char *text, char *err, size_t errlen)
{
	struct parser ps = {.s = text, .p = text, .rule = 1, .err = err, .errlen = errlen};
	nrules = 0;
	need_sym = false;
	for (;;) {
		skip_ws(&ps);
		while (*ps.p == ';') {
			ps.p++;
			skip_ws(&ps);
		}
		if (!*ps.p)
			break;
		if (nrules == MAX_RULES)
			return fail(&ps, "at most 32 rules");
		struct rule *r = &rules[nrules];
		memset(r, 0, sizeof(*r));
		if (parse_rule(&ps, r))
			return -1;
		nrules++;
		if (*ps.p && *ps.p != ';')
			return fail(&ps, "';' between rules");
		ps.rule++;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Start-up
 * ---------------------------------------------------------------------- */

int rules_init(const char *text, char *err, size_t errlen)
{
	gfp_rules_on = false;
	if (!text || !*text)
		return 0;
	if (rules_parse(text, err, errlen))
		return -1;
	gfp_snprintf(text_copy, sizeof(text_copy), "%s", text);
	gfp_rules_on = nrules > 0;
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
	if (need_sym)
		nf = unwind_capture(frames, n < 32 ? n : 32);
	const char *lib = lib_ip ? module_of(lib_ip) : "?";
	uint64_t mask = 0;
	for (int i = 0; i < nrules; i++) {
		bool ok = true;
		for (int k = 0; k < rules[i].nm && ok; k++) {
			const struct matcher *m = &rules[i].m[k];
			if (m->kind == M_LIB) {
				ok = glob_match(m->glob, lib);
			} else if (m->kind == M_SYM) {
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
	if (need_sym) {
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
	for (int i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];
		bool ok = true;
		for (int k = 0; k < r->nm && ok; k++) {
			const struct matcher *m = &r->m[k];
			switch (m->kind) {
			case M_SIZE_GT:
				ok = req->size > m->size;
				break;
			case M_SIZE_LT:
				ok = req->size < m->size;
				break;
			case M_THREAD:
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
