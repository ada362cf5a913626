/*
 * campaign-out.c - a campaign's console result and reports, made from its
 * journal alone: so a campaign that was stopped and run again reports what
 * an unbroken one reports. Each target is loaded into the globals a sweep
 * of it alone leaves (each_target), and the sweep's own writers
 * print its section.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "gfp_build.h"
#include "journal.h"

static const struct target *targets;
static size_t ntargets;

static double num(const struct jval *v, const char *key)
{
	double d = 0;
	json_num(v, key, &d);
	return d;
}

static int line_cmp(const void *a, const void *b)
{
	double x = num(*(const struct jval *const *)a, "run"),
	       y = num(*(const struct jval *const *)b, "run");
	return (x > y) - (x < y);
}

/* Puts back the stderr a finding's run wrote, for junit.c to read. */
static void put_stderr(const struct run *r, const char *text)
{
	char p[PATH_MAX + 16];
	run_paths(r->idx, "err", p, sizeof(p));
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f)
		die(EXIT_USAGE, "cannot write %s: %s", p, strerror(errno));
	fputs(text ? text : "", f);
	fclose(f);
}

static bool flag(const struct jval *v)
{
	return v->type == J_BOOL && v->b;
}

/* A done target's findings as they were confirmed, from its "done" line.
 * A state written before findings has groups instead: its runs are
 * grouped again, and a finding whose first run was a confirmed group's
 * first run keeps that confirmation. */
static size_t done_findings(const struct jval *done, struct finding *fs, size_t *counts)
{
	const struct jval *l = json_get(done, "findings"), *rf = json_get(done, "run_finding");
	if (!l || l->type != J_ARR || !rf || rf->type != J_ARR) {
		const struct jval *g = json_get(done, "groups");
		size_t n = findings_group(fs, counts);
		for (size_t f = 0; f < n; f++)
			for (size_t i = 0; g && g->type == J_ARR && i < g->n; i++) {
				const struct jval *e = &g->v[i];
				if (e->type == J_ARR && e->n == 4 && e->v[0].type == J_NUM &&
				    strtoull(e->v[0].s, NULL, 10) == fs[f].first) {
					fs[f].rerun = flag(&e->v[2]);
					fs[f].confirmed = flag(&e->v[3]);
				}
			}
		return n;
	}
	/* The counts and each run's key, as the sweep made them; then the
	 * findings as journalled. */
	size_t n = findings_group(fs, counts), kept = 0;
	for (size_t i = 0; i < sweep.nruns; i++)
		sweep.runs[i].finding =
		    i < rf->n && rf->v[i].type == J_NUM ? strtol(rf->v[i].s, NULL, 10) : -1;
	for (size_t i = 0; i < l->n && i < sweep.nruns; i++) {
		const struct jval *e = &l->v[i];
		if (e->type != J_ARR || e->n != 4)
			continue;
		size_t first = (size_t)strtoull(e->v[0].s, NULL, 10);
		struct finding one = {.first = first,
		                      .count = (size_t)strtoull(e->v[1].s, NULL, 10),
		                      .rerun = flag(&e->v[2]),
		                      .confirmed = flag(&e->v[3])};
		if (first < sweep.nruns)
			findings_key(&sweep.runs[first], one.key, sizeof(one.key));
		fs[kept++] = one;
	}
	(void)n;
	for (size_t f = 0; f < kept; f++) {
		struct path *p;
		fs[f].paths = findings_paths(f, &p);
		free(p);
	}
	return kept;
}

/* Target t's results into the globals; its groups and counts. */
static size_t load(const struct target *t, size_t i, struct finding **fs, size_t *counts)
{
	const struct segment *s = journal_segment(i);
	bool has_runs = strcmp(t->state, "done") == 0 || strcmp(t->state, "interrupted") == 0;
	opt.argv = t->argv;
	if (!t->input[0] || !realpath(t->input, opt.input))
		snprintf(opt.input, sizeof(opt.input), "%s", t->input);
	opt.env = t->env;
	const struct jval *tg = has_runs ? s->target : NULL;
	sweep.eligible = (uint64_t)num(tg, "eligible");
	sweep.nsites = (size_t)num(tg, "sites");
	sweep.rec_status = (int)num(tg, "rec_status");
	sweep.unstable = tg && json_get(tg, "unstable") && json_get(tg, "unstable")->b;
	sweep.by_call = tg && json_get(tg, "by_call") && json_get(tg, "by_call")->b;
	snprintf(sweep.prog_path, sizeof(sweep.prog_path), "%s",
	         tg && json_str(tg, "program") ? json_str(tg, "program") : "");
	size_t n = has_runs ? s->nruns : 0;
	const struct jval **lines = xrealloc(NULL, (n + 1) * sizeof(*lines));
	memcpy(lines, s->runs, n * sizeof(*lines));
	qsort(lines, n, sizeof(*lines), line_cmp);
	sweep.runs = xrealloc(sweep.runs, (n + 1) * sizeof(*sweep.runs));
	sweep.nruns = n;
	for (size_t r = 0; r < n; r++) {
		journal_restore(lines[r], &sweep.runs[r]);
		sweep.runs[r].idx = (int)r + 1;
		if (is_finding(sweep.runs[r].outcome))
			put_stderr(&sweep.runs[r], json_str(lines[r], "stderr"));
	}
	free(lines);
	*fs = xrealloc(NULL, (n + 1) * sizeof(**fs));
	memset(counts, 0, O_COUNT * sizeof(*counts));
	size_t planned = (size_t)num(s->done ? s->done : tg, "planned");
	sweep.interrupted = strcmp(t->state, "interrupted") == 0;
	sweep.runs_done = n;
	sweep.runs_planned = planned > n ? planned : n;
	if (s->done && has_runs)
		return done_findings(s->done, *fs, counts);
	/* Interrupted: grouped, not confirmed (the sweep was stopped). */
	return confirm_findings(*fs, counts);
}

/* The reports' loop over the targets: each target's results loaded into
 * the model (opt.argv, sweep.runs, ...) as after a sweep of it alone, then
 * fn with its findings and counts. */
typedef void target_fn(void *ctx, const struct target *t, struct finding *fs, size_t nfs,
                       const size_t *counts);

static void each_target(target_fn *fn, void *ctx)
{
	for (size_t i = 0; i < ntargets; i++) {
		struct finding *fs;
		size_t counts[O_COUNT];
		size_t nfs = load(&targets[i], i, &fs, counts);
		fn(ctx, &targets[i], fs, nfs, counts);
		free(fs);
	}
	opt.env = NULL;
}

/* ------------------------------------------------------------------------
 * The whole campaign's numbers, and the console
 * ---------------------------------------------------------------------- */

struct totals {
	size_t runs, counts[O_COUNT], states[4], fail, findings;
};
static const char *const states[4] = {"done", "interrupted", "not_run", "error"};

static void add_up(void *ctx, const struct target *t, struct finding *fs, size_t nfs,
                   const size_t *counts)
{
	struct totals *tot = ctx;
	tot->runs += sweep.nruns;
	tot->findings += nfs;
	for (int o = 0; o < O_COUNT; o++)
		tot->counts[o] += counts[o];
	for (int s = 0; s < 4; s++)
		tot->states[s] += strcmp(t->state, states[s]) == 0;
	tot->fail += findings_exit_status(fs, nfs) != 0;
}

static void console_target(void *ctx, const struct target *t, struct finding *fs, size_t nfs,
                           const size_t *counts)
{
	(void)ctx;
	printf("\n== target %s: ", t->id);
	reproducer_command(stdout);
	printf(" ==\n");
	if (t->error)
		printf("error: %s\n", t->error);
	else if (strcmp(t->state, "not_run") == 0)
		printf("not run: the campaign was stopped before it\n");
	else
		console_results(fs, nfs, counts);
}

/* ------------------------------------------------------------------------
 * --json: one object, a sweep object per target
 * ---------------------------------------------------------------------- */

static void json_target(void *ctx, const struct target *t, struct finding *fs, size_t nfs,
                        const size_t *counts)
{
	FILE *f = ctx;
	fprintf(f, "%s{\"id\":", t == targets ? "" : ",");
	text_json_str(f, t->id);
	fprintf(f, ",\"state\":\"%s\",", t->state);
	if (t->error) {
		fprintf(f, "\"error\":");
		text_json_str(f, t->error);
		fputc(',', f);
	}
	fprintf(f, "\"expected_status\":%d,\"stdin\":", t->status);
	opt.input[0] ? text_json_str(f, opt.input) : (void)fputs("null", f);
	fprintf(f, ",\"env\":{");
	for (char **e = t->env; *e; e++) {
		char *eq = strchr(*e, '=');
		*eq = '\0';
		fprintf(f, "%s", e == t->env ? "" : ",");
		text_json_str(f, *e);
		fputc(':', f);
		text_json_str(f, eq + 1);
		*eq = '=';
	}
	fprintf(f, "},");
	json_out_fields(f, fs, nfs, counts);
	fputc('}', f);
}

static void campaign_json(const char *path, const struct totals *tot)
{
	struct outfile o;
	FILE *f = report_file(&o, path);
	fprintf(f, "{\"gfp_sweep\":\"%s\",\"format\":2,\"campaign\":", GFP_VERSION);
	text_json_str(f, opt.campaign);
	fprintf(f, ",\"mode\":\"%s\",\"shard\":\"%d/%d\",\"interrupted\":%s,\"runs\":%zu,",
	        opt.mode, opt.shard_k, opt.shard_n, stop_requested() ? "true" : "false", tot->runs);
	fprintf(f, "\"outcomes\":{");
	for (int o = 0; o < O_COUNT; o++)
		fprintf(f, "%s\"%s\":%zu", o ? "," : "", outcome_name[o], tot->counts[o]);
	fprintf(f, "},\"targets\":[");
	each_target(json_target, f);
	fprintf(f, "]}\n");
	report_done(&o);
}

/* ------------------------------------------------------------------------
 * --junit: a testsuite per target
 * ---------------------------------------------------------------------- */

struct junit_ctx {
	FILE *f;
	const struct report_head *h;
};

static void junit_target(void *ctx, const struct target *t, struct finding *fs, size_t nfs,
                         const size_t *counts)
{
	struct junit_ctx *j = ctx;
	FILE *f = j->f;
	if (strcmp(t->state, "done") == 0 || strcmp(t->state, "interrupted") == 0) {
		junit_testsuite(f, j->h, fs, nfs, counts, t->id);
		return;
	}
	bool error = t->error != NULL;
	fprintf(f, "  <testsuite name=\"gfp-sweep ");
	markup_esc(f, t->id, true);
	fprintf(f, "\" tests=\"1\" failures=\"0\" errors=\"%d\" skipped=\"%d\">\n", error, !error);
	fprintf(f, "    <testcase classname=\"");
	markup_esc(f, t->id, true);
	fprintf(f, "\" name=\"recording run\">\n      <%s message=\"", error ? "error" : "skipped");
	markup_esc(f, error ? t->error : "not run: the campaign was stopped before it", true);
	fprintf(f, "\"/>\n    </testcase>\n  </testsuite>\n");
}

static void campaign_junit(const char *path, const struct totals *tot)
{
	struct report_head h;
	report_open(&h, path, tot->counts, "%Y-%m-%dT%H:%M:%S");
	fprintf(h.f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(h.f,
	        "<testsuites name=\"gfp-sweep campaign\" tests=\"%zu\" failures=\"%zu\" "
	        "errors=\"%zu\" time=\"%.3f\">\n",
	        tot->runs + tot->states[2] + tot->states[3], tot->findings, tot->states[3],
	        sweep_now() - sweep.started);
	struct junit_ctx j = {h.f, &h};
	each_target(junit_target, &j);
	fprintf(h.f, "</testsuites>\n");
	report_done(&h.out);
}

/* ------------------------------------------------------------------------
 * --html: an index page with a row per target, and each target's own page
 * (the sweep's, as for a sweep of it alone) beside it: FILE's name with
 * ".N-ID" before its extension. One page per target keeps each page's
 * table, filters and links (its URL fragment) its own.
 * ---------------------------------------------------------------------- */

struct html_ctx {
	const char *path;
	FILE *index;
	size_t n;
};

/* FILE's name with ".N-ID" before its extension, ID's unsafe bytes as '_'. */
static void target_page(const char *path, size_t n, const char *id, char *out, size_t len)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (!dot || (slash && dot < slash))
		dot = path + strlen(path);
	char safe[64];
	size_t k = 0;
	for (const char *c = id; *c && k + 1 < sizeof(safe); c++)
		safe[k++] = (isalnum((unsigned char)*c) || *c == '-' || *c == '_') ? *c : '_';
	safe[k] = '\0';
	snprintf(out, len, "%.*s.%zu-%s%s", (int)(dot - path), path, n, safe, dot);
}

void campaign_out_check_pages(const struct target *ts, size_t n)
{
	char page[PATH_MAX];
	for (size_t i = 0; opt.html && i < n; i++) {
		target_page(opt.html, i + 1, ts[i].id, page, sizeof(page));
		report_check(page);
	}
}

static void html_target(void *ctx, const struct target *t, struct finding *fs, size_t nfs,
                        const size_t *counts)
{
	struct html_ctx *h = ctx;
	char page[PATH_MAX];
	target_page(h->path, ++h->n, t->id, page, sizeof(page));
	const char *base = strrchr(page, '/') ? strrchr(page, '/') + 1 : page;
	bool swept = strcmp(t->state, "done") == 0 || strcmp(t->state, "interrupted") == 0;
	fprintf(h->index, "<tr class=\"%s\"><td>", nfs ? "bad" : swept ? "good" : "none");
	if (swept) {
		html_write(page, fs, nfs, counts);
		fprintf(h->index, "<a href=\"");
		markup_esc(h->index, base, true);
		fprintf(h->index, "\">");
		markup_esc(h->index, t->id, false);
		fprintf(h->index, "</a>");
	} else {
		markup_esc(h->index, t->id, false);
	}
	fprintf(h->index, "</td><td>%s</td><td><code>", t->state);
	struct membuf m;
	reproducer_command(membuf_open(&m));
	markup_flush(&m, h->index, false);
	fprintf(h->index, "</code>");
	if (t->error) {
		fprintf(h->index, "<br>");
		markup_esc(h->index, t->error, false);
	}
	fprintf(h->index, "</td><td>%zu</td><td>%zu</td>", swept ? sweep.nruns : 0, nfs);
	for (int o = 0; o < O_COUNT; o++)
		fprintf(h->index, "<td>%zu</td>", counts[o]);
	fprintf(h->index, "</tr>\n");
}

static void campaign_html(const char *path, const struct totals *tot)
{
	struct report_head h;
	report_open(&h, path, tot->counts, "%Y-%m-%d %H:%M:%S");
	FILE *f = h.f;
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	           "<title>gfp-sweep campaign: ");
	markup_esc(f, opt.campaign, false);
	fprintf(f,
	        "</title>\n<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
	        "table{border-collapse:collapse}th,td{border-bottom:1px solid #ddd;padding:4px 8px;"
	        "text-align:left;vertical-align:top}td:nth-child(n+4){text-align:right}"
	        "tr.bad td:first-child{border-left:4px solid #c0392b}"
	        "tr.good td:first-child{border-left:4px solid #27ae60}"
	        "tr.none td:first-child{border-left:4px solid #999}code{font-size:12px}"
	        "</style></head>\n<body>\n<h1>gfp-sweep campaign</h1>\n<p><code>");
	markup_esc(f, opt.campaign, false);
	fprintf(f, "</code>: %zu target%s, %zu runs, %zu finding%s%s; started %s%s%s.</p>\n",
	        ntargets, ntargets == 1 ? "" : "s", tot->runs, tot->findings,
	        tot->findings == 1 ? "" : "s", stop_requested() ? " (interrupted)" : "", h.stamp,
	        h.host[0] ? " on " : "", h.host);
	fprintf(f, "<table>\n<tr><th>target</th><th>state</th><th>command</th><th>runs</th>"
	           "<th>findings</th>");
	for (int o = 0; o < O_COUNT; o++)
		fprintf(f, "<th>%s</th>", outcome_name[o]);
	fprintf(f, "</tr>\n");
	struct html_ctx c = {path, f, 0};
	each_target(html_target, &c);
	fprintf(f, "</table>\n<p>Each swept target's name opens its own page, as "
	           "<code>gfp-sweep --html</code> writes it for one program.</p>\n"
	           "</body></html>\n");
	report_done(&h.out);
}

int campaign_out_write(const struct target *ts, size_t n)
{
	targets = ts;
	ntargets = n;
	struct totals tot = {0};
	each_target(add_up, &tot);
	each_target(console_target, NULL);
	printf("\ncampaign %s: %zu target%s:", opt.campaign, n, n == 1 ? "" : "s");
	for (int s = 0; s < 4; s++)
		if (tot.states[s])
			printf(" %s %zu", states[s], tot.states[s]);
	printf("; %zu runs, outcomes:", tot.runs);
	for (int o = 0; o < O_COUNT; o++)
		if (tot.counts[o])
			printf(" %s %zu", outcome_name[o], tot.counts[o]);
	printf("\n");
	if (stop_requested())
		tool_error("stopped by SIG%s: the runs in flight were killed; %s keeps the runs "
		           "that finished, and the campaign run again goes on from them",
		           sigabbrev_np(stop_requested()), opt.state);
	if (opt.json)
		campaign_json(opt.json, &tot);
	if (opt.junit)
		campaign_junit(opt.junit, &tot);
	if (opt.html)
		campaign_html(opt.html, &tot);
	fflush(stdout);
	if (stop_requested())
		return 128 + stop_requested();
	return tot.states[3] ? EXIT_USAGE : tot.fail ? EXIT_FINDINGS : 0;
}
