/*
 * The kernel reference table (kernel.def): every row run through the
 * engine's slow path (slowpath.c and decide.c, in slowsim.h's simulated
 * world), and the same rows as
 * doc/kernel.md prints them, so that the code, the table and the page
 * cannot drift apart.
 *
 *   unit_kernel_table DOC            run the rows; DOC's table must match
 *   unit_kernel_table --update DOC   rewrite DOC's table from kernel.def
 *
 * The page's table lies between the lines "<!-- kernel.def: begin -->" and
 * "<!-- kernel.def: end -->".
 */
#include <stdlib.h>

#include "check.h"
#include "slowsim.h"

#define WHERE_ROW_NORMAL    WHERE_NORMAL
#define WHERE_ROW_RECLAIM   WHERE_RECLAIM
#define WHERE_ROW_VICTIM    WHERE_VICTIM
#define ROOM_ROW_NONE       ROOM_NONE
#define ROOM_ROW_HIGH       ROOM_HIGH
#define ROOM_ROW_MEMALLOC   ROOM_MEMALLOC
#define RECLAIM_ROW_NOTHING RECLAIM_NOTHING
#define RECLAIM_ROW_STUCK   RECLAIM_STUCK
#define RECLAIM_ROW_SOME    RECLAIM_SOME
#define END_ROW_OK          END_OK
#define END_ROW_FAIL        END_FAIL
#define END_ROW_DIES        END_DIES
#define END_ROW_LOOPS       END_LOOPS
#define VIA_ROW_NONE        -1
#define VIA_ROW_PLAIN       ROOM_PLAIN
#define VIA_ROW_HIGH        ROOM_HIGH
#define VIA_ROW_MEMALLOC    ROOM_MEMALLOC

struct row {
	gfp_t flags, scope;
	size_t size;
	enum sim_where where;
	enum sim_room room;
	enum sim_reclaim reclaim;
	bool notifiers;
	enum gfp_oom_action oom;
	int adj;
	bool nofs_fail, tree;
	enum sim_end end;
	unsigned round;
	int via;
	bool oom_ran;
	const char *kernel;
};

static const struct row rows[] = {
#define ROW(flags_, scope_, size_, where_, room_, reclaim_, notifiers_, oom_, adj_, nofs_fail_,    \
            tree_, end_, round_, via_, oom_ran_, kernel_)                                          \
	{flags_,                                                                                   \
	 scope_,                                                                                   \
	 size_,                                                                                    \
	 WHERE_ROW_##where_,                                                                       \
	 ROOM_ROW_##room_,                                                                         \
	 RECLAIM_ROW_##reclaim_,                                                                   \
	 notifiers_,                                                                               \
	 oom_,                                                                                     \
	 adj_,                                                                                     \
	 nofs_fail_,                                                                               \
	 tree_,                                                                                    \
	 END_ROW_##end_,                                                                           \
	 round_,                                                                                   \
	 VIA_ROW_##via_,                                                                           \
	 oom_ran_,                                                                                 \
	 kernel_},
#include "kernel.def"
#undef ROW
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* ------------------------------------------------------------------------
 * The rows as the page prints them
 * ---------------------------------------------------------------------- */

/* Flag names as code, their '|' escaped: a table cell ends at a bare one. */
static void cell_flags(struct gfp_buf *b, gfp_t f)
{
	char names[128];
	gfp_flags_name(f, names, sizeof(names));
	gfp_buf_printf(b, "`");
	for (const char *p = names; *p; p++)
		gfp_buf_printf(b, *p == '|' ? "\\|" : "%c", *p);
	gfp_buf_printf(b, "`");
}

static void print_row(struct gfp_buf *b, const struct row *r)
{
	static const char *const room[] = {"all", "half of min_free", "only MEMALLOC fits", "none"};
	static const char *const reclaim[] = {"nothing left", "stuck, more may come", "frees some"};
	static const char *const via[] = {"", ", from half of min_free", ", no watermarks"};
	gfp_buf_printf(b, "| ");
	cell_flags(b, r->flags);
	if (r->size > 4096)
		gfp_buf_printf(b, ", %zu KiB", r->size / 1024);
	gfp_buf_printf(b, " | ");
	const char *sep = "";
	if (r->scope) {
		cell_flags(b, r->scope);
		gfp_buf_printf(b, " scope");
		sep = ", ";
	}
	if (r->where == WHERE_RECLAIM)
		gfp_buf_printf(b, "%sin reclaim", sep);
	else if (r->where == WHERE_VICTIM)
		gfp_buf_printf(b, "%sOOM victim", sep);
	else if (!r->scope)
		gfp_buf_printf(b, "-");
	/* oom= by its name in keys.def */
	static const char *const oom_names[] = {
#define NAME(e, s) s,
	    GFP_CHOICES_oom(NAME, )
#undef NAME
	};
	gfp_buf_printf(b, " | %s | %s%s | oom=%s", room[r->room], reclaim[r->reclaim],
	               r->notifiers ? "; notifiers free 1 MiB" : "", oom_names[r->oom]);
	if (r->adj)
		gfp_buf_printf(b, ", oom_score_adj=%d", r->adj);
	if (r->nofs_fail)
		gfp_buf_printf(b, ", nofs_fail=1");
	if (r->tree)
		gfp_buf_printf(b, ", limit.scope=tree");
	gfp_buf_printf(b, " | ");
	switch (r->end) {
	case END_OK:
		gfp_buf_printf(b, "**ok**, round %u%s", r->round, r->via >= 0 ? via[r->via] : "");
		break;
	case END_FAIL:
		gfp_buf_printf(b, "**NULL**, round %u", r->round);
		break;
	case END_DIES:
		gfp_buf_printf(b, "**killed**, round %u", r->round);
		break;
	case END_LOOPS:
		gfp_buf_printf(b, "**waits** for a free");
		break;
	case END_FORCED: /* a memcg's; no row has one */
		gfp_buf_printf(b, "**forced**, round %u", r->round);
		break;
	}
	gfp_buf_printf(b, " | %s | `%s` |\n",
	               r->end == END_DIES ? "kill"
	               : r->oom_ran       ? "runs, no kill"
	                                  : "-",
	               r->kernel);
}

static size_t table_text(char *out, size_t cap)
{
	struct gfp_buf b = {out, cap, 0};
	gfp_buf_printf(&b, "| Request | Context | Reserve left | Reclaim | Policy | Outcome | "
	                   "OOM step | Kernel |\n");
	gfp_buf_printf(&b, "|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < NROWS; i++)
		print_row(&b, &rows[i]);
	return b.len;
}

/* ------------------------------------------------------------------------
 * The page
 * ---------------------------------------------------------------------- */
#define BEGIN "<!-- kernel.def: begin -->\n"
#define END   "<!-- kernel.def: end -->\n"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap + 1);
	size_t got;
	while (p && (got = fread(p + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			p = realloc(p, (cap *= 2) + 1);
	}
	fclose(f);
	if (p)
		p[n] = '\0';
	*len = n;
	return p;
}

/* The page's table: [*start, *end) of its text, between the markers. */
static bool find_table(const char *doc, size_t *start, size_t *end)
{
	const char *b = strstr(doc, BEGIN), *e = b ? strstr(b, END) : NULL;
	if (!b || !e)
		return false;
	*start = (size_t)(b - doc) + strlen(BEGIN);
	*end = (size_t)(e - doc);
	return true;
}

static int check_doc(const char *path, bool update)
{
	static char table[1 << 16];
	size_t n = table_text(table, sizeof(table));
	size_t len, start, end;
	char *doc = slurp(path, &len);
	if (!doc || !find_table(doc, &start, &end)) {
		fprintf(stderr, "%s: cannot read it, or no table between '%.*s' and '%.*s'\n", path,
		        (int)strlen(BEGIN) - 1, BEGIN, (int)strlen(END) - 1, END);
		free(doc);
		return 1;
	}
	bool same = end - start == n && memcmp(doc + start, table, n) == 0;
	if (update && !same) {
		FILE *f = fopen(path, "w");
		if (!f || fwrite(doc, 1, start, f) != start || fwrite(table, 1, n, f) != n ||
		    fwrite(doc + end, 1, len - end, f) != len - end || fclose(f) != 0) {
			fprintf(stderr, "%s: cannot write it\n", path);
			free(doc);
			return 1;
		}
		printf("%s: table rewritten from kernel.def\n", path);
	} else if (!same) {
		/* the first line that differs */
		size_t i = 0, line = 0;
		while (i < n && start + i < end && doc[start + i] == table[i])
			if (table[i++] == '\n')
				line = i;
		fprintf(stderr,
		        "%s: its table differs from kernel.def (run unit_kernel_table --update "
		        "%s); at:\n  page: %.*s\n  def:  %.*s\n",
		        path, path, (int)strcspn(doc + start + line, "\n"), doc + start + line,
		        (int)strcspn(table + line, "\n"), table + line);
		check_failures++;
	}
	free(doc);
	return 0;
}

/* ------------------------------------------------------------------------
 * The rows against the code
 * ---------------------------------------------------------------------- */
static const char *const end_name[] = {"ok", "NULL", "killed", "waits", "forced"};

static void run_row(const struct row *r)
{
	struct sim s = {
	    .flags = r->flags,
	    .scope = decide_scope_bits(r->scope),
	    .size = r->size,
	    .where = r->where,
	    .room = r->room,
	    .reclaim = r->reclaim,
	    .notifiers_free = r->notifiers,
	    .costly = 32768,
	    .retries = 16,
	    .nofs_fail = r->nofs_fail,
	    .oom = r->oom,
	    .tree = r->tree,
	    .adj = r->adj,
	};
	if (!r->scope)
		s.scope = 0;
	sim_run(&s);
	bool ok = s.end == r->end && s.round == r->round && (s.ooms > 0) == r->oom_ran &&
	          (r->end != END_OK || s.reach == r->via);
	if (s.end == END_FAIL && !s.why)
		ok = false; /* every failure says why */
	if (strchr(r->kernel, '|') || strchr(r->kernel, '`'))
		ok = false; /* it would end its cell, or its code span */
	if (ok)
		return;
	char want[2048], got[256];
	struct gfp_buf b = {want, sizeof(want), 0};
	print_row(&b, r);
	snprintf(got, sizeof(got), "%s round %u, reach %d, %u OOM steps (first %u), why: %s",
	         end_name[s.end], s.round, s.reach, s.ooms, s.first_oom, s.why ? s.why : "-");
	fprintf(stderr, "row %s  got: %s\n", want, got);
	check_failures++;
}

int main(int argc, char **argv)
{
	bool update = argc == 3 && !strcmp(argv[1], "--update");
	if (argc != 2 && !update) {
		fprintf(stderr, "usage: unit_kernel_table [--update] doc/kernel.md\n");
		return 2;
	}
	for (size_t i = 0; i < NROWS; i++)
		run_row(&rows[i]);
	if (check_doc(argv[argc - 1], update))
		return 1;
	printf("%zu rows of kernel.def\n", NROWS);
	return CHECK_DONE();
}
