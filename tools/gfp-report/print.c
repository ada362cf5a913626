/*
 * print.c - printing a file by its kind, told from its keys: a GFP_REPORT
 * as tables, a GFP_RECORD file as one block per event, a gfp-sweep result
 * as gfp-sweep printed it (results.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"
#include "report.h"

/* ------------------------------------------------------------------------
 * GFP_REPORT: a table of entry points, and with stats=paths one of call
 * paths (the sites gfp-sweep fails, site.depth frames deep)
 * ---------------------------------------------------------------------- */

struct row {
	const char *name;
	const struct jval *obj;
	double key;
	size_t order;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Columns are every scalar field the rows have, in the order first seen, so
 * that fields a newer shim adds show up without a change here. */
static void print_table(const char *first, struct row *rows, size_t nrows, const char *sort_key,
                        const struct jval *total, const char *skip)
{
	const char *cols[32];
	size_t ncols = 0, width[33];
	width[0] = strlen(first);
	for (size_t r = 0; r < nrows; r++) {
		size_t l = strlen(rows[r].name);
		if (l > width[0])
			width[0] = l;
		const struct jval *o = rows[r].obj;
		for (size_t i = 0; o && o->type == J_OBJ && i < o->n; i++) {
			if (!json_text(&o->v[i]) || (skip && strcmp(o->k[i], skip) == 0))
				continue;
			size_t c = 0;
			while (c < ncols && strcmp(cols[c], o->k[i]) != 0)
				c++;
			if (c == ncols) {
				if (ncols == sizeof(cols) / sizeof(cols[0]))
					continue;
				cols[ncols] = o->k[i];
				width[++ncols] = strlen(o->k[i]);
			}
		}
	}
	for (size_t r = 0; r < nrows; r++)
		rows[r].key = json_num(rows[r].obj, sort_key, &rows[r].key) ? rows[r].key : -1;
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	for (size_t c = 0; c < ncols; c++)
		for (size_t r = 0; r <= nrows; r++) {
			const struct jval *o = r < nrows ? rows[r].obj : total;
			const char *v = json_text(json_get(o, cols[c]));
			if (v && strlen(v) > width[c + 1])
				width[c + 1] = strlen(v);
		}
	printf("  %-*s", (int)width[0], first);
	for (size_t c = 0; c < ncols; c++)
		printf("  %*s", (int)width[c + 1], cols[c]);
	printf("\n");
	for (size_t r = 0; r <= nrows; r++) {
		const struct jval *o = r < nrows ? rows[r].obj : total;
		if (r == nrows && !total)
			break;
		printf("  %-*s", (int)width[0], r < nrows ? rows[r].name : "(total)");
		for (size_t c = 0; c < ncols; c++) {
			const char *v = json_text(json_get(o, cols[c]));
			printf("  %*s", (int)width[c + 1], v ? v : "-");
		}
		printf("\n");
	}
}

/* What the budget met and what the program mapped itself, under a limit
 * (and mapped under stats too): tables of every number the shim wrote. */
static void print_memory(const struct jval *rep)
{
	struct row rows[2];
	size_t n = 0;
	const struct jval *ev = json_get(rep, "memory_events"),
	                  *tree = json_get(rep, "tree_memory_events");
	if (ev && ev->type == J_OBJ)
		rows[n++] = (struct row){"process", ev, 0, 0};
	if (tree && tree->type == J_OBJ)
		rows[n++] = (struct row){"tree", tree, 0, 1};
	if (n) {
		printf("\nmemory events (as a cgroup's memory.events counts them):\n");
		print_table("of", rows, n, "", NULL, NULL);
	}
	const struct jval *high = json_get(rep, "memory_high");
	double sleeps = 0;
	if (json_num(high, "sleeps", &sleeps) && sleeps > 0) {
		printf("\npenalties slept past memory.high:\n");
		rows[0] = (struct row){"process", high, 0, 0};
		print_table("of", rows, 1, "", NULL, NULL);
	}
	const struct jval *mapped = json_get(rep, "mapped");
	if (mapped && mapped->type == J_OBJ) {
		printf("\nmemory the program mapped itself (a part of the live bytes):\n");
		rows[0] = (struct row){"mapped", mapped, 0, 0};
		print_table("of", rows, 1, "", NULL, NULL);
	}
}

static void print_report(const char *path, const struct jval *rep)
{
	const struct jval *policy = json_get(rep, "policy");
	const char *stats = json_str(policy, "stats");
	const char *pid = json_text(json_get(rep, "pid"));
	printf("%s: GFP_REPORT of pid %s (gfpshim %s), stats=%s\n", path, pid ? pid : "?",
	       json_str(rep, "gfpshim") ? json_str(rep, "gfpshim") : "?", stats ? stats : "?");
	const struct jval *entries = json_get(rep, "entries");
	const struct jval *totals = json_get(rep, "totals");
	size_t n = entries && entries->type == J_OBJ ? entries->n : 0;
	struct row *rows = xrealloc(NULL, (n + 1) * sizeof(*rows));
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct row){entries->k[i], &entries->v[i], 0, i};
	printf("\nentry points by calls:\n");
	if (n || totals)
		print_table("entry", rows, n, "calls", totals, NULL);
	else
		printf("  (none recorded)\n");
	free(rows);

	print_memory(rep);
	const struct jval *ai = json_get(rep, "allocinfo");
	if (ai && ai->type == J_ARR) {
		printf("\n%zu allocation sites with statistics: gfp-report --allocinfo %s prints "
		       "them\n",
		       ai->n, path);
		size_t maps = 0;
		double live = 0, v;
		for (size_t i = 0; i < ai->n; i++)
			if (json_bool(&ai->v[i], "mapped")) {
				maps++;
				live += json_num(&ai->v[i], "live_bytes", &v) ? v : 0;
			}
		if (maps)
			printf("(%zu of them mapped memory themselves, %.0f bytes live: marked "
			       "mapped:yes)\n",
			       maps, live);
	}
	const struct jval *sites = json_get(rep, "sites");
	if (!sites || sites->type != J_ARR)
		return;
	const char *elig = json_text(json_get(rep, "eligible_calls"));
	printf("\ncall paths by hits (%zu paths, %s eligible calls):\n", sites->n,
	       elig ? elig : "?");
	rows = xrealloc(NULL, (sites->n + 1) * sizeof(*rows));
	size_t nrows = 0;
	for (size_t i = 0; i < sites->n; i++) {
		const char *id = json_str(&sites->v[i], "site");
		if (id)
			rows[nrows++] = (struct row){id, &sites->v[i], 0, i};
	}
	bool by_hits = sites->n && json_get(&sites->v[0], "hits");
	print_table("site", rows, nrows, by_hits ? "hits" : "calls", NULL, "site");
	/* A future shim may name each site's frames: show them too. */
	for (size_t r = 0; r < nrows; r++)
		if (json_get(rows[r].obj, "frames")) {
			printf("  %s:\n", rows[r].name);
			frames_print_json(rows[r].obj, false);
		}
	free(rows);
	double overflow = 0;
	if (json_num(rep, "sites_overflow", &overflow) && overflow > 0)
		printf("  (%s calls came from sites past the end of the shim's site table)\n",
		       json_text(json_get(rep, "sites_overflow")));
}

/* ------------------------------------------------------------------------
 * Records: one block per event, its fields on one line, then its frames
 * ---------------------------------------------------------------------- */

static void print_record(const struct jval *r)
{
	const char *ev = json_str(r, "event");
	printf("%s", ev);
	for (size_t i = 0; i < r->n; i++) {
		const char *v = json_text(&r->v[i]);
		if (v && strcmp(r->k[i], "event") != 0)
			printf(" %s %s", r->k[i], *v ? v : "\"\"");
	}
	printf("\n");
	/* Only a crash record starts at the interrupted instruction; every
	 * other record starts at the return address into malloc's caller. */
	frames_print_json(r, strcmp(ev, "crash") == 0);
}

/* ------------------------------------------------------------------------
 * Reading a file and telling its kind
 * ---------------------------------------------------------------------- */

enum kind print_kind(const struct jval *v)
{
	if (!v || v->type != J_OBJ)
		return K_NONE;
	if (json_get(v, "gfp_sweep"))
		return K_SWEEP;
	if (json_get(v, "event"))
		return K_RECORD;
	if (json_get(v, "entries") || json_get(v, "totals"))
		return K_REPORT;
	return K_NONE;
}

static const char what_kinds[] = "a GFP_REPORT (\"totals\", \"entries\"), a GFP_RECORD file "
                                 "(lines with \"event\") or a gfp-sweep --json result "
                                 "(\"gfp_sweep\")";

/* Records are one object per line: each is read alone, so a line cut short
 * by a killed process spoils only itself. */
static bool show_records(const char *path, const char *text, size_t len)
{
	bool ok = true, any = false;
	int lineno = 0;
	for (const char *line = text; line < text + len;) {
		const char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t l = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		lineno++;
		if (strspn(line, " \t\r") < l) {
			struct jval v;
			char err[256];
			if (!json_parse(line, l, lineno, &v, err, sizeof(err))) {
				error("%s: %s", path, err);
				ok = false;
			} else if (print_kind(&v) != K_RECORD || !json_str(&v, "event")) {
				error("%s: line %d is not a record (no \"event\")", path, lineno);
				ok = false;
			} else {
				if (!any)
					printf("%s: records\n", path);
				printf("\n");
				print_record(&v);
				any = true;
			}
			json_free(&v);
		}
		line = nl ? nl + 1 : text + len;
	}
	return ok;
}

bool print_file(const char *path)
{
	size_t len = 0;
	char *text = infile_read(path, &len);
	if (!text) {
		error("cannot read %s: %s", path, strerror(errno));
		return false;
	}
	bool ok = true;
	struct jval v;
	char err[256];
	if (strspn(text, " \t\r\n") == len) {
		error("%s is empty: expected %s", path, what_kinds);
		ok = false;
	} else if (json_parse(text, len, 1, &v, err, sizeof(err))) {
		enum kind k = print_kind(&v);
		const struct jval *prog = json_get(&v, "program");
		frames_set_dirs(prog && prog->type == J_ARR && prog->n ? json_text(&prog->v[0])
		                                                       : NULL);
		if (k == K_REPORT)
			print_report(path, &v);
		else if (k == K_SWEEP)
			results_print(path, &v);
		else if (k == K_RECORD)
			ok = show_records(path, text, len);
		else {
			error("%s: JSON, but not %s", path, what_kinds);
			ok = false;
		}
		json_free(&v);
	} else {
		/* Not one JSON value: a records file if its first line is a record. */
		const char *first = text + strspn(text, " \t\r\n");
		const char *nl = strchr(first, '\n');
		struct jval f;
		char ferr[256];
		bool rec = false;
		if (json_parse(first, nl ? (size_t)(nl - first) : strlen(first), 1, &f, ferr,
		               sizeof(ferr))) {
			rec = print_kind(&f) == K_RECORD;
			json_free(&f);
		}
		frames_set_dirs(NULL);
		if (rec)
			ok = show_records(path, text, len);
		else {
			error("%s: not JSON (%s); expected %s", path, err, what_kinds);
			ok = false;
		}
	}
	free(text);
	fflush(stdout);
	return ok;
}
