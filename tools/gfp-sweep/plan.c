/*
 * plan.c - the recording run and the plan: the sites and eligible calls it
 * counted, and the failure points to try (sites or nth mode, --max-runs,
 * --shard).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "infile.h"
#include "record_reader.h"
#include "text.h"
#include "sweep.h"

/* ------------------------------------------------------------------------
 * The recording run and the plan
 * ---------------------------------------------------------------------- */

/* The recording run's sites (first: the eligible-call number of a site's
 * first hit, 0 if unknown). */
struct rec_site *sites;
size_t nsites;
uint64_t eligible;

/* Takes in the sites of one recording report; 0 when there is no report.
 * Every process counts its own calls and hits, and fail.nth and fail.site.hit
 * count within one process: a site seen by several processes keeps the most
 * hits one of them made, and the calls are the most one process made. */
/* Folds one site of a report into sites[]. */
static void add_site(void *ctx, const struct rec_site *one)
{
	static size_t cap;
	(void)ctx;
	size_t i = 0;
	while (i < nsites && strcmp(sites[i].id, one->id) != 0)
		i++;
	if (i == nsites) {
		if (nsites == cap) {
			cap = cap ? cap * 2 : 64;
			sites = realloc(sites, cap * sizeof(*sites));
			if (!sites)
				die(EXIT_USAGE, "out of memory");
		}
		sites[nsites++] = (struct rec_site){.hits = 0, .first = 0, .startup = 0};
		memcpy(sites[i].id, one->id, sizeof(one->id));
		memcpy(sites[i].tcalls, one->tcalls, sizeof(one->tcalls));
	}
	if (one->hits > sites[i].hits)
		sites[i].hits = one->hits;
	if (one->startup > sites[i].startup)
		sites[i].startup = one->startup;
	if (one->first && (!sites[i].first || one->first < sites[i].first))
		sites[i].first = one->first;
}

static size_t read_sites(const char *path)
{
	size_t len = 0;
	char *rep = infile_read(path, &len);
	if (!rep)
		return 0;
	struct jval v;
	char err[256];
	if (json_parse(rep, len, 1, &v, err, sizeof(err))) {
		unsigned long long calls = rec_sites(&v, add_site, NULL);
		if (calls > eligible)
			eligible = calls;
		json_free(&v);
	}
	free(rep);
	return 1;
}

/* Whether the report at path counted every site as sites[] did: the same
 * hits, and the same initial thread's call numbers of the first, second and
 * last (other threads' interleaving may move the process's numbers). */
static bool same_sites;
static size_t sites_seen;

static void check_site(void *ctx, const struct rec_site *one)
{
	(void)ctx;
	sites_seen++;
	size_t i = 0;
	while (i < nsites && strcmp(sites[i].id, one->id) != 0)
		i++;
	same_sites &= i < nsites && sites[i].hits == one->hits &&
	              sites[i].startup == one->startup &&
	              memcmp(sites[i].tcalls, one->tcalls, sizeof(one->tcalls)) == 0;
}

static bool recorded_again(const char *path)
{
	size_t len = 0;
	char *rep = infile_read(path, &len);
	struct jval v;
	char err[256];
	same_sites = rep && json_parse(rep, len, 1, &v, err, sizeof(err));
	sites_seen = 0;
	if (same_sites) {
		rec_sites(&v, check_site, NULL);
		json_free(&v);
	}
	free(rep);
	return same_sites && sites_seen == nsites;
}

void record(void)
{
	double t0 = now();
	/* Failure points before main too, unless --no-startup: their hits
	 * are counted only with fail.startup=1. */
	const char *rec_policy = opt.startup ? "stats=paths;fail.startup=1" : "stats=paths";
	pid_t pid = spawn(0, rec_policy, true);
	bool to;
	int st = wait_run(pid, t0, 600, &to);
	opt.rec_seconds = now() - t0;
	if (stop_requested())
		return; /* no plan: the reports say the sweep was stopped */
	if (to)
		die(EXIT_USAGE, "the recording run did not finish in 600 s");
	if (WIFSIGNALED(st))
		die(EXIT_USAGE,
		    "the recording run died by signal %d: the program crashes without "
		    "any injected failure",
		    WTERMSIG(st));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		die(EXIT_USAGE, "cannot run %s", opt.argv[0]);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 125) {
		char path[PATH_MAX + 16];
		run_paths(0, "err", path, sizeof(path));
		size_t len = 0;
		char *err = infile_read(path, &len);
		while (err && len && err[len - 1] == '\n') /* the message adds its own */
			err[--len] = '\0';
		die(125, "the shim refused the policy:\n%s", err ? err : "");
	}
	/* The report, or with --follow those of every process it ran. */
	char path[PATH_MAX + 16];
	run_paths(0, "report", path, sizeof(path));
	size_t reports = 0;
	if (opt.follow) {
		DIR *d = opendir(opt.tmp);
		for (struct dirent *e; d && (e = readdir(d));) {
			if (strncmp(e->d_name, "0.report.", 9) != 0)
				continue;
			char one[PATH_MAX + 300];
			snprintf(one, sizeof(one), "%s/%s", opt.tmp, e->d_name);
			reports += read_sites(one);
		}
		if (d)
			closedir(d);
	} else {
		reports = read_sites(path);
	}
	if (!reports)
		die(EXIT_USAGE,
		    "the recording run wrote no report: is %s a dynamically linked "
		    "program that exits normally?",
		    opt.argv[0]);
	opt.rec_status = WEXITSTATUS(st);
	/* A second run without injection: output that changes by itself
	 * (times, addresses) says nothing of data lost. In sites mode it
	 * records too, so that a program that allocates the same way twice can
	 * be failed by call number (one process: --follow's are counted each
	 * alone). */
	bool by_call = !opt.by_hit && !opt.follow && strcmp(opt.mode, "sites") == 0;
	pid = spawn(-1, by_call ? rec_policy : "", by_call);
	t0 = now();
	int st2 = wait_run(pid, t0, 600, &to);
	if (stop_requested())
		return;
	struct output rec = read_output(0);
	opt.unstable = to || st2 != st || !same_output(-1, &rec);
	run_paths(-1, "report", path, sizeof(path));
	opt.by_call = by_call && !to && st2 == st && recorded_again(path);
	if (opt.unstable)
		tool_note("two runs of %s without injection wrote different output or exited "
		          "differently: silent data losses are not looked for",
		          opt.argv[0]);
	free(rec.text);
}

struct run *runs;
size_t nruns;

/* A site some of whose hits came before main: its runs count those too. */
static bool site_at_startup(const char *id)
{
	for (size_t i = 0; i < nsites; i++)
		if (strcmp(sites[i].id, id) == 0)
			return sites[i].startup > 0;
	return false;
}

/* nth mode: whether any call came before main, so that every run counts
 * calls as the recording run did. */
static bool calls_at_startup(void)
{
	for (size_t i = 0; i < nsites; i++)
		if (sites[i].startup)
			return true;
	return false;
}

static struct run *plan_add(const char *site, uint64_t hit)
{
	static size_t cap;
	if (nruns == cap) {
		cap = cap ? cap * 2 : 256;
		runs = realloc(runs, cap * sizeof(*runs));
		if (!runs)
			die(EXIT_USAGE, "out of memory");
	}
	struct run *r = &runs[nruns++];
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
	uint64_t n = eligible, budget = (uint64_t)opt.max_runs;
	if (!opt.max_runs || n <= budget) {
		for (uint64_t i = 1; i <= n; i++)
			plan_add("", i);
		return;
	}
	uint64_t *firsts = malloc((nsites + 1) * sizeof(*firsts));
	if (!firsts)
		die(EXIT_USAGE, "out of memory");
	size_t nf = 0;
	for (size_t i = 0; i < nsites; i++)
		if (sites[i].first && sites[i].first <= n)
			firsts[nf++] = sites[i].first;
	qsort(firsts, nf, sizeof(*firsts), u64_cmp);
	size_t uniq = 0;
	for (size_t i = 0; i < nf; i++)
		if (!uniq || firsts[uniq - 1] != firsts[i])
			firsts[uniq++] = firsts[i];
	nf = uniq;
	if (nf < nsites)
		tool_warning("the recording run gave no first call for %zu of %zu sites: they "
		             "may get no run",
		             nsites - nf, nsites);
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
		for (size_t i = 0; i < nsites; i++) {
			uint64_t h = sites[i].hits;
			/* 0 for a site other threads hit too: by hit */
			const unsigned long long *t =
			    opt.by_call ? sites[i].tcalls : (unsigned long long[3]){0};
			if (tier == 0 && h >= 1)
				plan_add(sites[i].id, 1)->call = t[0];
			else if (tier == 1 && h >= 2)
				plan_add(sites[i].id, 2)->call = t[1];
			else if (tier == 2 && h >= 3)
				plan_add(sites[i].id, h)->call = t[2];
		}
	if (!opt.max_runs || nruns <= (size_t)opt.max_runs)
		return;
	if (nsites > (size_t)opt.max_runs)
		tool_warning("%zu call sites but --max-runs %d: %zu sites get no run", nsites,
		             opt.max_runs, nsites - (size_t)opt.max_runs);
	nruns = (size_t)opt.max_runs;
}

void plan(void)
{
	if (strcmp(opt.mode, "nth") == 0)
		plan_nth();
	else
		plan_sites();
	/* A deterministic split for --shard K/N. */
	size_t kept = 0;
	for (size_t i = 0; i < nruns; i++)
		if (i % (size_t)opt.shard_n == (size_t)opt.shard_k - 1)
			runs[kept++] = runs[i];
	nruns = kept;
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
	size_t from = nruns, missed = 0;
	const char **hit = malloc((nruns + 1) * sizeof(*hit));
	if (!hit)
		die(EXIT_USAGE, "out of memory");
	size_t nhit = 0;
	for (size_t i = 0; i < nruns; i++)
		if (runs[i].inj_site[0])
			hit[nhit++] = runs[i].inj_site;
	qsort(hit, nhit, sizeof(*hit), str_cmp);
	for (size_t i = 0; i < nsites; i++) {
		const char *id = sites[i].id;
		/* the plan is in call order: a binary search finds the site's run */
		size_t lo = 0, hi = from;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (runs[mid].hit < sites[i].first)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!sites[i].first || lo == from || runs[lo].hit != sites[i].first ||
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

void policy_of(const struct run *r, char *out, size_t n)
{
	const char *startup = r->count_startup ? ";fail.startup=1" : "",
	           *persist = opt.persist ? ";fail.persist=1" : "";
	if (r->site[0])
		snprintf(out, n, "fail.site=%s;fail.site.hit=%llu%s%s", r->site,
		         (unsigned long long)r->hit, startup, persist);
	else
		snprintf(out, n, "fail.nth=%llu%s%s", (unsigned long long)r->hit, startup, persist);
}

void run_policy_of(const struct run *r, char *out, size_t n)
{
	policy_of(r, out, n);
	if (!opt.by_call || !r->call || !r->site[0])
		return;
	/* Call numbers as the recording counted them: calls before main
	 * too when it did, whatever the site's own hits. */
	size_t len = strlen(out);
	snprintf(out + len, n - len, ";fail.site.call=%llu%s", (unsigned long long)r->call,
	         opt.startup && !r->count_startup ? ";fail.startup=1" : "");
}
