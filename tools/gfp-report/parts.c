/*
 * parts.c - the parts gfp-report merge joins: each a gfp-sweep --shard K/N
 * --json result, read and checked to hold what the merge reads, and all of
 * them checked to be one sweep's (or one campaign's), each shard once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"
#include "report.h"

/* "shard": "K/N" into p->k and p->n. */
bool parts_shard(struct part *p)
{
	const char *shard = json_str(p->v, "shard");
	char extra;
	if (!shard || sscanf(shard, "%ld/%ld%c", &p->k, &p->n, &extra) != 2 || p->n < 1 ||
	    p->k < 1 || p->k > p->n) {
		error("%s: shard is \"%s\", not K/N", p->path, shard ? shard : "");
		return false;
	}
	return true;
}

bool parts_load(struct part *p)
{
	size_t len = 0;
	char *text = infile_read(p->path, &len);
	char err[256];
	if (!text) {
		error("cannot read %s: %s", p->path, strerror(errno));
		return false;
	}
	bool ok = json_parse(text, len, 1, &p->doc, err, sizeof(err));
	p->v = &p->doc;
	free(text);
	if (!ok) {
		error("%s: not JSON (%s)", p->path, err);
		return false;
	}
	if (print_kind(p->v) != K_SWEEP) {
		error("%s: not a gfp-sweep --json result (no \"gfp_sweep\"): only those merge",
		      p->path);
		return false;
	}
	const struct jval *t = json_get(p->v, "targets");
	if (t && t->type != J_ARR) {
		error("%s: \"targets\" is not a list", p->path);
		return false;
	}
	return t ? parts_shard(p) : parts_check_sweep(p);
}

/* The fields a sweep's merge reads, p->v's (a file's, or a campaign
 * target's). */
bool parts_check_sweep(struct part *p)
{
	const char *shard = json_str(p->v, "shard");
	char extra;
	p->results = json_get(p->v, "results");
	/* format 2 has findings, format 1 groups */
	p->groups =
	    json_get(p->v, "findings") ? json_get(p->v, "findings") : json_get(p->v, "groups");
	const char *missing = !json_str(p->v, "mode")                    ? "mode"
	                      : !json_get(p->v, "program")               ? "program"
	                      : !p->results || p->results->type != J_ARR ? "results"
	                      : !p->groups || p->groups->type != J_ARR   ? "findings"
	                      : !shard                                   ? "shard"
	                                                                 : NULL;
	if (missing) {
		error("%s: no \"%s\" in this gfp-sweep result", p->path, missing);
		return false;
	}
	(void)extra;
	if (!parts_shard(p))
		return false;
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
bool parts_check(const struct part *parts, size_t np)
{
	const struct part *a = &parts[0];
	for (size_t i = 1; i < np; i++) {
		const struct part *b = &parts[i];
		if (strcmp(json_str(a->v, "mode"), json_str(b->v, "mode")) != 0) {
			error("%s is a %s-mode sweep but %s is %s-mode: parts of different sweeps "
			      "do not merge",
			      b->path, json_str(b->v, "mode"), a->path, json_str(a->v, "mode"));
			return false;
		}
		if (!json_get(a->v, "findings") != !json_get(b->v, "findings")) {
			error("%s has %s but %s has %s: parts of gfp-sweeps of different versions "
			      "do not merge",
			      a->path, json_get(a->v, "findings") ? "findings" : "groups", b->path,
			      json_get(b->v, "findings") ? "findings" : "groups");
			return false;
		}
		const struct jval *pa = json_get(a->v, "program"), *pb = json_get(b->v, "program");
		if ((pa || pb) && (!pa || !pb || !json_equal(pa, pb))) {
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
			const char *x = json_text(json_get(a->v, same[s]));
			const char *y = json_text(json_get(b->v, same[s]));
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

/* How far from done a campaign target's part is. */
static int state_rank(const struct jval *target)
{
	static const char *const order[] = {"done", "not_run", "interrupted", "error"};
	const char *s = json_str(target, "state");
	int r = 0;
	while (s && r < 4 && strcmp(s, order[r]) != 0)
		r++;
	return r;
}

/* targets[t][i]: target t of the first part in part i, checked; NULL after
 * an error. The worst state's part comes first: its fields (an "error")
 * speak for the target. */
struct part **parts_targets(struct part *parts, size_t np, size_t *nt)
{
	const struct jval *t0 = json_get(parts[0].v, "targets");
	for (size_t i = 1; i < np; i++)
		if (!json_get(parts[i].v, "targets")) {
			error("%s is a campaign's result but %s is one sweep's: they do not merge",
			      parts[0].path, parts[i].path);
			return NULL;
		}
	if (!parts_check(parts, np))
		return NULL;
	struct part **tp = xrealloc(NULL, (t0->n + 1) * sizeof(*tp));
	*nt = t0->n;
	for (size_t t = 0; t < t0->n; t++) {
		const char *id = json_str(&t0->v[t], "id");
		tp[t] = xrealloc(NULL, np * sizeof(**tp));
		for (size_t i = 0; i < np; i++) {
			const struct jval *ts = json_get(parts[i].v, "targets");
			size_t j = 0;
			while (j < ts->n && (!id || !json_str(&ts->v[j], "id") ||
			                     strcmp(json_str(&ts->v[j], "id"), id) != 0))
				j++;
			if (j == ts->n || ts->n != t0->n) {
				error("%s and %s have other targets (%s): parts of different "
				      "campaigns "
				      "do not merge",
				      parts[0].path, parts[i].path, id ? id : "no id");
				return NULL;
			}
			size_t len = strlen(parts[i].path) + strlen(id) + 16;
			char *label = xrealloc(NULL, len);
			snprintf(label, len, "%s, target %s", parts[i].path, id);
			tp[t][i] = (struct part){.path = label, .v = &ts->v[j]};
			if (!parts_check_sweep(&tp[t][i]))
				return NULL;
			if (state_rank(tp[t][i].v) > state_rank(tp[t][0].v)) {
				struct part first = tp[t][0];
				tp[t][0] = tp[t][i];
				tp[t][i] = first;
			}
		}
		if (!parts_check(tp[t], np))
			return NULL;
	}
	return tp;
}

void parts_free_targets(struct part **tp, size_t nt, size_t np)
{
	for (size_t t = 0; tp && t < nt; t++) {
		for (size_t i = 0; i < np; i++)
			free((char *)tp[t][i].path);
		free(tp[t]);
	}
	free(tp);
}
