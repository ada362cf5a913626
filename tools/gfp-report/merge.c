/*
 * merge.c - gfp-report merge: the shards of one sweep back into the result
 * of one run.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "report.h"

/* ------------------------------------------------------------------------
 * merge: the shards of one sweep back into the result of one run
 * ---------------------------------------------------------------------- */

struct part {
	const char *path;
	struct jval v;
	const struct jval *results, *groups;
	long k, n;
};

struct mgroup {
	const struct jval *g; /* the representative: its first run comes first */
	size_t rank;          /* where that run is in the merged results */
	size_t seen;          /* tie-break: the order groups were read in */
	double count;
};

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

static bool load_part(struct part *p)
{
	size_t len = 0;
	char *text = text_slurp(p->path, &len);
	char err[256];
	if (!text) {
		error("cannot read %s: %s", p->path, strerror(errno));
		return false;
	}
	bool ok = json_parse(text, len, 1, &p->v, err, sizeof(err));
	free(text);
	if (!ok) {
		error("%s: not JSON (%s)", p->path, err);
		return false;
	}
	if (kind_of(&p->v) != K_SWEEP) {
		error("%s: not a gfp-sweep --json result (no \"gfp_sweep\"): only those merge",
		      p->path);
		return false;
	}
	const char *shard = json_str(&p->v, "shard");
	char extra;
	p->results = json_get(&p->v, "results");
	p->groups = json_get(&p->v, "groups");
	const char *missing = !json_str(&p->v, "mode")                   ? "mode"
	                      : !json_get(&p->v, "program")              ? "program"
	                      : !p->results || p->results->type != J_ARR ? "results"
	                      : !p->groups || p->groups->type != J_ARR   ? "groups"
	                      : !shard                                   ? "shard"
	                                                                 : NULL;
	if (missing) {
		error("%s: no \"%s\" in this gfp-sweep result", p->path, missing);
		return false;
	}
	if (sscanf(shard, "%ld/%ld%c", &p->k, &p->n, &extra) != 2 || p->n < 1 || p->k < 1 ||
	    p->k > p->n) {
		error("%s: shard is \"%s\", not K/N", p->path, shard);
		return false;
	}
	for (size_t i = 0; i < p->results->n; i++)
		if (!json_str(&p->results->v[i], "site") ||
		    !json_str(&p->results->v[i], "outcome") ||
		    !json_get(&p->results->v[i], "hit")) {
			error("%s: result %zu has no site, hit or outcome", p->path, i + 1);
			return false;
		}
	return true;
}

/* Every part must come from the same sweep, each shard exactly once. */
static bool check_parts(struct part *parts, size_t np)
{
	const struct part *a = &parts[0];
	for (size_t i = 1; i < np; i++) {
		const struct part *b = &parts[i];
		if (strcmp(json_str(&a->v, "mode"), json_str(&b->v, "mode")) != 0) {
			error("%s is a %s-mode sweep but %s is %s-mode: parts of different sweeps "
			      "do not merge",
			      b->path, json_str(&b->v, "mode"), a->path, json_str(&a->v, "mode"));
			return false;
		}
		if (!json_equal(json_get(&a->v, "program"), json_get(&b->v, "program"))) {
			error("%s swept a different program or arguments than %s: parts of "
			      "different sweeps do not merge",
			      b->path, a->path);
			return false;
		}
		if (b->n != a->n) {
			error("%s is shard %ld/%ld but %s is shard %ld/%ld: every part must come "
			      "from the same --shard K/N split",
			      b->path, b->k, b->n, a->path, a->k, a->n);
			return false;
		}
		for (size_t j = 0; j < i; j++)
			if (parts[j].k == b->k) {
				error("%s and %s are both shard %ld/%ld: each shard once",
				      parts[j].path, b->path, b->k, b->n);
				return false;
			}
		static const char *const same[] = {"eligible_calls", "sites"};
		for (size_t s = 0; s < 2; s++) {
			const char *x = json_text(json_get(&a->v, same[s]));
			const char *y = json_text(json_get(&b->v, same[s]));
			if (x && y && strcmp(x, y) != 0)
				warning("%s recorded %s %s, %s %s: the program does not "
				        "allocate the same way every run, so the shards may not "
				        "add up to one sweep",
				        a->path, same[s], x, b->path, y);
		}
	}
	if ((long)np != a->n) {
		for (long k = 1; k <= a->n; k++) {
			size_t j = 0;
			while (j < np && parts[j].k != k)
				j++;
			if (j == np) {
				error("shard %ld/%ld is missing: the parts are not the whole "
				      "sweep",
				      k, a->n);
				return false;
			}
		}
	}
	return true;
}

static void write_merged(FILE *f, struct part *parts, const struct jval **results, size_t total,
                         struct mgroup *groups, size_t ngroups)
{
	/* Outcome names in the parts' order, then any only the results use. */
	const struct jval *oc0 = json_get(&parts[0].v, "outcomes");
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
	const struct jval *top = &parts[0].v;
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
		} else if (strcmp(k, "groups") == 0) {
			fputc('[', f);
			for (size_t g = 0; g < ngroups; g++) {
				const struct jval *gr = groups[g].g;
				fputs(g ? ",{" : "{", f);
				for (size_t m = 0; m < gr->n; m++) {
					if (m)
						fputc(',', f);
					text_json_str(f, gr->k[m]);
					fputc(':', f);
					if (strcmp(gr->k[m], "count") == 0)
						fprintf(f, "%.0f", groups[g].count);
					else if (strcmp(gr->k[m], "first_run") == 0 &&
					         groups[g].rank != SIZE_MAX)
						fprintf(f, "%zu", groups[g].rank);
					else
						json_write(f, &gr->v[m]);
				}
				fputc('}', f);
			}
			fputc(']', f);
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
			       "result one\nunsharded sweep gives (shard \"1/1\").\n");
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

/* Groups with the same injection site, outcome and crash site are one
 * group: counts add up, and the one whose first run comes first speaks
 * for it, as in an unsharded sweep. Returns how many, in *out. */
static size_t merge_groups(struct part *parts, size_t np, size_t *const *pos, struct mgroup **out)
{
	size_t ng = 0, seen = 0;
	for (size_t i = 0; i < np; i++)
		ng += parts[i].groups->n;
	struct mgroup *groups = xrealloc(NULL, (ng + 1) * sizeof(*groups));
	ng = 0;
	for (size_t i = 0; i < np; i++) {
		for (size_t j = 0; j < parts[i].groups->n; j++, seen++) {
			const struct jval *g = &parts[i].groups->v[j];
			size_t first = group_first_run(&parts[i], g);
			size_t rank = first == SIZE_MAX ? SIZE_MAX : pos[i][first];
			double count = 0;
			json_num(g, "count", &count);
			size_t m = 0;
			while (m < ng && !(same_str(groups[m].g, g, "site") &&
			                   same_str(groups[m].g, g, "outcome") &&
			                   same_str(groups[m].g, g, "crash_site")))
				m++;
			if (m == ng) {
				groups[ng++] = (struct mgroup){g, rank, seen, count};
				continue;
			}
			groups[m].count += count;
			if (rank < groups[m].rank) {
				groups[m].g = g;
				groups[m].rank = rank;
			}
		}
	}
	qsort(groups, ng, sizeof(*groups), mgroup_cmp);
	*out = groups;
	return ng;
}

/* The merged result to output (NULL: stdout); false after an error. */
static bool merge_write(const char *output, struct part *parts, size_t np)
{
	size_t total = 0;
	for (size_t i = 0; i < np; i++)
		total += parts[i].results->n;
	size_t **pos = xrealloc(NULL, np * sizeof(*pos));
	const struct jval **results = deal_results(parts, np, total, pos);
	struct mgroup *groups;
	size_t ng = merge_groups(parts, np, pos, &groups);
	bool ok = true;
	FILE *f = output ? fopen(output, "w") : stdout;
	if (!f) {
		error("cannot write %s: %s", output, strerror(errno));
		ok = false;
	} else {
		write_merged(f, parts, results, total, groups, ng);
		if (fflush(f) != 0 || ferror(f) || (output && fclose(f) != 0)) {
			error("cannot write %s: %s", output ? output : "the standard output",
			      strerror(errno));
			ok = false;
		}
	}
	for (size_t i = 0; i < np; i++)
		free(pos[i]);
	free(pos);
	free(results);
	free(groups);
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
		if (!load_part(&parts[i])) {
			status = EXIT_USAGE;
			np = i + 1;
			break;
		}
	}
	if (!status && (!check_parts(parts, np) || !merge_write(output, parts, np)))
		status = EXIT_USAGE;
	for (size_t i = 0; i < np; i++)
		json_free(&parts[i].v);
	free(parts);
	return status;
}
