/*
 * allocinfo.c - --allocinfo: a report's allocation sites (stats=sites) in the
 * layout of the kernel's /proc/allocinfo, format 1.0 (doc/statistics.md): a
 * version line, a header, then per site its live bytes, live calls and
 * "file:line [module] func:name", by live bytes (--sort: peak bytes, live calls). A
 * report that has each site's peak bytes gets them as a column after the
 * live bytes, which the kernel does not keep; a site whose live bytes are
 * mappings the program made itself gets "mapped:yes" after its tag info,
 * and a "#" line after the rows sums those sites up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"
#include "frame.h"
#include "text.h"
#include "report.h"

/* The allocation's own line and the function it is written in, inlined or
 * not, as the kernel's codetag names the place alloc_hooks() expands. */
struct site_row {
	struct rec_frame fr;
	long long live_bytes, peak_bytes; /* peak: -1 when the row has none */
	unsigned long long live_calls;
	bool mapped; /* its live bytes are mappings the program made itself */
	size_t order;
};

static enum ai_sort sort_by;

/* Biggest first, by the chosen column, then in the report's order. */
static int site_row_cmp(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;
	long long kx = sort_by == SORT_PEAK ? x->peak_bytes : x->live_bytes,
	          ky = sort_by == SORT_PEAK ? y->peak_bytes : y->live_bytes;
	if (sort_by == SORT_CALLS && x->live_calls != y->live_calls)
		return x->live_calls > y->live_calls ? -1 : 1;
	if (sort_by != SORT_CALLS && kx != ky)
		return kx > ky ? -1 : 1;
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
static void print_site_row(const struct site_row *r, bool peak)
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
	if (peak)
		printf("%12lli %12lli %8llu ", r->live_bytes, r->peak_bytes, r->live_calls);
	else
		printf("%12lli %8llu ", r->live_bytes, r->live_calls);
	/* A name with a newline or a tab (the report is a file anyone may
	 * write) must not split the row: one line per site, as the kernel's. */
	for (const char *p = buf; *p; p++) {
		if (*p == '\n' || *p == '\t')
			printf("\\x%02x", (unsigned char)*p);
		else
			putchar(*p);
	}
	/* A key:value after the tag info (the kernel ends each line with a
	 * space, too): readers of the kernel's layout still find their fields. */
	printf("%s \n", r->mapped ? " mapped:yes" : "");
}

__extension__ typedef __int128 wide;
__extension__ typedef unsigned __int128 uwide;

/* v in decimal into buf[48], returned from where it starts: the live bytes
 * of many rows, each a long long, may sum past one. */
static const char *wide_str(wide v, char *buf)
{
	char *p = buf + 47;
	*p = '\0';
	uwide u = v < 0 ? -(uwide)v : (uwide)v;
	do {
		*--p = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	return p;
}

/* After rows[0..shown) of n: the sites marked mapped:yes, their live bytes
 * and how many of them --top left out, over all n rows, so that --top does
 * not change the sums. A "#" line, as the header: readers of the kernel's
 * layout skip it. */
static void print_mapped_summary(const struct site_row *rows, size_t n, size_t shown)
{
	size_t sites = 0, hidden = 0;
	wide live = 0;
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].mapped)
			continue;
		sites++;
		hidden += i >= shown;
		live += rows[i].live_bytes;
	}
	if (!sites)
		return;
	char num[48];
	printf("# mapped:yes sites: %zu, live bytes: %s", sites, wide_str(live, num));
	if (hidden)
		printf(", not shown by --top: %zu", hidden);
	printf("\n");
}

/* The rows of report rep (its "allocinfo" ai) in *out; false after an
 * error. *peak: every row has "peak_bytes" (a shim before it wrote none). */
static bool read_rows(const char *path, const struct jval *rep, const struct jval *ai,
                      struct site_row **out, bool *peak)
{
	struct site_row *rows = xrealloc(NULL, (ai->n + 1) * sizeof(*rows));
	*peak = ai->n > 0;
	for (size_t i = 0; i < ai->n; i++) {
		const struct jval *o = &ai->v[i];
		struct site_row *r = &rows[i];
		*r = (struct site_row){
		    .peak_bytes = -1, .mapped = json_bool(o, "mapped"), .order = i};
		unsigned long long unused = 0;
		if (!rec_frame_of(o, rep, &r->fr) ||
		    !integer(json_get(o, "live_bytes"), true, &r->live_bytes, &unused) ||
		    !integer(json_get(o, "live_calls"), false, NULL, &r->live_calls)) {
			error("%s: allocinfo row %zu lacks \"module\", \"offset\" or an integer "
			      "\"live_bytes\" and \"live_calls\"",
			      path, i + 1);
			free(rows);
			return false;
		}
		if (!integer(json_get(o, "peak_bytes"), true, &r->peak_bytes, &unused))
			*peak = false;
	}
	*out = rows;
	return true;
}

static bool print_allocinfo(const char *path, const struct jval *rep, const struct jval *ai,
                            long top, enum ai_sort sort)
{
	struct site_row *rows;
	bool peak;
	if (!read_rows(path, rep, ai, &rows, &peak))
		return false;
	if (sort == SORT_PEAK && !peak) {
		error("%s: --sort peak, but its allocinfo rows have no \"peak_bytes\" (written by "
		      "an older gfpshim); --sort live or calls",
		      path);
		free(rows);
		return false;
	}
	sort_by = sort;
	qsort(rows, ai->n, sizeof(*rows), site_row_cmp);
	printf("allocinfo - version: 1.0\n");
	printf(peak ? "#     <size>       <peak>  <calls> <tag info>\n"
	            : "#     <size>  <calls> <tag info>\n");
	size_t n = top > 0 && (size_t)top < ai->n ? (size_t)top : ai->n;
	for (size_t i = 0; i < n; i++)
		print_site_row(&rows[i], peak);
	print_mapped_summary(rows, ai->n, n);
	free(rows);
	return true;
}

bool allocinfo_show(const char *path, long top, enum ai_sort sort)
{
	size_t len = 0;
	char *text = infile_read(path, &len);
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
	if (print_kind(&v) != K_REPORT) {
		error("%s is not a GFP_REPORT (\"totals\", \"entries\"); --allocinfo reads the "
		      "report of a stats=sites run",
		      path);
	} else if (!ai || ai->type != J_ARR) {
		const char *stats = json_str(json_get(&v, "policy"), "stats");
		error("%s has no \"allocinfo\": the process ran with stats=%s; per-site "
		      "statistics need stats=sites (GFP_POLICY=stats=sites)",
		      path, stats ? stats : "?");
	} else {
		frames_set_dirs(NULL);
		ok = print_allocinfo(path, &v, ai, top, sort);
	}
	json_free(&v);
	free(text);
	fflush(stdout);
	return ok;
}
