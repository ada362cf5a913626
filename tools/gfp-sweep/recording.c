/*
 * recording.c - the recording run: the program run once without injection
 * (stats=paths, and fail.startup=1 unless --no-startup) for the sites and
 * eligible calls the plan is made of, then once more, to tell output that
 * changes by itself and, in sites mode, whether its hits come at the same
 * call numbers every time.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "infile.h"
#include "sweep.h"

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
	while (i < sweep.nsites && strcmp(sweep.sites[i].id, one->id) != 0)
		i++;
	if (i == sweep.nsites) {
		if (sweep.nsites == cap) {
			cap = cap ? cap * 2 : 64;
			sweep.sites = realloc(sweep.sites, cap * sizeof(*sweep.sites));
			if (!sweep.sites)
				die(EXIT_USAGE, "out of memory");
		}
		sweep.sites[sweep.nsites++] =
		    (struct rec_site){.hits = 0, .first = 0, .startup = 0};
		memcpy(sweep.sites[i].id, one->id, sizeof(one->id));
		memcpy(sweep.sites[i].tcalls, one->tcalls, sizeof(one->tcalls));
	}
	if (one->hits > sweep.sites[i].hits)
		sweep.sites[i].hits = one->hits;
	if (one->startup > sweep.sites[i].startup)
		sweep.sites[i].startup = one->startup;
	if (one->first && (!sweep.sites[i].first || one->first < sweep.sites[i].first))
		sweep.sites[i].first = one->first;
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
		if (calls > sweep.eligible)
			sweep.eligible = calls;
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
	while (i < sweep.nsites && strcmp(sweep.sites[i].id, one->id) != 0)
		i++;
	same_sites &= i < sweep.nsites && sweep.sites[i].hits == one->hits &&
	              sweep.sites[i].startup == one->startup &&
	              memcmp(sweep.sites[i].tcalls, one->tcalls, sizeof(one->tcalls)) == 0;
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
	return same_sites && sites_seen == sweep.nsites;
}

void recording_run(void)
{
	double t0 = sweep_now();
	/* Failure points before main too, unless --no-startup: their hits
	 * are counted only with fail.startup=1. */
	const char *rec_policy = opt.startup ? "stats=paths;fail.startup=1" : "stats=paths";
	pid_t pid = run_spawn(0, rec_policy, true);
	bool to;
	int st = run_wait(pid, t0, 600, &to);
	sweep.rec_seconds = sweep_now() - t0;
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
	sweep.rec_status = WEXITSTATUS(st);
	/* A second run without injection: output that changes by itself
	 * (times, addresses) says nothing of data lost. In sites mode it
	 * records too, so that a program that allocates the same way twice can
	 * be failed by call number (one process: --follow's are counted each
	 * alone). */
	bool by_call = !opt.by_hit && !opt.follow && strcmp(opt.mode, "sites") == 0;
	pid = run_spawn(-1, by_call ? rec_policy : "", by_call);
	t0 = sweep_now();
	int st2 = run_wait(pid, t0, 600, &to);
	if (stop_requested())
		return;
	struct output rec = run_read_output(0);
	sweep.unstable = to || st2 != st || !classify_same_output(-1, &rec);
	run_paths(-1, "report", path, sizeof(path));
	sweep.by_call = by_call && !to && st2 == st && recorded_again(path);
	if (sweep.unstable)
		tool_note("two runs of %s without injection wrote different output or exited "
		          "differently: silent data losses are not looked for",
		          opt.argv[0]);
	free(rec.text);
}
