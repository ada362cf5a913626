/*
 * config.c - the policy: the key table (keys.def), its typed parser, and the
 * messages for bad input.
 *
 * Pure functions over a `struct gfp_policy`: no globals, no allocation, no
 * exit. init.c decides what an error does (exit 125, or a warning under
 * GFP_STRICT=0); the fuzzer and the unit tests call these directly.
 */
#include <stddef.h>
#include <string.h>

#include "policy.h"

const struct gfp_key gfp_keys[GFP_KEY_COUNT] = {
#define KEY(id, name_, type_, role_, def_, min_, max_, choices_, help_)                            \
	{.name = name_,                                                                            \
	 .type = GFP_T_##type_,                                                                    \
	 .def = def_,                                                                              \
	 .min = min_,                                                                              \
	 .max = max_,                                                                              \
	 .choices = choices_,                                                                      \
	 .help = help_,                                                                            \
	 .offset = offsetof(struct gfp_policy, id),                                                \
	 .role = GFP_ROLE_##role_},
#include "keys.def"
#undef KEY
};

/* Whether pol sets a key that shapes what allocations do, which puts every
 * thread under the policy, so that a request that meets real pressure takes
 * the slow path with the process's settings (a budget and a thread's
 * reserve shape too). */
bool config_shapes(const struct gfp_policy *pol)
{
	for (size_t i = 0; i < GFP_KEY_COUNT; i++)
		if (pol->set[i] &&
		    (gfp_keys[i].role == GFP_ROLE_SHAPE || gfp_keys[i].role == GFP_ROLE_BUDGET ||
		     gfp_keys[i].role == GFP_ROLE_RESERVE))
			return true;
	return false;
}

/* What keys.def cannot say of one key alone: the checks of a policy as a
 * whole, the shim's at start-up, gfp-run's before it runs anything and
 * gfp-ctl set's, in the same words. */
const char *config_contradiction(const struct gfp_policy *p, size_t *drop)
{
	if (p->set[GFP_K_min_free] && p->min_free && (!p->limit || p->min_free > p->limit / 2)) {
		*drop = GFP_K_min_free;
		return p->limit ? "min_free may be at most half of limit (lower min_free or raise "
		                  "limit)"
		                : "min_free needs a limit (set limit=SIZE too)";
	}
	if (p->reserve_thread && !p->limit && !p->reserve_prefault) {
		*drop = GFP_K_reserve_thread;
		return "reserve.thread needs a budget to reserve from (set limit=SIZE) or pages of "
		       "its own (set reserve.prefault=1)";
	}
	if (p->limit_scope == GFP_SCOPE_TREE && !p->limit) {
		*drop = GFP_K_limit_scope;
		return "limit.scope=tree shares a limit with the process's children: set "
		       "limit=SIZE too";
	}
	if (p->limit && p->limit < 64 * 1024) {
		*drop = GFP_K_limit;
		return "limit below 64K cannot hold a process (raise limit)";
	}
	if (p->kswapd && !p->limit) {
		*drop = GFP_K_kswapd;
		return "kswapd wakes at the budget's low watermark: it needs a budget (set "
		       "limit=SIZE or limit=cgroup)";
	}
	if (p->kswapd_psi && !p->kswapd) {
		*drop = GFP_K_kswapd_psi;
		return "kswapd.psi wakes the background reclaim thread: it needs kswapd=1";
	}
	if (p->fail_site.v[0] && p->fail_site_hit == 0) {
		*drop = GFP_K_fail_site;
		return "fail.site.hit=last needs a recording run to count the site's hits: give "
		       "the policy to gfp-run --policy, which makes one, or the hit's number";
	}
	if (p->fail_site_call && !p->fail_site.v[0]) {
		*drop = GFP_K_fail_site_call;
		return "fail.site.call names the call at which fail.site's hit comes: it needs "
		       "fail.site=ID (or use fail.nth=N to fail a call by its number alone)";
	}
	if (p->fail_max && p->fail_min > p->fail_max) {
		*drop = GFP_K_fail_max;
		return "fail.min is above fail.max: no request could be injected (lower fail.min "
		       "or "
		       "raise fail.max)";
	}
	return NULL;
}

static const char *const type_expect[] = {
    [GFP_T_BOOL] = "0 or 1",
    [GFP_T_COUNT] = "a whole number",
    [GFP_T_SIZE] = "a size such as 4096, 64K, 16M or 1G",
    [GFP_T_MS] = "a time such as 20ms or 2s",
    [GFP_T_PROB] = "a probability from 0 to 1, such as 0.01 or 1%",
    [GFP_T_ENUM] = "one of the listed choices",
    [GFP_T_FLAGS] = "flags such as KERNEL, NOFS|NOFAIL or NORETRY",
    [GFP_T_STR] = "a text of at most 127 characters",
};

/* ------------------------------------------------------------------------
 * Values
 * ---------------------------------------------------------------------- */

/* A decimal number with an optional fraction; *end gets the first byte after
 * it. Returns false when there are no digits or it overflows. */
static bool parse_decimal(const char *s, size_t len, size_t *end, uint64_t *whole, double *frac)
{
	size_t i = 0;
	uint64_t w = 0;
	bool digits = false;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		unsigned d = (unsigned)(s[i] - '0');
		if (w > (UINT64_MAX - d) / 10)
			return false;
		w = w * 10 + d;
		i++;
		digits = true;
	}
	double f = 0, scale = 0.1;
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9') {
			f += (s[i] - '0') * scale;
			scale /= 10;
			i++;
			digits = true;
		}
	}
	*end = i;
	*whole = w;
	*frac = f;
	return digits;
}

static bool parse_bool(const char *v, size_t n, bool *out)
{
	static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false",
	                                                                            "no", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (gfp_strcasecmp_n(v, yes[i], n) == 0)
			return *out = true, true;
		if (gfp_strcasecmp_n(v, no[i], n) == 0)
			return *out = false, true;
	}
	return false;
}

static bool parse_count(const char *v, size_t n, int64_t *out)
{
	bool neg = n && v[0] == '-';
	size_t end;
	uint64_t w;
	double f;
	if (!parse_decimal(v + neg, n - neg, &end, &w, &f) || end != n - neg || f != 0 ||
	    w > (uint64_t)INT64_MAX || memchr(v, '.', n))
		return false;
	*out = neg ? -(int64_t)w : (int64_t)w;
	return true;
}

static bool parse_size(const char *v, size_t n, uint64_t *out)
{
	size_t end;
	uint64_t w;
	double f;
	if (!parse_decimal(v, n, &end, &w, &f))
		return false;
	uint64_t mul = 1;
	const char *u = v + end;
	size_t ul = n - end;
	if (ul) {
		switch (u[0] | 0x20) {
		case 'b':
			mul = 1;
			break;
		case 'k':
			mul = 1ULL << 10;
			break;
		case 'm':
			mul = 1ULL << 20;
			break;
		case 'g':
			mul = 1ULL << 30;
			break;
		case 't':
			mul = 1ULL << 40;
			break;
		default:
			return false;
		}
		/* K, KB, KiB all mean 1024. */
		if (!(ul == 1 || (ul == 2 && (u[1] | 0x20) == 'b' && mul > 1) ||
		      (ul == 3 && (u[1] | 0x20) == 'i' && (u[2] | 0x20) == 'b' && mul > 1)))
			return false;
	}
	if (f != 0 && mul == 1)
		return false; /* 1.5 bytes */
	if (w > UINT64_MAX / mul)
		return false;
	*out = w * mul + (uint64_t)(f * (double)mul);
	return true;
}

static bool parse_ms(const char *v, size_t n, uint64_t *out)
{
	size_t end;
	uint64_t w;
	double f;
	if (!parse_decimal(v, n, &end, &w, &f))
		return false;
	const char *u = v + end;
	size_t ul = n - end;
	double ms;
	if (ul == 0 || gfp_strcasecmp_n(u, "ms", ul) == 0)
		ms = (double)w + f;
	else if (gfp_strcasecmp_n(u, "s", ul) == 0)
		ms = ((double)w + f) * 1000.0;
	else
		return false;
	if (ms > 1e15)
		return false;
	*out = (uint64_t)(ms + 0.5);
	return true;
}

static bool parse_prob(const char *v, size_t n, double *out)
{
	size_t end;
	uint64_t w;
	double f;
	if (!parse_decimal(v, n, &end, &w, &f) || w > 100)
		return false;
	double p = (double)w + f;
	if (end == n - 1 && v[end] == '%')
		p /= 100.0;
	else if (end != n)
		return false;
	if (p > 1.0)
		return false;
	*out = p;
	return true;
}

static bool parse_enum(const char *choices, const char *v, size_t n, unsigned *out)
{
	unsigned idx = 0;
	for (const char *c = choices; *c; idx++) {
		const char *bar = strchr(c, '|');
		size_t cl = bar ? (size_t)(bar - c) : strlen(c);
		bool same = cl == n;
		for (size_t i = 0; same && i < n; i++)
			same = (v[i] | 0x20) == (c[i] | 0x20);
		if (same) {
			*out = idx;
			return true;
		}
		c += cl + (bar != NULL);
	}
	return false;
}

static bool str_is_hex(const char *s)
{
	if (!*s)
		return true; /* empty: off */
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
		      (s[n] >= 'A' && s[n] <= 'F')))
			return false;
	return n == 16;
}

int config_parse_value(const struct gfp_key *k, const char *v, size_t n, void *out,
                       const char **expect)
{
	*expect = k->type == GFP_T_STR && k->max == GFP_STR_HEX
	              ? "a call-site id of 16 hex digits, as records and gfp-sweep print it"
	              : type_expect[k->type];
	switch (k->type) {
	case GFP_T_BOOL:
		return parse_bool(v, n, out) ? 0 : -1;
	case GFP_T_COUNT: {
		int64_t x;
		unsigned word;
		if (k->choices[0] && parse_enum(k->choices, v, n, &word))
			x = 0; /* fail.site.hit=last */
		else if (!parse_count(v, n, &x) || x < k->min || x > k->max)
			return -1;
		*(int64_t *)out = x;
		return 0;
	}
	case GFP_T_SIZE:
	case GFP_T_MS: {
		uint64_t x;
		unsigned word;
		if (k->type == GFP_T_SIZE && k->choices && k->choices[0] &&
		    parse_enum(k->choices, v, n, &word)) {
			*(uint64_t *)out = GFP_SIZE_WORD; /* limit=cgroup */
			return 0;
		}
		bool ok = k->type == GFP_T_SIZE ? parse_size(v, n, &x) : parse_ms(v, n, &x);
		if (!ok || x < (uint64_t)k->min || x > (uint64_t)k->max)
			return -1;
		*(uint64_t *)out = x;
		return 0;
	}
	case GFP_T_PROB:
		return parse_prob(v, n, out) ? 0 : -1;
	case GFP_T_ENUM:
		return parse_enum(k->choices, v, n, out) ? 0 : -1;
	case GFP_T_FLAGS: {
		const char *bad;
		size_t badlen;
		return gfp_flags_parse(v, n, out, &bad, &badlen) == 0 ? 0 : -1;
	}
	case GFP_T_STR: {
		struct gfp_str *str = out;
		if (n >= sizeof(str->v))
			return -1;
		memset(str->v, 0, sizeof(str->v));
		memcpy(str->v, v, n);
		str->v[n] = '\0';
		/* A checked string: min is the shortest length, max a class. */
		return k->max == GFP_STR_HEX && !str_is_hex(str->v) ? -1 : 0;
	}
	}
	return -1;
}

void config_reset_key(struct gfp_policy *pol, size_t i)
{
	const struct gfp_key *k = &gfp_keys[i];
	const char *expect;
	/* Every default parses: tests/unit/keys.c checks each row. */
	(void)config_parse_value(k, k->def, strlen(k->def), (char *)pol + k->offset, &expect);
	pol->set[i] = false;
}

void config_defaults(struct gfp_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	for (size_t i = 0; i < GFP_KEY_COUNT; i++)
		config_reset_key(pol, i);
}

const char *config_did_you_mean(const char *key, size_t len)
{
	const char *best = NULL;
	unsigned best_d = ~0u;
	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		const char *name = gfp_keys[i].name;
		unsigned d = gfp_edit_distance(key, len, name, strlen(name));
		if (d < best_d) {
			best_d = d;
			best = name;
		}
	}
	/* Two edits for ordinary names, fewer for very short ones. */
	unsigned limit = len <= 3 ? 1 : len <= 5 ? 2 : 3;
	return best_d <= limit ? best : NULL;
}

static const struct gfp_key *find_key(const char *k, size_t n)
{
	for (size_t i = 0; i < GFP_KEY_COUNT; i++)
		if (strlen(gfp_keys[i].name) == n && memcmp(gfp_keys[i].name, k, n) == 0)
			return &gfp_keys[i];
	return NULL;
}

/* ------------------------------------------------------------------------
 * Pairs
 * ---------------------------------------------------------------------- */

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t' || **s == '\r'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

static void fail(struct gfp_cfg_err *err, void (*report)(const char *), const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(struct gfp_cfg_err *err, void (*report)(const char *), const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gfp_vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->count++;
	if (report)
		report(err->msg);
}

/* Messages quote at most this much of what the user wrote (gfp_quote: a
 * control byte shows as \xNN, it does not act on the terminal). */
#define QUOTE 64

static const char *quote(char out[QUOTE * 4 + 1], const char *s, size_t n)
{
	return gfp_quote(out, QUOTE * 4 + 1, s, n < QUOTE ? n : QUOTE);
}

static void parse_pair(struct gfp_policy *pol, const char *src, unsigned line, const char *p,
                       size_t n, void (*report)(const char *), struct gfp_cfg_err *err)
{
	char where[160];
	if (line)
		gfp_snprintf(where, sizeof(where), "%s:%u", src, line);
	else
		gfp_snprintf(where, sizeof(where), "%s", src);

	char q[QUOTE * 4 + 1];
	const char *eq = memchr(p, '=', n);
	if (!eq) {
		fail(err, report, "%s: '%s' is not a key=value pair (write e.g. 'stats=totals')",
		     where, quote(q, p, n));
		return;
	}
	const char *key = p, *val = eq + 1;
	size_t klen = (size_t)(eq - p), vlen = n - klen - 1;
	trim(&key, &klen);
	trim(&val, &vlen);
	const struct gfp_key *k = find_key(key, klen);
	if (!k) {
		const char *near = config_did_you_mean(key, klen);
		if (near)
			fail(err, report, "%s: unknown key '%s' (did you mean '%s'?)", where,
			     quote(q, key, klen), near);
		else
			fail(err, report,
			     "%s: unknown key '%s' (gfp-run --list-keys lists the keys)", where,
			     quote(q, key, klen));
		return;
	}
	const char *expect;
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double d;
		unsigned e;
		struct gfp_str str;
	} v;
	if (config_parse_value(k, val, vlen, &v, &expect) != 0) {
		char range[96] = "";
		if (k->type == GFP_T_ENUM)
			gfp_snprintf(range, sizeof(range), ": %s", k->choices);
		else if (k->type == GFP_T_COUNT || k->type == GFP_T_SIZE || k->type == GFP_T_MS)
			gfp_snprintf(range, sizeof(range), " from %lld to %lld%s%s",
			             (long long)k->min, (long long)k->max,
			             k->choices[0] ? ", or " : "", k->choices);
		fail(err, report, "%s: bad value '%s' for key '%s' (expected %s%s)", where,
		     quote(q, val, vlen), k->name, expect, range);
		return;
	}
	size_t i = (size_t)(k - gfp_keys);
	void *dst = (char *)pol + k->offset;
	switch (k->type) {
	case GFP_T_BOOL:
		*(bool *)dst = v.b;
		break;
	case GFP_T_COUNT:
		*(int64_t *)dst = v.i;
		break;
	case GFP_T_SIZE:
	case GFP_T_MS:
		*(uint64_t *)dst = v.u;
		break;
	case GFP_T_PROB:
		*(double *)dst = v.d;
		break;
	case GFP_T_ENUM:
		*(unsigned *)dst = v.e;
		break;
	case GFP_T_FLAGS:
		*(gfp_t *)dst = (gfp_t)v.e;
		break;
	case GFP_T_STR:
		*(struct gfp_str *)dst = v.str;
		break;
	}
	pol->set[i] = true;
}

int config_parse(struct gfp_policy *pol, const char *src, const char *text, size_t len, bool file,
                 void (*report)(const char *msg), struct gfp_cfg_err *err)
{
	int before = err->count;
	unsigned line = file ? 1 : 0;
	size_t i = 0;
	while (i < len) {
		size_t start = i;
		bool comment = false;
		while (i < len && text[i] != '\n' && text[i] != '\0') {
			if (file && text[i] == '#')
				comment = true;
			if (!file && (text[i] == ';' || text[i] == ','))
				break;
			if (file && !comment && (text[i] == ';' || text[i] == ','))
				break;
			i++;
		}
		const char *p = text + start;
		size_t n = i - start;
		if (file) {
			const char *hash = memchr(p, '#', n);
			if (hash)
				n = (size_t)(hash - p);
		}
		trim(&p, &n);
		if (n)
			parse_pair(pol, src, line, p, n, report, err);
		if (i < len && text[i] == '\n' && file)
			line++;
		if (i < len && text[i] == '\0')
			break;
		i++;
	}
	return err->count - before;
}

void config_format_value(const struct gfp_key *k, const struct gfp_policy *pol, struct gfp_buf *b)
{
	const void *v = (const char *)pol + k->offset;
	switch (k->type) {
	case GFP_T_BOOL:
		gfp_buf_printf(b, "%d", *(const bool *)v);
		break;
	case GFP_T_COUNT:
		if (k->choices[0] && *(const int64_t *)v == 0)
			gfp_buf_printf(b, "%s", k->choices);
		else
			gfp_buf_printf(b, "%lld", (long long)*(const int64_t *)v);
		break;
	case GFP_T_SIZE:
		if (k->choices && k->choices[0] && *(const uint64_t *)v == GFP_SIZE_WORD)
			gfp_buf_printf(b, "%s", k->choices);
		else
			gfp_buf_printf(b, "%llu", (unsigned long long)*(const uint64_t *)v);
		break;
	case GFP_T_MS:
		gfp_buf_printf(b, "%llums", (unsigned long long)*(const uint64_t *)v);
		break;
	case GFP_T_PROB: {
		/* Up to 18 decimals, the trailing zeros dropped, so that what
		 * gfp-ctl get prints sets the probability again (to those
		 * decimals: the parser's sum may differ in the last bits); one
		 * too small for them prints as the smallest, not as 0 (off). */
		double p = *(const double *)v;
		uint64_t scaled = (uint64_t)(p * 1e18 + 0.5);
		if (!scaled && p > 0)
			scaled = 1;
		char frac[20];
		gfp_snprintf(frac, sizeof(frac), "%018llu",
		             (unsigned long long)(scaled % 1000000000000000000u));
		size_t n = strlen(frac);
		while (n && frac[n - 1] == '0')
			n--;
		gfp_buf_printf(b, "%llu%s%.*s", (unsigned long long)(scaled / 1000000000000000000u),
		               n ? "." : "", (int)n, frac);
		break;
	}
	case GFP_T_ENUM: {
		unsigned idx = *(const unsigned *)v;
		const char *c = k->choices;
		for (unsigned i = 0; i < idx && c; i++) {
			c = strchr(c, '|');
			if (c)
				c++;
		}
		const char *bar = c ? strchr(c, '|') : NULL;
		gfp_buf_printf(b, "%.*s", c ? (int)(bar ? (size_t)(bar - c) : strlen(c)) : 0,
		               c ? c : "");
		break;
	}
	case GFP_T_FLAGS: {
		char names[128];
		gfp_flags_name(*(const gfp_t *)v, names, sizeof(names));
		gfp_buf_printf(b, "%s", names);
		break;
	}
	case GFP_T_STR:
		gfp_buf_printf(b, "%s", ((const struct gfp_str *)v)->v);
		break;
	}
}
