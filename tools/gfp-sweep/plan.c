/*
 * plan.c - the plan: the failure points to try, from the sites and eligible
 * calls the recording run counted (sites or nth mode, --max-runs, --shard),
 * and the policy each is run with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

/* A site some of whose hits came before main: its runs count those too. */
static bool site_at_startup(const char *id)
{
	for (size_t i = 0; i < sweep.nsites; i++)
		if (strcmp(sweep.sites[i].id, id) == 0)
			return sweep.sites[i].startup > 0;
	return false;
}

/* nth mode: whether any call came before main, so that every run counts
 * calls as the recording run did. */
static bool calls_at_startup(void)
{
	for (size_t i = 0; i < sweep.nsites; i++)
		if (sweep.sites[i].startup)
			return true;
	return false;
}

static struct run *plan_add(const char *site, uint64_t hit)
{
	static size_t cap;
	if (sweep.nruns == cap) {
		cap = cap ? cap * 2 : 256;
		sweep.runs = realloc(sweep.runs, cap * sizeof(*sweep.runs));
		if (!sweep.runs)
			die(EXIT_USAGE, "out of memory");
	}
	struct run *r = &sweep.runs[sweep.nruns++];
	memset(r, 0, sizeof(*r));
	r->ev.offset = -1;
	snprintf(r->site, sizeof(r->site), "%s", site);
	r->hit = hit;
	r->count_startup = *site ? site_at_startup(site) : calls_at_startup();
	return r;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* floor(k * n / d) without overflowing k * n. */
static uint64_t spread(uint64_t k, uint64_t n, uint64_t d)
{
	return n / d * k + n % d * k / d;
}

/* nth mode: every call, or under --max-runs the first call of every site
 * (an even step alone skips the sites a program reaches once) and the rest
 * of the budget spread evenly over the other calls. */
static void plan_nth(void)
{
	uint64_t n = sweep.eligible, budget = (uint64_t)opt.max_runs;
	if (!opt.max_runs || n <= budget) {
		for (uint64_t i = 1; i <= n; i++)
			plan_add("", i);
		return;
	}
	uint64_t *firsts = malloc((sweep.nsites + 1) * sizeof(*firsts));
	if (!firsts)
		die(EXIT_USAGE, "out of memory");
	size_t nf = 0;
	for (size_t i = 0; i < sweep.nsites; i++)
		if (sweep.sites[i].first && sweep.sites[i].first <= n)
			firsts[nf++] = sweep.sites[i].first;
	qsort(firsts, nf, sizeof(*firsts), u64_cmp);
	size_t uniq = 0;
	for (size_t i = 0; i < nf; i++)
		if (!uniq || firsts[uniq - 1] != firsts[i])
			firsts[uniq++] = firsts[i];
	nf = uniq;
	if (nf < sweep.nsites)
		tool_warning("the recording run gave no first call for %zu of %zu sites: they "
		             "may get no run",
		             sweep.nsites - nf, sweep.nsites);
	if (nf >= budget) {
		tool_warning("%zu call sites but --max-runs %d: only the first calls of %d of "
		             "them, spread evenly, are tried",
		             nf, opt.max_runs, opt.max_runs);
		for (uint64_t k = 0; k < budget; k++)
			plan_add("", firsts[spread(k, nf, budget)]);
		free(firsts);
		return;
	}
	uint64_t rest = budget - nf, others = n - nf, pos = 0, k = 0;
	size_t f = 0;
	for (uint64_t i = 1; i <= n; i++) {
		if (f < nf && firsts[f] == i) {
			plan_add("", i);
			f++;
		} else if (k < rest && pos++ == spread(k, others, rest)) {
			plan_add("", i);
			k++;
		}
	}
	free(firsts);
}

/* sites mode: the first hit of every site, then every second hit, then
 * every last hit, so that --max-runs cuts the later hits first. */
static void plan_sites(void)
{
	for (int tier = 0; tier < 3; tier++)
		for (size_t i = 0; i < sweep.nsites; i++) {
			uint64_t h = sweep.sites[i].hits;
			/* 0 for a site other threads hit too: by hit */
			const unsigned long long *t =
			    sweep.by_call ? sweep.sites[i].tcalls : (unsigned long long[3]){0};
			if (tier == 0 && h >= 1)
				plan_add(sweep.sites[i].id, 1)->call = t[0];
			else if (tier == 1 && h >= 2)
				plan_add(sweep.sites[i].id, 2)->call = t[1];
			else if (tier == 2 && h >= 3)
				plan_add(sweep.sites[i].id, h)->call = t[2];
		}
	if (!opt.max_runs || sweep.nruns <= (size_t)opt.max_runs)
		return;
	if (sweep.nsites > (size_t)opt.max_runs)
		tool_warning("%zu call sites but --max-runs %d: %zu sites get no run", sweep.nsites,
		             opt.max_runs, sweep.nsites - (size_t)opt.max_runs);
	sweep.nruns = (size_t)opt.max_runs;
}

void plan_make(void)
{
	if (strcmp(opt.mode, "nth") == 0)
		plan_nth();
	else
		plan_sites();
	/* A deterministic split for --shard K/N. */
	size_t kept = 0;
	for (size_t i = 0; i < sweep.nruns; i++)
		if (i % (size_t)opt.shard_n == (size_t)opt.shard_k - 1)
			sweep.runs[kept++] = sweep.runs[i];
	sweep.nruns = kept;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* nth mode, after the runs: a thread can take a call number another one
 * had in the recording run, so the run at a site's first call may fail
 * another site. Each site whose first call this shard tried and that no run
 * failed gets one run by its id (fail.site, its first hit). Returns where
 * the added runs start. */
size_t plan_missed_sites(void)
{
	size_t from = sweep.nruns, missed = 0;
	const char **hit = malloc((sweep.nruns + 1) * sizeof(*hit));
	if (!hit)
		die(EXIT_USAGE, "out of memory");
	size_t nhit = 0;
	for (size_t i = 0; i < sweep.nruns; i++)
		if (sweep.runs[i].inj_site[0])
			hit[nhit++] = sweep.runs[i].inj_site;
	qsort(hit, nhit, sizeof(*hit), str_cmp);
	for (size_t i = 0; i < sweep.nsites; i++) {
		const char *id = sweep.sites[i].id;
		/* the plan is in call order: a binary search finds the site's run */
		size_t lo = 0, hi = from;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (sweep.runs[mid].hit < sweep.sites[i].first)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!sweep.sites[i].first || lo == from ||
		    sweep.runs[lo].hit != sweep.sites[i].first ||
		    bsearch(&id, hit, nhit, sizeof(*hit), str_cmp))
			continue;
		plan_add(id, 1);
		missed++;
	}
	free(hit);
	if (missed)
		tool_note("%zu site%s not failed by the run at %s first call (threads ordered "
		          "the calls differently): %zu more run%s, by site id",
		          missed, missed == 1 ? "" : "s", missed == 1 ? "its" : "their", missed,
		          missed == 1 ? "" : "s");
	return from;
}

void plan_policy(const struct run *r, char *out, size_t n)
{
	const char *startup = r->count_startup ? ";fail.startup=1" : "",
	           *persist = opt.persist ? ";fail.persist=1" : "";
	if (r->site[0])
		snprintf(out, n, "fail.site=%s;fail.site.hit=%llu%s%s", r->site,
		         (unsigned long long)r->hit, startup, persist);
	else
		snprintf(out, n, "fail.nth=%llu%s%s", (unsigned long long)r->hit, startup, persist);
}

void plan_run_policy(const struct run *r, char *out, size_t n)
{
	plan_policy(r, out, n);
	if (!sweep.by_call || !r->call || !r->site[0])
		return;
	/* Call numbers as the recording counted them: calls before main
	 * too when it did, whatever the site's own hits. */
	size_t len = strlen(out);
	snprintf(out + len, n - len, ";fail.site.call=%llu%s", (unsigned long long)r->call,
	         opt.startup && !r->count_startup ? ";fail.startup=1" : "");
}

const char *plan_point_kind(const struct run *r)
{
	return r->site[0] ? "hit" : "call";
}
