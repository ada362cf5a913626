/*
 * results.c - a gfp-sweep --json result printed as gfp-sweep printed it:
 * the outcomes, a line per finding, then each finding with its frames
 * named here, its evidence, reproducer and call paths; a campaign's target
 * by target; and the groups of a gfp-sweep from before findings.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_reader.h"
#include "text.h"
#include "report.h"

struct site_match {
	const char *site; /* "module+offset symbol" */
	bool printed;
};

/* site names the frame at module+offset. */
static bool site_is(const char *site, const char *mod, const char *off)
{
	size_t ml = strlen(mod), ol = strlen(off);
	return !strncmp(site, mod, ml) && site[ml] == '+' && !strncmp(site + ml + 1, off, ol) &&
	       (!site[ml + 1 + ol] || site[ml + 1 + ol] == ' ');
}

static bool print_if_site(void *ctx, const char *sym, const char *mod, const char *off, bool first)
{
	struct site_match *m = ctx;
	if (!mod || !site_is(m->site, mod, off))
		return true;
	struct rec_frame fr = {mod, off, sym, NULL, NULL};
	frames_print(&fr, !first);
	m->printed = true;
	return false;
}

/* A crash group's crash site as its backtrace prints it: the faulting pc
 * when it is the top frame, else a return address. */
static void print_crash_site(const char *site, const struct jval *frames)
{
	struct site_match m = {site ? site : "", false};
	if (frames && frames->type == J_STR)
		frames_each_text(frames->s, print_if_site, &m);
	for (size_t i = 0; frames && frames->type == J_ARR && i < frames->n && !m.printed; i++) {
		const char *mod = json_str(&frames->v[i], "module"),
		           *off = json_str(&frames->v[i], "offset");
		if (mod && off && site_is(m.site, mod, off)) {
			frames_print_sweep_one(&frames->v[i], i > 0);
			m.printed = true;
		}
	}
	if (!m.printed)
		printf("    %s\n", m.site);
}

static void print_group_site(size_t g, void *groups)
{
	const struct jval *o = &((const struct jval *)groups)->v[g];
	print_crash_site(json_str(o, "crash_site"), json_get(o, "crash_frames"));
	if (json_str(o, "reproducer"))
		printf("    reproduce: %s\n", json_str(o, "reproducer"));
}

/* One bug is often reached from many failure points: prints the crash sites
 * that several crash groups share, each once, with their groups and runs.
 * top[g] is group g's crash site (NULL or "" when it did not crash), runs[g]
 * its runs; print_site(g, ctx) prints group g's crash site. */
static void shared_crash_sites(size_t n, const char *const *top, const double *runs,
                               void (*print_site)(size_t g, void *ctx), void *ctx)
{
	bool header = false;
	for (size_t g = 0; g < n; g++) {
		if (!top[g] || !*top[g])
			continue;
		size_t groups = 0;
		double total = 0;
		bool seen = false;
		for (size_t h = 0; h < n && !seen; h++) {
			if (!top[h] || strcmp(top[h], top[g]) != 0)
				continue;
			seen = h < g; /* printed at its first group */
			groups++;
			total += runs[h];
		}
		if (seen || groups < 2)
			continue;
		if (!header)
			printf("\ncrash sites that several groups share (one bug, many failure "
			       "points):\n");
		header = true;
		printf("  %zu groups, %.0f runs, first [%zu]:\n", groups, total, g + 1);
		print_site(g, ctx);
	}
}

static void crash_sites_digest(const struct jval *groups, size_t ng)
{
	const char **top = xrealloc(NULL, (ng ? ng : 1) * sizeof(*top));
	double *runs = xrealloc(NULL, (ng ? ng : 1) * sizeof(*runs));
	for (size_t g = 0; g < ng; g++) {
		const struct jval *o = &groups->v[g];
		const char *oc = json_str(o, "outcome");
		double count;
		top[g] = oc && strcmp(oc, "crash") == 0 ? json_str(o, "crash_site") : NULL;
		runs[g] = json_num(o, "count", &count) ? count : 0;
	}
	shared_crash_sites(ng, top, runs, print_group_site, (void *)groups);
	free(top);
	free(runs);
}

/* A non-empty list of frames, or text of an older gfp-sweep. */
static bool has_frames(const struct jval *frames)
{
	return frames &&
	       ((frames->type == J_ARR && frames->n) || (frames->type == J_STR && *frames->s));
}

/* A silent group's evidence as gfp-sweep's console prints it: where the
 * output first differs from the recording run's, and each side's line. */
static void print_sweep_evidence(const struct jval *ev)
{
	const char *keys[] = {"offset", "line", "column", "expected_bytes", "actual_bytes"};
	const char *num[5];
	for (size_t i = 0; i < 5; i++)
		if (!ev || ev->type != J_OBJ || !(num[i] = json_text(json_get(ev, keys[i]))))
			return;
	const char *exp = json_str(ev, "expected"), *act = json_str(ev, "actual");
	printf("  output differs at offset %s (line %s, column %s): expected %s bytes, got %s\n",
	       num[0], num[1], num[2], num[3], num[4]);
	printf("    - %s\n    + %s\n", exp ? exp : "?", act ? act : "?");
}

/* The result an entry (a group, a finding, a call path) names by its
 * "first_run"; NULL when it names none of results. */
static const struct jval *first_result(const struct jval *o, const struct jval *results)
{
	double first = -1;
	return json_num(o, "first_run", &first) && results && results->type == J_ARR &&
	               first >= 0 && first < (double)results->n
	           ? &results->v[(size_t)first]
	           : NULL;
}

/* Group g of a sweep result as gfp-sweep printed it; results and prog are
 * the result's "results" and "program". */
static void print_sweep_group(size_t g, const struct jval *gr, const struct jval *results,
                              const struct jval *prog)
{
	const char *oc = json_str(gr, "outcome"), *site = json_str(gr, "site");
	const char *count = json_text(json_get(gr, "count"));
	double sig = 0;
	printf("\n[%zu] %s", g + 1, oc ? oc : "?");
	if (json_num(gr, "signal", &sig) && sig > 0 && sig < 65)
		printf(" (signal %d %s)", (int)sig, strsignal((int)sig));
	printf(" in %s run%s: allocation failure at site %s", count ? count : "?",
	       count && strcmp(count, "1") == 0 ? "" : "s", site && *site ? site : "-");
	/* Its first run's failure point, as gfp-sweep printed it. */
	const struct jval *r0 = first_result(gr, results);
	const char *hit = r0 ? json_text(json_get(r0, "hit")) : NULL,
	           *rsite = r0 ? json_str(r0, "site") : NULL;
	if (hit)
		printf(", %s %s", rsite && *rsite ? "hit" : "call", hit);
	printf("\n");
	const struct jval *inj = json_get(gr, "injection_frames"),
	                  *crash = json_get(gr, "crash_frames");
	printf("  the failed allocation:\n");
	if (has_frames(inj))
		frames_print_sweep(inj, false);
	else
		printf("    (no injection record)\n");
	if (has_frames(crash)) {
		printf("  the crash:\n");
		frames_print_sweep(crash, true);
	}
	print_sweep_evidence(json_get(gr, "evidence"));
	const struct jval *conf = json_get(gr, "confirmed");
	const char *pol = json_str(gr, "policy"), *repro = json_str(gr, "reproducer");
	printf("  reproduce (%s): ",
	       conf && conf->type == J_BOOL && conf->b ? "confirmed" : "NOT reproduced");
	if (repro) { /* as the sweep printed it, with the environment it needs */
		printf("%s\n", repro);
		return;
	}
	printf("gfp-run --policy ");
	text_shell_quote(stdout, pol ? pol : "");
	printf(" --");
	for (size_t i = 0; prog && prog->type == J_ARR && i < prog->n; i++)
		if (json_text(&prog->v[i])) {
			putchar(' ');
			text_shell_quote(stdout, json_text(&prog->v[i]));
		}
	printf("\n");
}

/* ------------------------------------------------------------------------
 * Findings (format 2): a line each, then each one as gfp-sweep printed it
 * ---------------------------------------------------------------------- */

#define SHOWN_PATHS 10 /* as gfp-sweep's console */

static double num_of(const struct jval *v, const char *key)
{
	double d = 0;
	return json_num(v, key, &d) ? d : 0;
}

static void plural(double n, const char *word)
{
	printf("%.0f %s%s", n, word, n == 1 ? "" : "s");
}

static void finding_counts(const struct jval *fd)
{
	const struct jval *paths = json_get(fd, "call_paths");
	plural(paths && paths->type == J_ARR ? (double)paths->n : num_of(fd, "paths"), "call path");
	printf(", ");
	plural(num_of(fd, "count"), "run");
}

/* A call path's caller, "make_title inventory.c:98", as gfp-sweep's
 * frames_words writes it. */
static void caller_words(FILE *f, const struct jval *c)
{
	const char *fn = json_str(c, "function"), *file = json_str(c, "file"),
	           *sym = json_str(c, "symbol"), *mod = json_str(c, "module"),
	           *off = json_str(c, "offset");
	double line = num_of(c, "line");
	if (c && c->type != J_OBJ)
		fprintf(f, "(no injection record)");
	else if (fn && file && line > 0) {
		const char *base = strrchr(file, '/');
		fprintf(f, "%s %s:%.0f", fn, base ? base + 1 : file, line);
	} else if (fn || sym)
		fprintf(f, "%s (%s+%s)", fn ? fn : sym, mod ? mod : "?", off ? off : "?");
	else if (mod && off)
		fprintf(f, "%s+%s", mod, off);
	else
		fprintf(f, "(no injection record)");
}

/* A silent finding's call paths by their caller, each with its runs. */
static void print_receivers(const struct jval *paths)
{
	char **who = xrealloc(NULL, (paths->n + 1) * sizeof(*who));
	double *count = xrealloc(NULL, (paths->n + 1) * sizeof(*count));
	size_t n = 0;
	for (size_t p = 0; p < paths->n; p++) {
		const struct jval *c = json_get(&paths->v[p], "caller");
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (!m)
			die(EXIT_USAGE, "out of memory");
		caller_words(m, c);
		fclose(m);
		size_t i = 0;
		while (i < n && strcmp(who[i], buf) != 0)
			i++;
		if (i == n) {
			who[n] = buf;
			count[n++] = 0;
		} else
			free(buf);
		count[i] += num_of(&paths->v[p], "count");
	}
	printf("  the failure came back to, and the program carried on in:\n");
	for (size_t i = 0; i < n; i++) {
		if (i < SHOWN_PATHS) {
			printf("    %s: ", who[i]);
			plural(count[i], "run");
			printf("\n");
		}
		free(who[i]);
	}
	if (n > SHOWN_PATHS)
		printf("    ... and %zu more (the JSON lists every call path)\n", n - SHOWN_PATHS);
	free(who);
	free(count);
}

static void print_finding(size_t k, const struct jval *fd, const struct jval *results)
{
	const char *title = json_str(fd, "title"), *oc = json_str(fd, "outcome");
	double sig = num_of(fd, "signal");
	const struct jval *r0 = first_result(fd, results);
	printf("\n[%zu] %s\n  %s", k + 1, title ? title : "?", oc ? oc : "?");
	if (sig > 0 && sig < 65)
		printf(" (signal %d %s)", (int)sig, strsignal((int)sig));
	printf(" in ");
	finding_counts(fd);
	const char *site = json_str(fd, "site"), *hit = r0 ? json_text(json_get(r0, "hit")) : NULL,
	           *rsite = r0 ? json_str(r0, "site") : NULL;
	printf("; the first: allocation failure at site %s", site && *site ? site : "-");
	if (hit)
		printf(", %s %s", rsite && *rsite ? "hit" : "call", hit);
	printf("\n  the failed allocation:\n");
	const struct jval *inj = json_get(fd, "injection_frames"),
	                  *crash = json_get(fd, "crash_frames");
	if (has_frames(inj))
		frames_print_sweep(inj, false);
	else
		printf("    (no injection record)\n");
	if (has_frames(crash)) {
		printf("  %s:\n", oc && strcmp(oc, "hang") == 0
		                      ? "where it waited when the timeout came"
		                      : "the crash");
		frames_print_sweep(crash, true);
	}
	print_sweep_evidence(json_get(fd, "evidence"));
	const char *msg = json_str(json_get(fd, "loss"), "message");
	if (msg && *msg)
		printf("  its message on stderr: %s\n", msg);
	const struct jval *conf = json_get(fd, "confirmed"), *rerun = json_get(fd, "rerun");
	const char *repro = json_str(fd, "reproducer");
	printf("  reproduce (%s): %s\n",
	       rerun && rerun->type == J_BOOL && !rerun->b ? "not re-run: interrupted"
	       : conf && conf->type == J_BOOL && conf->b   ? "confirmed"
	                                                   : "NOT reproduced",
	       repro ? repro : "?");
	const struct jval *paths = json_get(fd, "call_paths");
	size_t np = paths && paths->type == J_ARR ? paths->n : 0;
	if (oc && strcmp(oc, "silent") == 0 && np)
		print_receivers(paths);
	if (np < 2)
		return;
	printf("  %zu call paths lead here; each one's first run:\n", np);
	for (size_t p = 0; p < np && p < SHOWN_PATHS; p++) {
		const struct jval *cp = &paths->v[p];
		const struct jval *c = json_get(cp, "caller");
		const char *ps = json_str(cp, "site"), *pr = json_str(cp, "reproducer");
		printf("    [%zu.%zu] ", k + 1, p + 1);
		caller_words(stdout, c);
		printf(", site %s", ps && *ps ? ps : "-");
		const struct jval *r = first_result(cp, results);
		const char *rs = r ? json_str(r, "site") : NULL,
		           *hit = r ? json_text(json_get(r, "hit")) : NULL;
		if (hit)
			printf(", %s %s", rs && *rs ? "hit" : "call", hit);
		printf(": ");
		plural(num_of(cp, "count"), "run");
		printf("\n          reproduce: %s\n", pr ? pr : "?");
	}
	if (np > SHOWN_PATHS)
		printf("    ... and %zu more (the JSON lists every call path)\n", np - SHOWN_PATHS);
}

static void print_findings(const struct jval *findings, const struct jval *results,
                           const struct jval *defs)
{
	size_t n = findings->type == J_ARR ? findings->n : 0;
	double runs_n = 0;
	for (size_t k = 0; k < n; k++)
		runs_n += num_of(&findings->v[k], "count");
	if (!n) {
		printf("no crash, hang or silent data loss behind any failure point\n");
		return;
	}
	printf("findings: %zu, from ", n);
	plural(runs_n, "run");
	printf("\n");
	for (size_t k = 0; k < n; k++) {
		const char *t = json_str(&findings->v[k], "title");
		printf("  [%zu] %s (", k + 1, t ? t : "?");
		finding_counts(&findings->v[k]);
		printf(")\n");
	}
	/* What each class of them means, once. */
	for (size_t k = 0; k < n; k++) {
		const char *oc = json_str(&findings->v[k], "outcome");
		bool seen = false;
		for (size_t j = 0; j < k && oc; j++)
			seen |= json_str(&findings->v[j], "outcome") &&
			        strcmp(json_str(&findings->v[j], "outcome"), oc) == 0;
		const char *def = oc ? json_str(defs, oc) : NULL;
		if (!seen && def)
			printf("  %s: %s\n", oc, def);
	}
	for (size_t k = 0; k < n; k++)
		print_finding(k, &findings->v[k], results);
}

void results_print(const char *path, const struct jval *sw)
{
	const struct jval *targets = json_get(sw, "targets");
	if (targets) { /* a campaign: each target is a sweep */
		printf("%s: gfp-sweep campaign %s, %zu target%s\n", path,
		       json_str(sw, "campaign") ? json_str(sw, "campaign") : "?",
		       targets->type == J_ARR ? targets->n : 0, targets->n == 1 ? "" : "s");
		for (size_t t = 0; targets->type == J_ARR && t < targets->n; t++) {
			const struct jval *tg = &targets->v[t];
			const char *id = json_str(tg, "id"), *state = json_str(tg, "state");
			printf("\n== target %s: %s", id ? id : "?", state ? state : "?");
			if (json_str(tg, "error"))
				printf(": %s", json_str(tg, "error"));
			printf(" ==\n");
			results_print(id ? id : path, tg);
		}
		return;
	}
	const struct jval *prog = json_get(sw, "program");
	printf("%s: gfp-sweep %s, %s mode, shard %s:", path,
	       json_str(sw, "gfp_sweep") ? json_str(sw, "gfp_sweep") : "?",
	       json_str(sw, "mode") ? json_str(sw, "mode") : "?",
	       json_str(sw, "shard") ? json_str(sw, "shard") : "?");
	for (size_t i = 0; prog && prog->type == J_ARR && i < prog->n; i++)
		if (json_text(&prog->v[i])) {
			putchar(' ');
			text_shell_quote(stdout, json_text(&prog->v[i]));
		}
	const char *elig = json_text(json_get(sw, "eligible_calls"));
	const char *sites = json_text(json_get(sw, "sites")),
	           *runs = json_text(json_get(sw, "runs"));
	printf("\n  %s eligible calls at %s call sites; %s run%s\n", elig ? elig : "?",
	       sites ? sites : "?", runs ? runs : "?", runs && !strcmp(runs, "1") ? "" : "s");
	const struct jval *out = json_get(sw, "outcomes");
	printf("outcomes:");
	bool any = false;
	for (size_t i = 0; out && out->type == J_OBJ && i < out->n; i++)
		if (json_text(&out->v[i]) && strcmp(json_text(&out->v[i]), "0") != 0) {
			printf(" %s %s", out->k[i], json_text(&out->v[i]));
			any = true;
		}
	printf("%s\n", any ? "" : " none");
	const struct jval *results = json_get(sw, "results");
	const struct jval *findings = json_get(sw, "findings");
	if (findings) {
		print_findings(findings, results, json_get(sw, "definitions"));
		return;
	}
	/* A gfp-sweep before findings: its groups. */
	const struct jval *groups = json_get(sw, "groups");
	size_t ng = groups && groups->type == J_ARR ? groups->n : 0;
	for (size_t g = 0; g < ng; g++)
		print_sweep_group(g, &groups->v[g], results, prog);
	if (!ng)
		printf("no crash, hang or silent data loss behind any failure point\n");
	crash_sites_digest(groups, ng);
}
