/*
 * merge.c - gfp-report merge: the shards of one sweep back into the result
 * of one run.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "text.h"
#include "report.h"

/* ------------------------------------------------------------------------
 * merge: the shards of one sweep back into the result of one run
 * ---------------------------------------------------------------------- */

/* An entry of a list (findings, their call paths, abort sites, a format 1
 * file's groups) and the part it is from. */
struct entry {
	const struct jval *v;
	size_t part;
};

struct mgroup {
	const struct jval *g; /* the representative: its first run comes first */
	size_t rank;          /* where that run is in the merged results */
	size_t seen;          /* tie-break: the order groups were read in */
	double count;
	struct entry *from; /* every entry it was merged from */
	size_t nfrom;
};

/* A merged list of the result's (groups, abort_sites). */
struct mlist {
	const char *key;
	struct mgroup *m;
	size_t n;
};

static const struct mlist *list_of(const struct mlist *lists, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(lists[i].key, key) == 0)
			return &lists[i];
	return NULL;
}

struct ranked {
	const struct jval *r;
	size_t part, index;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	const char *sx = json_str(x->r, "site"), *sy = json_str(y->r, "site");
	int c = strcmp(sx ? sx : "", sy ? sy : "");
	if (c)
		return c;
	double hx = 0, hy = 0;
	json_num(x->r, "hit", &hx);
	json_num(y->r, "hit", &hy);
	if (hx != hy)
		return hx < hy ? -1 : 1;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int mgroup_cmp(const void *a, const void *b)
{
	const struct mgroup *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seen < y->seen ? -1 : x->seen > y->seen;
}

static bool same_str(const struct jval *a, const struct jval *b, const char *key)
{
	const char *x = json_str(a, key), *y = json_str(b, key);
	return strcmp(x ? x : "", y ? y : "") == 0;
}

/* A group's first run (gfp-sweep's "first_run"): its index in the part's
 * results, SIZE_MAX if the group has none that is valid. */
static size_t group_first_run(const struct part *p, const struct jval *g)
{
	double first;
	if (!json_num(g, "first_run", &first) || first < 0 || first >= (double)p->results->n ||
	    first != (double)(size_t)first)
		return SIZE_MAX;
	return (size_t)first;
}

/* What the parts say together: any interrupted, the runs not done added
 * up, a campaign target's state (all the same, else an error if one is,
 * else interrupted). */
static bool any_true(const struct part *parts, size_t np, const char *key)
{
	for (size_t i = 0; i < np; i++)
		if (json_get(parts[i].v, key) && json_get(parts[i].v, key)->b)
			return true;
	return false;
}

static double sum(const struct part *parts, size_t np, const char *key)
{
	double all = 0, one;
	for (size_t i = 0; i < np; i++)
		all += json_num(parts[i].v, key, &one) ? one : 0;
	return all;
}

static const char *merged_state(const struct part *parts, size_t np)
{
	const char *first = json_str(parts[0].v, "state");
	bool same = true, error = false;
	for (size_t i = 0; i < np; i++) {
		const char *s = json_str(parts[i].v, "state");
		same &= s && first && strcmp(s, first) == 0;
		error |= s && strcmp(s, "error") == 0;
	}
	return same ? first : error ? "error" : "interrupted";
}

typedef bool same_fn(const struct jval *a, const struct jval *b);
static size_t merge_entries(const struct part *parts, size_t *const *pos, const struct entry *lists,
                            size_t nlists, same_fn *same, struct mgroup **out);
static void free_merged(struct mgroup *m, size_t n);

/* Two call paths of one finding are one with the same site. */
static bool same_path(const struct jval *a, const struct jval *b)
{
	return same_str(a, b, "site");
}

/* A merged finding's call paths: every part's, merged by site. */
static size_t merged_paths(const struct part *parts, size_t *const *pos, const struct mgroup *g,
                           struct mgroup **out)
{
	struct entry *lists = xrealloc(NULL, (g->nfrom + 1) * sizeof(*lists));
	size_t n = 0;
	for (size_t i = 0; i < g->nfrom; i++) {
		const struct jval *l = json_get(g->from[i].v, "call_paths");
		if (l && l->type == J_ARR)
			lists[n++] = (struct entry){l, g->from[i].part};
	}
	size_t np = merge_entries(parts, pos, lists, n, same_path, out);
	free(lists);
	return np;
}

static void write_list(FILE *f, const struct part *parts, size_t *const *pos,
                       const struct mgroup *groups, size_t ngroups)
{
	fputc('[', f);
	for (size_t g = 0; g < ngroups; g++) {
		const struct jval *gr = groups[g].g;
		struct mgroup *paths = NULL;
		size_t np =
		    json_get(gr, "call_paths") ? merged_paths(parts, pos, &groups[g], &paths) : 0;
		fputs(g ? ",{" : "{", f);
		for (size_t m = 0; m < gr->n; m++) {
			if (m)
				fputc(',', f);
			text_json_str(f, gr->k[m]);
			fputc(':', f);
			if (strcmp(gr->k[m], "count") == 0)
				fprintf(f, "%.0f", groups[g].count);
			else if (strcmp(gr->k[m], "first_run") == 0 && groups[g].rank != SIZE_MAX)
				fprintf(f, "%zu", groups[g].rank);
			else if (strcmp(gr->k[m], "paths") == 0 && paths)
				fprintf(f, "%zu", np);
			else if (strcmp(gr->k[m], "call_paths") == 0 && paths)
				write_list(f, parts, pos, paths, np);
			else
				json_write(f, &gr->v[m]);
		}
		fputc('}', f);
		free_merged(paths, np);
	}
	fputc(']', f);
}

static void write_merged(FILE *f, struct part *parts, size_t np, const struct jval **results,
                         size_t total, size_t *const *pos, const struct mlist *lists, size_t nlists)
{
	/* Outcome names in the parts' order, then any only the results use. */
	const struct jval *oc0 = json_get(parts[0].v, "outcomes");
	size_t nout = 0;
	const char **names = xrealloc(NULL, ((oc0 ? oc0->n : 0) + total) * sizeof(*names));
	size_t *counts = xrealloc(NULL, ((oc0 ? oc0->n : 0) + total) * sizeof(*counts));
	for (size_t i = 0; oc0 && oc0->type == J_OBJ && i < oc0->n; i++) {
		names[nout] = oc0->k[i];
		counts[nout++] = 0;
	}
	for (size_t i = 0; i < total; i++) {
		const char *o = json_str(results[i], "outcome");
		size_t j = 0;
		while (j < nout && strcmp(names[j], o) != 0)
			j++;
		if (j == nout) {
			names[nout] = o;
			counts[nout++] = 0;
		}
		counts[j]++;
	}

	/* The first part's layout, with the fields that describe the whole. */
	const struct jval *top = parts[0].v;
	fputc('{', f);
	for (size_t i = 0; i < top->n; i++) {
		const char *k = top->k[i];
		if (i)
			fputc(',', f);
		text_json_str(f, k);
		fputc(':', f);
		if (strcmp(k, "shard") == 0)
			text_json_str(f, "1/1");
		else if (strcmp(k, "runs") == 0)
			fprintf(f, "%zu", total);
		else if (strcmp(k, "interrupted") == 0)
			fputs(any_true(parts, np, k) ? "true" : "false", f);
		else if (strcmp(k, "runs_not_done") == 0)
			fprintf(f, "%.0f", sum(parts, np, k));
		else if (strcmp(k, "state") == 0)
			text_json_str(f, merged_state(parts, np));
		else if (strcmp(k, "outcomes") == 0) {
			fputc('{', f);
			for (size_t j = 0; j < nout; j++) {
				fprintf(f, "%s", j ? "," : "");
				text_json_str(f, names[j]);
				fprintf(f, ":%zu", counts[j]);
			}
			fputc('}', f);
		} else if (strcmp(k, "results") == 0) {
			fputc('[', f);
			for (size_t j = 0; j < total; j++) {
				if (j)
					fputc(',', f);
				json_write(f, results[j]);
			}
			fputc(']', f);
		} else if (list_of(lists, nlists, k)) {
			const struct mlist *l = list_of(lists, nlists, k);
			write_list(f, parts, pos, l->m, l->n);
		} else
			json_write(f, &top->v[i]);
	}
	fputs("}\n", f);
	free(names);
	free(counts);
}

/* merge's options; returns the exit status when there is nothing to merge
 * (--help, a usage error), else -1 with *output set (NULL: stdout). */
static int merge_args(int argc, char **argv, const char **output)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	*output = NULL;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			*output = optarg;
			break;
		case 'h':
			printf("usage: gfp-report merge [-o OUT.json] PART.json...\n"
			       "Joins the --json results of gfp-sweep --shard 1/N ... N/N into the "
			       "result one\nunsharded sweep gives (shard \"1/1\"); a campaign's "
			       "target by target.\n");
			return 0;
		default:
			return tool_bad_option(c, argv);
		}
	}
	if (optind >= argc)
		return tool_usage_error("merge: no parts given (gfp-report merge [-o OUT] "
		                        "PART.json...)");
	return -1;
}

/* The parts' results in the unsharded order, and pos[i][j]: where part i's
 * result j went. */
static const struct jval **deal_results(struct part *parts, size_t np, size_t total, size_t **pos)
{
	/* Shard K/N kept the runs K-1, K-1+N, ... of the one plan, so dealing
	 * them back round-robin restores the unsharded order exactly. */
	const struct jval **results = xrealloc(NULL, (total + 1) * sizeof(*results));
	bool dealt = true;
	memset(results, 0, (total + 1) * sizeof(*results));
	for (size_t i = 0; i < np; i++) {
		pos[i] = xrealloc(NULL, (parts[i].results->n + 1) * sizeof(**pos));
		for (size_t j = 0; j < parts[i].results->n; j++) {
			size_t at = (size_t)(parts[i].k - 1) + j * (size_t)parts[i].n;
			pos[i][j] = at;
			if (at < total)
				results[at] = &parts[i].results->v[j];
			else
				dealt = false;
		}
	}
	if (dealt)
		return results;
	/* The shards planned differently (their recording runs differed):
	 * the best order left is by site, then hit. */
	warning("the shards' run counts do not fit one --shard split of %zu runs; "
	        "results are ordered by site, then hit",
	        total);
	struct ranked *rk = xrealloc(NULL, (total + 1) * sizeof(*rk));
	size_t t = 0;
	for (size_t i = 0; i < np; i++)
		for (size_t j = 0; j < parts[i].results->n; j++)
			rk[t++] = (struct ranked){&parts[i].results->v[j], i, j};
	qsort(rk, total, sizeof(*rk), ranked_cmp);
	for (t = 0; t < total; t++) {
		results[t] = rk[t].r;
		pos[rk[t].part][rk[t].index] = t;
	}
	free(rk);
	return results;
}

/* Two findings are one with the same outcome and key; two groups of a
 * format 1 file with the same injection site, outcome and crash site; two
 * abort sites with the same aborting frame, allocation and crash site. */
static bool same_finding(const struct jval *a, const struct jval *b)
{
	return same_str(a, b, "outcome") && same_str(a, b, "key");
}

static bool same_group(const struct jval *a, const struct jval *b)
{
	return same_str(a, b, "site") && same_str(a, b, "outcome") && same_str(a, b, "crash_site");
}

static bool same_member(const struct jval *a, const struct jval *b, const char *key)
{
	const struct jval *x = json_get(a, key), *y = json_get(b, key);
	return (!x && !y) || (x && y && json_equal(x, y));
}

static bool same_abort_site(const struct jval *a, const struct jval *b)
{
	return same_str(a, b, "crash_site") && same_member(a, b, "aborter") &&
	       same_member(a, b, "allocation");
}

/* The entries of lists as one: the same entries are one, their counts add
 * up, and the one whose first run comes first speaks for it, as in an
 * unsharded sweep. Returns how many, in *out. */
static size_t merge_entries(const struct part *parts, size_t *const *pos, const struct entry *lists,
                            size_t nlists, same_fn *same, struct mgroup **out)
{
	size_t ng = 0, seen = 0;
	for (size_t i = 0; i < nlists; i++)
		ng += lists[i].v->n;
	struct mgroup *groups = xrealloc(NULL, (ng + 1) * sizeof(*groups));
	ng = 0;
	for (size_t i = 0; i < nlists; i++) {
		const struct part *p = &parts[lists[i].part];
		for (size_t j = 0; j < lists[i].v->n; j++, seen++) {
			const struct jval *g = &lists[i].v->v[j];
			size_t first = group_first_run(p, g);
			size_t rank = first == SIZE_MAX ? SIZE_MAX : pos[lists[i].part][first];
			double count = 0;
			json_num(g, "count", &count);
			size_t m = 0;
			while (m < ng && !same(groups[m].g, g))
				m++;
			if (m == ng)
				groups[ng++] = (struct mgroup){g, rank, seen, 0, NULL, 0};
			struct mgroup *to = &groups[m];
			to->count += count;
			to->from = xrealloc(to->from, (to->nfrom + 1) * sizeof(*to->from));
			to->from[to->nfrom++] = (struct entry){g, lists[i].part};
			if (rank < to->rank) {
				to->g = g;
				to->rank = rank;
			}
		}
	}
	qsort(groups, ng, sizeof(*groups), mgroup_cmp);
	*out = groups;
	return ng;
}

static void free_merged(struct mgroup *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++)
		free(m[i].from);
	free(m);
}

/* The parts' lists `key` (findings, abort_sites, groups) as one. */
static size_t merge_list(struct part *parts, size_t np, size_t *const *pos, const char *key,
                         same_fn *same, struct mgroup **out)
{
	struct entry *lists = xrealloc(NULL, (np + 1) * sizeof(*lists));
	size_t n = 0;
	for (size_t i = 0; i < np; i++) {
		const struct jval *l = json_get(parts[i].v, key);
		if (l && l->type == J_ARR)
			lists[n++] = (struct entry){l, i};
	}
	size_t ng = merge_entries(parts, pos, lists, n, same, out);
	free(lists);
	return ng;
}

/* One sweep's parts, checked, as one result into f. */
static void merge_sweep(FILE *f, struct part *parts, size_t np)
{
	size_t total = 0;
	for (size_t i = 0; i < np; i++)
		total += parts[i].results->n;
	size_t **pos = xrealloc(NULL, np * sizeof(*pos));
	const struct jval **results = deal_results(parts, np, total, pos);
	struct mlist lists[3] = {
	    {"findings", NULL, 0}, {"abort_sites", NULL, 0}, {"groups", NULL, 0}};
	lists[0].n = merge_list(parts, np, pos, "findings", same_finding, &lists[0].m);
	lists[1].n = merge_list(parts, np, pos, "abort_sites", same_abort_site, &lists[1].m);
	lists[2].n = merge_list(parts, np, pos, "groups", same_group, &lists[2].m);
	write_merged(f, parts, np, results, total, pos, lists, 3);
	for (size_t i = 0; i < np; i++)
		free(pos[i]);
	free(pos);
	free(results);
	for (size_t i = 0; i < 3; i++)
		free_merged(lists[i].m, lists[i].n);
}

/* ------------------------------------------------------------------------
 * A campaign's parts: each target merged as a sweep of its own
 * ---------------------------------------------------------------------- */

/* The first part's layout, each target merged, the totals added up. */
static void merge_campaign(FILE *f, struct part *parts, size_t np, struct part **tp, size_t nt)
{
	const struct jval *top = parts[0].v;
	fputc('{', f);
	for (size_t i = 0; i < top->n; i++) {
		const char *k = top->k[i];
		fprintf(f, "%s", i ? "," : "");
		text_json_str(f, k);
		fputc(':', f);
		if (strcmp(k, "shard") == 0)
			text_json_str(f, "1/1");
		else if (strcmp(k, "runs") == 0)
			fprintf(f, "%.0f", sum(parts, np, k));
		else if (strcmp(k, "interrupted") == 0)
			fputs(any_true(parts, np, k) ? "true" : "false", f);
		else if (strcmp(k, "outcomes") == 0 && top->v[i].type == J_OBJ) {
			fputc('{', f);
			for (size_t o = 0; o < top->v[i].n; o++) {
				double all = 0, one;
				for (size_t p = 0; p < np; p++)
					all +=
					    json_num(json_get(parts[p].v, k), top->v[i].k[o], &one)
					        ? one
					        : 0;
				fprintf(f, "%s", o ? "," : "");
				text_json_str(f, top->v[i].k[o]);
				fprintf(f, ":%.0f", all);
			}
			fputc('}', f);
		} else if (strcmp(k, "targets") == 0) {
			fputc('[', f);
			for (size_t t = 0; t < nt; t++) {
				fprintf(f, "%s", t ? "," : "");
				merge_sweep(f, tp[t], np);
			}
			fputc(']', f);
		} else
			json_write(f, &top->v[i]);
	}
	fputs("}\n", f);
}

/* The merged result to output (NULL: stdout); false after an error. */
static bool merge_write(const char *output, struct part *parts, size_t np)
{
	size_t nt = 0;
	struct part **tp = NULL;
	bool campaign = json_get(parts[0].v, "targets") != NULL;
	if (campaign && !(tp = parts_targets(parts, np, &nt)))
		return false; /* what it allocated goes with the exit */
	if (!campaign && !parts_check(parts, np))
		return false;
	bool ok = true;
	/* -o OUT: a new file renamed over OUT once whole (outfile.h). */
	struct outfile o = {.f = stdout, .path = NULL, .slot = -1};
	char why[PATH_MAX + 200];
	if (output && !outfile_open(&o, output, why, sizeof(why))) {
		error("cannot write %s: %s", output, why);
		ok = false;
	} else {
		FILE *f = o.f;
		if (campaign)
			merge_campaign(f, parts, np, tp, nt);
		else
			merge_sweep(f, parts, np);
		if (output ? !outfile_close(&o) : fflush(f) != 0 || ferror(f)) {
			error("cannot write %s: %s", output ? output : "the standard output",
			      strerror(errno));
			ok = false;
		}
	}
	parts_free_targets(tp, nt, np);
	return ok;
}

int merge_main(int argc, char **argv)
{
	const char *output;
	int status = merge_args(argc, argv, &output);
	if (status >= 0)
		return status;
	status = 0;
	size_t np = (size_t)(argc - optind);
	struct part *parts = xrealloc(NULL, np * sizeof(*parts));
	memset(parts, 0, np * sizeof(*parts));
	for (size_t i = 0; i < np; i++) {
		parts[i].path = argv[optind + (int)i];
		if (!parts_load(&parts[i])) {
			status = EXIT_USAGE;
			np = i + 1;
			break;
		}
	}
	if (!status && !merge_write(output, parts, np))
		status = EXIT_USAGE;
	for (size_t i = 0; i < np; i++)
		json_free(&parts[i].doc);
	free(parts);
	return status;
}
