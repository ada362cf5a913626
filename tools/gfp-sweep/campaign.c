/*
 * campaign.c - gfp-sweep --campaign FILE: many targets in one file, swept
 * one after the other with the same -j, each run journalled as it finishes
 * (journal.c), so that a campaign stopped at any point goes on where it was
 * when it is run again, and gives the results an unbroken one gives.
 *
 * A target is swept exactly as `gfp-sweep -- ARGV < STDIN` with ENV would
 * sweep it (recording_run, plan_make, execute_runs, confirm_findings: the
 * same functions); only the runs the journal already holds are not run
 * again. The reports are made from the journal alone (campaign-out.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal.h"

static struct target *targets;
static size_t ntargets;

/* ------------------------------------------------------------------------
 * A target's environment, set for its runs and put back after
 * ---------------------------------------------------------------------- */

static char **saved;

static void env_apply(const struct target *t)
{
	size_t n = 0;
	while (t->env[n])
		n++;
	saved = xrealloc(NULL, (n + 1) * sizeof(*saved));
	for (size_t i = 0; i < n; i++) {
		char *eq = strchr(t->env[i], '=');
		*eq = '\0';
		const char *old = getenv(t->env[i]);
		saved[i] = old ? xstrdup(old) : NULL;
		setenv(t->env[i], eq + 1, 1);
		*eq = '=';
	}
}

static void env_restore(const struct target *t)
{
	for (size_t i = 0; t->env[i]; i++) {
		char *eq = strchr(t->env[i], '=');
		*eq = '\0';
		if (saved[i])
			setenv(t->env[i], saved[i], 1);
		else
			unsetenv(t->env[i]);
		*eq = '=';
		free(saved[i]);
	}
	free(saved);
}

/* ------------------------------------------------------------------------
 * Sweeping one target, the runs the journal has left out
 * ---------------------------------------------------------------------- */

static size_t cur;    /* the target being swept */
static char *cur_key; /* its key while its recording run goes: it may die() */
static size_t *pos;   /* runs[i]'s position in the target's plan */

static void journal_hook(const struct run *r)
{
	journal_run(cur, pos[r - sweep.runs], r);
}

static int key_cmp(const struct run *a, const struct run *b)
{
	int c = strcmp(a->site, b->site);
	return c ? c : (a->hit > b->hit) - (a->hit < b->hit);
}

static int run_cmp(const void *a, const void *b)
{
	return key_cmp(a, b);
}

static struct run *byplan;
static int pos_cmp(const void *a, const void *b)
{
	size_t x = pos[*(const size_t *)a], y = pos[*(const size_t *)b];
	return (x > y) - (x < y);
}

/* runs[from..nruns) into plan order again (their positions in pos). */
static void plan_order(size_t from)
{
	size_t n = sweep.nruns - from;
	size_t *ix = xrealloc(NULL, (n + 1) * sizeof(*ix));
	size_t *p = xrealloc(NULL, (n + 1) * sizeof(*p));
	byplan = xrealloc(byplan, (n + 1) * sizeof(*byplan));
	for (size_t i = 0; i < n; i++)
		ix[i] = from + i;
	qsort(ix, n, sizeof(*ix), pos_cmp);
	for (size_t i = 0; i < n; i++)
		byplan[i] = sweep.runs[ix[i]], p[i] = pos[ix[i]];
	memcpy(sweep.runs + from, byplan, n * sizeof(*sweep.runs));
	memcpy(pos + from, p, n * sizeof(*pos));
	free(ix);
	free(p);
}

/* Runs runs[from..nruns): those the journal has are taken from it and put
 * first, the others executed (and journalled), then all in plan order. */
static void run_phase(size_t from, const struct segment *s)
{
	pos = xrealloc(pos, (sweep.nruns + 1) * sizeof(*pos));
	for (size_t i = from; i < sweep.nruns; i++)
		pos[i] = i;
	struct run *kept = xrealloc(NULL, (s->nruns + 1) * sizeof(*kept));
	for (size_t i = 0; i < s->nruns; i++)
		journal_restore(s->runs[i], &kept[i]);
	qsort(kept, s->nruns, sizeof(*kept), run_cmp);
	size_t front = from;
	for (size_t i = from; i < sweep.nruns; i++) {
		struct run *k = bsearch(&sweep.runs[i], kept, s->nruns, sizeof(*kept), run_cmp);
		if (!k)
			continue;
		struct run r = *k;
		size_t p = pos[i];
		sweep.runs[i] = sweep.runs[front];
		pos[i] = pos[front];
		sweep.runs[front] = r;
		pos[front++] = p;
	}
	free(kept);
	if (front > from)
		tool_note("%zu of %zu runs finished before, taken from %s", front - from,
		          sweep.nruns - from, opt.state);
	execute_runs(front, journal_hook);
	plan_order(from);
}

/* Records the target's error: it is reported, and swept again next time. */
static void target_error(size_t t, const char *key, const char *why)
{
	tool_error("target %s: %s", targets[t].id, why);
	journal_error(t, key, why, false);
}

static bool recorded_same(const struct jval *target)
{
	double e = -1, s = -1, st = -1;
	const struct jval *u = json_get(target, "unstable"), *c = json_get(target, "by_call");
	json_num(target, "eligible", &e);
	json_num(target, "sites", &s);
	json_num(target, "rec_status", &st);
	return e == (double)sweep.eligible && s == (double)sweep.nsites && st == sweep.rec_status &&
	       u && u->b == sweep.unstable && c && c->b == sweep.by_call;
}

static void sweep_target(size_t t)
{
	struct target *tg = &targets[t];
	char why[PATH_MAX + 200], key[17];
	opt.argv = tg->argv;
	int bad = run_check_program(why, sizeof(why));
	targets_key(tg, key);
	const struct segment *s = journal_segment(t);
	bool same = s->target && s->key && strcmp(s->key, key) == 0;
	if ((same && s->done) || (s->fatal && s->key && strcmp(s->key, key) == 0))
		return;
	printf("\ngfp-sweep: target %s (%zu of %zu)\n", tg->id, t + 1, ntargets);
	fflush(stdout);
	if (bad) {
		target_error(t, key, why);
		return;
	}
	opt.input[0] = '\0';
	if (tg->input[0] && (!realpath(tg->input, opt.input) || access(opt.input, R_OK) != 0)) {
		snprintf(why, sizeof(why), "stdin %s: %s", tg->input, strerror(errno));
		target_error(t, key, why);
		return;
	}
	env_apply(tg);
	run_remove_tmp();
	run_make_tmp();
	sweep.nruns = sweep.nsites = 0;
	sweep.eligible = 0;
	sweep.unstable = false;
	sweep.by_call = false;
	progress_phase("target %s: recording run", tg->id);
	cur_key = key;
	recording_run();
	cur_key = NULL;
	if (!stop_requested() && sweep.rec_status != tg->status) {
		snprintf(why, sizeof(why), "without injection it exits %d, the campaign expects %d",
		         sweep.rec_status, tg->status);
		target_error(t, key, why);
	} else if (!stop_requested()) {
		plan_make();
		if (!same || !recorded_same(s->target))
			journal_target(t, key);
		console_header();
		run_phase(0, s);
		if (strcmp(opt.mode, "nth") == 0 && !stop_requested())
			run_phase(plan_missed_sites(), s);
		execute_keep_finished();
		struct finding *fs = xrealloc(NULL, (sweep.nruns + 1) * sizeof(*fs));
		size_t counts[O_COUNT] = {0};
		size_t nfs = confirm_findings(fs, counts);
		if (!stop_requested())
			journal_done(t, fs, nfs);
		free(fs);
	}
	env_restore(tg);
}

/* The state's default: beside the campaign file, one per shard. */
static void default_state(void)
{
	static char def[PATH_MAX + 64];
	if (opt.shard_n > 1)
		snprintf(def, sizeof(def), "%s.shard-%d-of-%d.state", opt.campaign, opt.shard_k,
		         opt.shard_n);
	else
		snprintf(def, sizeof(def), "%s.state", opt.campaign);
	opt.state = def;
}

/* recording_run() ends gfp-sweep when a recording run fails (the program crashes
 * without injection, writes no report): the target's error, "fatal", lets
 * the campaign run again go past it to the others. */
static void recording_died(void)
{
	if (cur_key)
		journal_error(cur, cur_key,
		              "its recording run failed (gfp-sweep's error said why): the "
		              "campaign stopped there, and goes past it when run again",
		              true);
}

/* What became of target t, from the journal: a target changed since its
 * lines were written (its key) has not been run as it is now. */
static void settle(size_t t)
{
	struct target *tg = &targets[t];
	const struct segment *s = journal_segment(t);
	char why[PATH_MAX + 200], key[17];
	opt.argv = tg->argv;
	run_check_program(why, sizeof(why));
	targets_key(tg, key);
	tg->error = NULL;
	if (!s->key || strcmp(s->key, key) != 0)
		tg->state = "not_run";
	else if (s->error) {
		tg->state = "error";
		tg->error = xstrdup(s->error);
	} else
		tg->state = s->done ? "done" : s->target ? "interrupted" : "not_run";
}

int campaign_run(void)
{
	ntargets = targets_load(opt.campaign, &targets);
	campaign_out_check_pages(targets, ntargets);
	if (!opt.state)
		default_state();
	journal_open(opt.state, targets, ntargets);
	atexit(recording_died);
	printf("gfp-sweep: campaign %s: %zu target%s, state %s\n", opt.campaign, ntargets,
	       ntargets == 1 ? "" : "s", opt.state);
	for (size_t t = 0; t < ntargets && !stop_requested(); t++) {
		cur = t;
		sweep_target(t);
	}
	for (size_t t = 0; t < ntargets; t++)
		settle(t);
	return campaign_out_write(targets, ntargets);
}
