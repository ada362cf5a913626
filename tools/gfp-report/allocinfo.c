/*
 * allocinfo.c - --allocinfo: a report's allocation sites (stats=sites) in the
 * layout of /proc/allocinfo, format 1.0 (kernel-semantics.md §10): a version
 * line, a header, then per site its live bytes, live calls and "file:line
 * [module] func:name", by live bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "text.h"
#include "report.h"

/* The allocation's own line and the function it is written in, inlined or
 * not, as the kernel's codetag names the place alloc_hooks() expands. */
struct site_row {
	struct rec_frame fr;
	long long live_bytes;
	unsigned long long live_calls;
	size_t order;
};

static int site_row_cmp(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool integer(const struct jval *v, bool is_signed, long long *s, unsigned long long *u)
{
	if (!v || v->type != J_NUM)
		return false;
	char *end = NULL;
	errno = 0;
	if (is_signed)
		*s = strtoll(v->s, &end, 10);
	else
		*u = v->s[0] == '-' ? 0 : strtoull(v->s, &end, 10);
	return end && end != v->s && !*end && errno == 0;
}

/* One site: "file:line [module] func:name" where the module's line table
 * knows the return address (looked up one byte back, in the call), else
 * "module+offset [module] func:name" with the symbol table's or the
 * recorded name. */
static void print_site_row(const struct site_row *r)
{
	char buf[1024];
	size_t len = 0;
	buf[0] = '\0';
	char *end = NULL;
	errno = 0;
	unsigned long long off = strtoull(r->fr.offset, &end, 0);
	struct sym_module *m = NULL;
	if (end != r->fr.offset && !*end && errno == 0)
		m = frame_module(r->fr.module, r->fr.path, r->fr.build_id);
	char name[256] = "?";
	size_t nlen = 0;
	if (m && !sym_tag(m, off, true, r->fr.module, buf, sizeof(buf), &len) &&
	    sym_name(m, off, true, name, sizeof(name), &nlen))
		name[strcspn(name, "+")] = '\0';
	else if (!len && r->fr.symbol && *r->fr.symbol)
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(r->fr.symbol, "+"), r->fr.symbol);
	if (!len)
		snprintf(buf, sizeof(buf), "%s+%s [%s] func:%s", r->fr.module, r->fr.offset,
		         r->fr.module, name);
	/* The kernel ends each line with a space, too. */
	printf("%12lli %8llu %s \n", r->live_bytes, r->live_calls, buf);
}

static bool print_allocinfo(const char *path, const struct jval *rep, const struct jval *ai,
                            long top)
{
	struct site_row *rows = xrealloc(NULL, (ai->n + 1) * sizeof(*rows));
	for (size_t i = 0; i < ai->n; i++) {
		const struct jval *o = &ai->v[i];
		struct site_row *r = &rows[i];
		*r = (struct site_row){.order = i};
		unsigned long long unused = 0;
		long long unused_s = 0;
		if (!rec_frame_of(o, rep, &r->fr) ||
		    !integer(json_get(o, "live_bytes"), true, &r->live_bytes, &unused) ||
		    !integer(json_get(o, "live_calls"), false, &unused_s, &r->live_calls)) {
			error("%s: allocinfo row %zu lacks \"module\", \"offset\" or an integer "
			      "\"live_bytes\" and \"live_calls\"",
			      path, i + 1);
			free(rows);
			return false;
		}
	}
	qsort(rows, ai->n, sizeof(*rows), site_row_cmp);
	printf("allocinfo - version: 1.0\n");
	printf("#     <size>  <calls> <tag info>\n");
	size_t n = top > 0 && (size_t)top < ai->n ? (size_t)top : ai->n;
	for (size_t i = 0; i < n; i++)
		print_site_row(&rows[i]);
	free(rows);
	return true;
}

bool show_allocinfo(const char *path, long top)
{
	size_t len = 0;
	char *text = text_slurp(path, &len);
	if (!text) {
		error("cannot read %s: %s", path, strerror(errno));
		return false;
	}
	struct jval v;
	char err[256];
	if (!json_parse(text, len, 1, &v, err, sizeof(err))) {
		error("%s: not JSON (%s); --allocinfo reads a GFP_REPORT written with stats=sites",
		      path, err);
		free(text);
		return false;
	}
	bool ok = false;
	const struct jval *ai = json_get(&v, "allocinfo");
	if (kind_of(&v) != K_REPORT) {
		error("%s is not a GFP_REPORT (\"totals\", \"entries\"); --allocinfo reads the "
		      "report of a stats=sites run",
		      path);
	} else if (!ai || ai->type != J_ARR) {
		const char *stats = json_str(json_get(&v, "policy"), "stats");
		error("%s has no \"allocinfo\": the process ran with stats=%s; per-site "
		      "statistics need stats=sites (GFP_POLICY=stats=sites)",
		      path, stats ? stats : "?");
	} else {
		set_dirs(NULL);
		ok = print_allocinfo(path, &v, ai, top);
	}
	json_free(&v);
	free(text);
	fflush(stdout);
	return ok;
}
