/*
 * gfp-sweep - drive a program through its allocation failure points and
 * report every crash, hang and silent data loss behind one.
 *
 *   gfp-sweep [--mode sites|nth] [-j N] [--timeout S] [--max-runs N] [--shard K/N]
 *             [--policy STR] [--persist] [--follow] [--no-junk] [--json F] -- PROG ARGS
 *
 * A recording run (stats=sites) counts the eligible calls and the distinct
 * call sites with their hits; then one run per failure point - the first,
 * second and last hit of every site, or every Nth call - each with the
 * recording run's environment and input. Runs are classified by their exit,
 * their output and the shim's records (GFP_RECORD), and findings are grouped
 * by (injection site, outcome, crash site); each group gets a reproducer that
 * the sweep re-runs once to confirm.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "gfp_build.h"

#define EXIT_FINDINGS 1
#define EXIT_USAGE    2

enum outcome { O_OK, O_SILENT, O_HANDLED, O_ABORT, O_CRASH, O_HANG, O_UNREACHED, O_COUNT };
static const char *const outcome_name[O_COUNT] = {"ok",	   "silent", "handled",  "abort",
						  "crash", "hang",   "unreached"};
static bool is_finding(enum outcome o)
{
	return o == O_SILENT || o == O_CRASH || o == O_HANG;
}

struct run {
	char site[17];	   /* sites mode: the site to fail */
	char inj_site[17]; /* the site that failed, from the injection record */
	uint64_t hit;	 /* sites mode: which hit; nth mode: N */
	enum outcome outcome;
	int status, signal;
	char inj_frames[2048]; /* from the injection record */
	char crash_frames[2048];
	char crash_top[160]; /* the crash site: top frame's module+offset */
	pid_t pid;
	double started;
};

static struct {
	const char *mode, *policy, *json;
	int jobs, timeout_s, max_runs, shard_k, shard_n;
	bool persist, follow, junk;
	char **argv;
	char lib[PATH_MAX], tmp[512], input[600], rec_out[600];
	double rec_seconds;
} opt = {.mode = "sites", .jobs = 0, .timeout_s = 0, .max_runs = 0, .shard_k = 1, .shard_n = 1,
	 .junk = true};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gfp-sweep: error: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(code);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf)
		die(EXIT_USAGE, "out of memory reading %s", path);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* ------------------------------------------------------------------------
 * Running the program
 * ---------------------------------------------------------------------- */

static void run_paths(int idx, const char *what, char *out, size_t n)
{
	snprintf(out, n, "%s/%d.%s", opt.tmp, idx, what);
}

/* Starts PROG with the extra policy; its stdout, stderr, log and records go
 * to files named after idx. */
static pid_t spawn(int idx, const char *policy, bool recording)
{
	char out[PATH_MAX + 16], err[PATH_MAX + 16], rec[PATH_MAX + 16], rep[PATH_MAX + 16];
	run_paths(idx, "out", out, sizeof(out));
	run_paths(idx, "err", err, sizeof(err));
	run_paths(idx, "rec", rec, sizeof(rec));
	run_paths(idx, "report", rep, sizeof(rep));
	pid_t pid = fork();
	if (pid < 0)
		die(EXIT_USAGE, "fork: %s", strerror(errno));
	if (pid > 0)
		return pid;
	setpgid(0, 0);
	int in = open(opt.input[0] ? opt.input : "/dev/null", O_RDONLY);
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || o < 0 || e < 0)
		_exit(126);
	dup2(in, 0);
	dup2(o, 1);
	dup2(e, 2);
	char pol[4096];
	snprintf(pol, sizeof(pol), "%s%s%s", opt.policy ? opt.policy : "",
		 opt.policy && *opt.policy && *policy ? ";" : "", policy);
	setenv("GFP_POLICY", pol, 1);
	setenv("GFP_RECORD", rec, 1);
	setenv("GFP_LOG", err, 1);
	if (recording)
		setenv("GFP_REPORT", rep, 1);
	else
		unsetenv("GFP_REPORT");
	if (!opt.follow) {
		char pidbuf[32];
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)getpid());
		setenv("GFP_INJECT_PID", pidbuf, 1);
	}
	if (opt.junk) {
		/* Error paths that read uninitialised memory crash instead of
		 * passing by luck (jemalloc fills fresh allocations). */
		const char *mc = getenv("MALLOC_CONF");
		char conf[1024];
		snprintf(conf, sizeof(conf), "%s%sjunk:true", mc ? mc : "", mc && *mc ? "," : "");
		setenv("MALLOC_CONF", conf, 1);
	}
	tool_set_preload(opt.lib);
	execvp(opt.argv[0], opt.argv);
	_exit(127);
}

/* Waits for pid with a timeout; kills its process group on expiry. */
static int wait_run(pid_t pid, double started, double timeout, bool *timed_out)
{
	int st = 0;
	*timed_out = false;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (timeout > 0 && now() - started > timeout) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			*timed_out = true;
			return st;
		}
		usleep(2000);
	}
}

/* Source lines for the program's own frames, from its debug information
 * (addr2line, with the chain of inlined functions): "make_title
 * inventory.c:100 < main inventory.c:480". */
static char prog_path[PATH_MAX];

static void source_of(const char *module, const char *offset, char *out, size_t n)
{
	out[0] = '\0';
	const char *base = strrchr(prog_path, '/');
	base = base ? base + 1 : prog_path;
	if (!prog_path[0] || strcmp(module, base) != 0)
		return;
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof(cmd), "addr2line -f -i -e '%s' %s 2>/dev/null", prog_path, offset);
	FILE *p = popen(cmd, "r");
	if (!p)
		return;
	char fn[256], loc[512];
	size_t len = 0;
	while (fgets(fn, sizeof(fn), p) && fgets(loc, sizeof(loc), p)) {
		fn[strcspn(fn, "\n")] = '\0';
		loc[strcspn(loc, "\n")] = '\0';
		if (strncmp(loc, "??", 2) == 0)
			continue;
		const char *file = strrchr(loc, '/');
		file = file ? file + 1 : loc;
		int w = snprintf(out + len, n - len, "%s%s %s", len ? " < " : "", fn, file);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
	pclose(p);
}

/* The frames as printed, with source lines where the program has them. */
static void print_frames(const char *frames)
{
	for (const char *line = frames; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[600], mod[128] = "", off[32] = "", src[600];
		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		const char *paren = strrchr(buf, '(');
		if (paren && sscanf(paren, "(%127[^+]+%31[^)])", mod, off) == 2)
			source_of(mod, off, src, sizeof(src));
		else
			src[0] = '\0';
		if (src[0])
			printf("    %s (%s+%s)\n", src, mod, off);
		else
			printf("%s\n", buf);
		line = nl ? nl + 1 : line + len;
	}
}

/* ------------------------------------------------------------------------
 * Reading records (one JSON object per line, written by the shim)
 * ---------------------------------------------------------------------- */

static const char *find_event(const char *text, const char *event)
{
	char key[64];
	snprintf(key, sizeof(key), "{\"event\":\"%s\"", event);
	return strstr(text, key);
}

/* Frames of one record as lines "module+offset symbol"; *top gets the
 * first frame outside libc, the crash site. */
static void frames_of(const char *rec, char *out, size_t n, char *top, size_t topn)
{
	out[0] = '\0';
	if (top)
		top[0] = '\0';
	const char *end = strchr(rec, '\n');
	const char *p = strstr(rec, "\"frames\":[");
	size_t len = 0;
	while (p && (!end || p < end) && (p = strstr(p, "{\"module\":\"")) && (!end || p < end)) {
		char mod[128] = "", off[32] = "", sym[160] = "";
		sscanf(p, "{\"module\":\"%127[^\"]\",\"offset\":\"%31[^\"]\"", mod, off);
		const char *s = strstr(p, "\"symbol\":\"");
		const char *close = strchr(p, '}');
		if (s && close && s < close)
			sscanf(s, "\"symbol\":\"%159[^\"]\"", sym);
		int w = snprintf(out + len, n - len, "    %s%s(%s+%s)\n", sym, *sym ? " " : "", mod,
				 off);
		if (w > 0 && (size_t)w < n - len)
			len += (size_t)w;
		if (top && !top[0] && strcmp(mod, "libc.so.6") != 0 && strcmp(mod, LIB_NAME) != 0)
			snprintf(top, topn, "%s+%s %s", mod, off, sym);
		p = close ? close + 1 : p + 1;
	}
}

/* An abort the program chose (xmalloc's "out of memory") rather than one
 * raised by a check that found memory corrupt. */
static bool crash_is_memory(const char *crash)
{
	if (!crash)
		return false;
	const char *end = strchr(crash, '\n');
	static const char *const markers[] = {"libjemalloc", "__assert_fail", "__fortify_fail",
					      "__stack_chk_fail", "malloc_printerr", "__libc_message"};
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		const char *m = strstr(crash, markers[i]);
		if (m && (!end || m < end))
			return true;
	}
	return false;
}

static void classify(struct run *r, int idx, int st, bool timed_out, const char *rec_out)
{
	char path[PATH_MAX + 16];
	run_paths(idx, "rec", path, sizeof(path));
	char *rec = slurp(path, NULL);
	const char *inj = rec ? find_event(rec, "injection") : NULL;
	const char *crash = rec ? find_event(rec, "crash") : NULL;
	if (inj) {
		frames_of(inj, r->inj_frames, sizeof(r->inj_frames), NULL, 0);
		const char *site = strstr(inj, "\"site\":\"");
		if (site)
			sscanf(site, "\"site\":\"%16[0-9a-f]\"", r->inj_site);
	}
	if (crash)
		frames_of(crash, r->crash_frames, sizeof(r->crash_frames), r->crash_top,
			  sizeof(r->crash_top));
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	if (timed_out)
		r->outcome = O_HANG;
	else if (!inj)
		r->outcome = O_UNREACHED;
	else if (r->signal == SIGABRT && !crash_is_memory(crash))
		r->outcome = O_ABORT;
	else if (r->signal)
		r->outcome = O_CRASH;
	else if (r->status != 0)
		r->outcome = O_HANDLED;
	else {
		run_paths(idx, "out", path, sizeof(path));
		char *out = slurp(path, NULL);
		r->outcome = out && strcmp(out, rec_out) == 0 ? O_OK : O_SILENT;
		free(out);
	}
	free(rec);
}

/* ------------------------------------------------------------------------
 * The recording run and the plan
 * ---------------------------------------------------------------------- */

struct site {
	char id[17];
	uint64_t hits;
};

static struct site *sites;
static size_t nsites;
static uint64_t eligible;

static void record(void)
{
	double t0 = now();
	pid_t pid = spawn(0, "stats=sites", true);
	bool to;
	int st = wait_run(pid, t0, 600, &to);
	opt.rec_seconds = now() - t0;
	if (to)
		die(EXIT_USAGE, "the recording run did not finish in 600 s");
	if (WIFSIGNALED(st))
		die(EXIT_USAGE, "the recording run died by signal %d: the program crashes without "
				"any injected failure",
		    WTERMSIG(st));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		die(EXIT_USAGE, "cannot run %s", opt.argv[0]);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 125) {
		char path[PATH_MAX + 16];
		run_paths(0, "err", path, sizeof(path));
		char *err = slurp(path, NULL);
		die(125, "the shim refused the policy:\n%s", err ? err : "");
	}
	char path[PATH_MAX + 16];
	run_paths(0, "report", path, sizeof(path));
	char *rep = slurp(path, NULL);
	if (!rep)
		die(EXIT_USAGE, "the recording run wrote no report: is %s a dynamically linked "
				"program that exits normally?",
		    opt.argv[0]);
	const char *e = strstr(rep, "\"eligible_calls\":");
	if (e)
		eligible = strtoull(e + 17, NULL, 10);
	size_t cap = 64;
	sites = calloc(cap, sizeof(*sites));
	for (const char *p = strstr(rep, "\"sites\":["); p && (p = strstr(p, "{\"site\":\""));) {
		if (nsites == cap) {
			cap *= 2;
			sites = realloc(sites, cap * sizeof(*sites));
		}
		if (!sites)
			die(EXIT_USAGE, "out of memory");
		struct site *st2 = &sites[nsites];
		unsigned long long hits = 0;
		if (sscanf(p, "{\"site\":\"%16[0-9a-f]\",\"hits\":%llu", st2->id, &hits) == 2) {
			st2->hits = hits;
			nsites++;
		}
		p++;
	}
	free(rep);
	run_paths(0, "out", opt.rec_out, sizeof(opt.rec_out));
}

static struct run *runs;
static size_t nruns;

static void plan_add(const char *site, uint64_t hit)
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
	snprintf(r->site, sizeof(r->site), "%s", site);
	r->hit = hit;
}

static void plan(void)
{
	if (strcmp(opt.mode, "nth") == 0) {
		uint64_t n = eligible, step = 1;
		if (opt.max_runs && n > (uint64_t)opt.max_runs)
			step = (n + (uint64_t)opt.max_runs - 1) / (uint64_t)opt.max_runs;
		for (uint64_t i = 1; i <= n; i += step)
			plan_add("", i);
	} else {
		for (size_t i = 0; i < nsites; i++) {
			uint64_t h = sites[i].hits, picks[3] = {1, 2, h};
			for (int k = 0; k < 3; k++) {
				bool dup = picks[k] > h || (k == 1 && picks[1] == picks[0]) ||
					   (k == 2 && (picks[2] == picks[0] || picks[2] == picks[1]));
				if (!dup)
					plan_add(sites[i].id, picks[k]);
			}
		}
		if (opt.max_runs && nruns > (size_t)opt.max_runs)
			nruns = (size_t)opt.max_runs; /* the first hits of every site come first */
	}
	/* A deterministic split for --shard K/N. */
	size_t kept = 0;
	for (size_t i = 0; i < nruns; i++)
		if (i % (size_t)opt.shard_n == (size_t)opt.shard_k - 1)
			runs[kept++] = runs[i];
	nruns = kept;
}

static void policy_of(const struct run *r, char *out, size_t n)
{
	if (r->site[0])
		snprintf(out, n, "fail.site=%s;fail.site.hit=%llu%s", r->site,
			 (unsigned long long)r->hit, opt.persist ? ";fail.persist=1" : "");
	else
		snprintf(out, n, "fail.nth=%llu%s", (unsigned long long)r->hit,
			 opt.persist ? ";fail.persist=1" : "");
}

/* ------------------------------------------------------------------------
 * Running the plan, -j at a time
 * ---------------------------------------------------------------------- */

static double run_timeout(void)
{
	if (opt.timeout_s)
		return opt.timeout_s;
	double t = opt.rec_seconds * 10;
	return t < 2 ? 2 : t;
}

static void execute(void)
{
	char *rec_out = slurp(opt.rec_out, NULL);
	if (!rec_out)
		rec_out = strdup("");
	size_t next = 0, done = 0, active = 0;
	int *slot_run = calloc((size_t)opt.jobs, sizeof(int));
	bool tty = isatty(2);
	double t0 = now();
	while (done < nruns) {
		while (active < (size_t)opt.jobs && next < nruns) {
			for (int s = 0; s < opt.jobs; s++) {
				if (slot_run[s])
					continue;
				char pol[512];
				policy_of(&runs[next], pol, sizeof(pol));
				runs[next].started = now();
				runs[next].pid = spawn((int)next + 1, pol, false);
				slot_run[s] = (int)next + 1;
				next++;
				active++;
				break;
			}
		}
		for (int s = 0; s < opt.jobs; s++) {
			if (!slot_run[s])
				continue;
			struct run *r = &runs[slot_run[s] - 1];
			int st;
			pid_t w = waitpid(r->pid, &st, WNOHANG);
			bool to = false;
			if (w == 0 && now() - r->started > run_timeout()) {
				kill(-r->pid, SIGKILL);
				kill(r->pid, SIGKILL);
				waitpid(r->pid, &st, 0);
				to = true;
				w = r->pid;
			}
			if (w != r->pid)
				continue;
			classify(r, slot_run[s], st, to, rec_out);
			slot_run[s] = 0;
			active--;
			done++;
			if (tty) {
				double el = now() - t0, eta = el / (double)done * (double)(nruns - done);
				fprintf(stderr, "\r%zu/%zu runs, %.0fs left   ", done, nruns, eta);
			}
		}
		usleep(1000);
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
	free(slot_run);
	free(rec_out);
}

/* ------------------------------------------------------------------------
 * Groups and the report
 * ---------------------------------------------------------------------- */

struct group {
	size_t first;	 /* index of the first run */
	size_t count;
	bool confirmed;
};

static bool same_group(const struct run *a, const struct run *b)
{
	return a->outcome == b->outcome && strcmp(a->crash_top, b->crash_top) == 0 &&
	       strcmp(a->inj_site, b->inj_site) == 0;
}

static void shell_quote(FILE *f, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "/._-=+:,") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

static void reproducer(FILE *f, const struct run *r)
{
	char pol[512];
	policy_of(r, pol, sizeof(pol));
	fprintf(f, "gfp-run --policy ");
	shell_quote(f, pol);
	fprintf(f, " --");
	for (char **a = opt.argv; *a; a++) {
		fputc(' ', f);
		shell_quote(f, *a);
	}
	if (opt.input[0])
		fprintf(f, " < INPUT");
}

/* Re-runs a group's first failure point alone: the reproducer must give
 * the same outcome again. */
static bool confirm(const struct run *r, int idx)
{
	char pol[512];
	policy_of(r, pol, sizeof(pol));
	char *rec_out = slurp(opt.rec_out, NULL);
	struct run again = *r;
	double t0 = now();
	pid_t pid = spawn(idx, pol, false);
	bool to;
	int st = wait_run(pid, t0, run_timeout(), &to);
	classify(&again, idx, st, to, rec_out ? rec_out : "");
	free(rec_out);
	return again.outcome == r->outcome;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void write_json(const char *path, struct group *groups, size_t ngroups,
		       const size_t *counts)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
	fprintf(f, "{\"gfp_sweep\":\"%s\",\"mode\":\"%s\",\"program\":[", GFP_VERSION, opt.mode);
	for (char **a = opt.argv; *a; a++) {
		if (a != opt.argv)
			fputc(',', f);
		json_str(f, *a);
	}
	fprintf(f, "],\"shard\":\"%d/%d\",\"eligible_calls\":%llu,\"sites\":%zu,\"runs\":%zu,",
		opt.shard_k, opt.shard_n, (unsigned long long)eligible, nsites, nruns);
	fprintf(f, "\"outcomes\":{");
	for (int o = 0; o < O_COUNT; o++)
		fprintf(f, "%s\"%s\":%zu", o ? "," : "", outcome_name[o], counts[o]);
	fprintf(f, "},\"results\":[");
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		fprintf(f, "%s{\"site\":\"%s\",\"hit\":%llu,\"outcome\":\"%s\",\"status\":%d,"
			   "\"signal\":%d,\"injected_site\":\"%s\"}",
			i ? "," : "", r->site, (unsigned long long)r->hit, outcome_name[r->outcome],
			r->status, r->signal, r->inj_site);
	}
	fprintf(f, "],\"groups\":[");
	for (size_t g = 0; g < ngroups; g++) {
		const struct run *r = &runs[groups[g].first];
		char pol[512];
		policy_of(r, pol, sizeof(pol));
		fprintf(f, "%s{\"outcome\":\"%s\",\"count\":%zu,\"site\":\"%s\",\"policy\":",
			g ? "," : "", outcome_name[r->outcome], groups[g].count, r->inj_site);
		json_str(f, pol);
		fprintf(f, ",\"confirmed\":%s,\"signal\":%d,\"crash_site\":",
			groups[g].confirmed ? "true" : "false", r->signal);
		json_str(f, r->crash_top);
		fprintf(f, ",\"injection_frames\":");
		json_str(f, r->inj_frames);
		fprintf(f, ",\"crash_frames\":");
		json_str(f, r->crash_frames);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
	fclose(f);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gfp-sweep [--mode sites|nth] [-j N] [--timeout S] [--max-runs N]\n"
		"                 [--shard K/N] [--policy STR] [--persist] [--follow] [--no-junk]\n"
		"                 [--json FILE] -- PROG [ARGS...]\n"
		"Runs PROG once to record its allocation call sites, then once per failure point\n"
		"(sites: the first, second and last hit of every site; nth: every Nth call),\n"
		"and reports the crashes, hangs and silent data losses it finds.\n"
		"Exit status: 0 no finding, 1 findings, 2 usage errors.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mode", required_argument, NULL, 'm'},	   {"jobs", required_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 't'}, {"max-runs", required_argument, NULL, 'M'},
		{"shard", required_argument, NULL, 's'},   {"policy", required_argument, NULL, 'p'},
		{"persist", no_argument, NULL, 'P'},	   {"follow", no_argument, NULL, 'F'},
		{"no-junk", no_argument, NULL, 'J'},	   {"json", required_argument, NULL, 'o'},
		{"lib", required_argument, NULL, 'L'},	   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	const char *lib = NULL;
	while ((c = getopt_long(argc, argv, "+m:j:t:M:s:p:o:L:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': opt.mode = optarg; break;
		case 'j': opt.jobs = atoi(optarg); break;
		case 't': opt.timeout_s = atoi(optarg); break;
		case 'M': opt.max_runs = atoi(optarg); break;
		case 's':
			if (sscanf(optarg, "%d/%d", &opt.shard_k, &opt.shard_n) != 2 ||
			    opt.shard_n < 1 || opt.shard_k < 1 || opt.shard_k > opt.shard_n)
				die(EXIT_USAGE, "--shard takes K/N with 1 <= K <= N, e.g. 2/4");
			break;
		case 'p': opt.policy = optarg; break;
		case 'P': opt.persist = true; break;
		case 'F': opt.follow = true; break;
		case 'J': opt.junk = false; break;
		case 'o': opt.json = optarg; break;
		case 'L': lib = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(opt.mode, "sites") != 0 && strcmp(opt.mode, "nth") != 0)
		die(EXIT_USAGE, "--mode is sites or nth, not '%s'", opt.mode);
	opt.argv = argv + optind;
	if (opt.jobs <= 0)
		opt.jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (opt.jobs <= 0)
		opt.jobs = 1;
	if (lib)
		snprintf(opt.lib, sizeof(opt.lib), "%s", lib);
	else if (!tool_find_library(opt.lib, sizeof(opt.lib)))
		die(EXIT_USAGE, "cannot find %s next to gfp-sweep or in %s", LIB_NAME, GFP_LIBDIR);
	char resolved[PATH_MAX];
	if (!tool_resolve(opt.argv[0], resolved, sizeof(resolved)))
		die(127, "%s: command not found", opt.argv[0]);
	if (!realpath(resolved, prog_path))
		prog_path[0] = '\0';
	if (tool_is_static_elf(resolved))
		die(126, "%s is statically linked: LD_PRELOAD cannot reach its allocations",
		    resolved);

	snprintf(opt.tmp, sizeof(opt.tmp), "%s/gfp-sweep.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(opt.tmp))
		die(EXIT_USAGE, "mkdtemp: %s", strerror(errno));
	/* The same input for every run: standard input, read once. */
	if (!isatty(0)) {
		snprintf(opt.input, sizeof(opt.input), "%s/input", opt.tmp);
		int fd = open(opt.input, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char buf[65536];
		ssize_t n;
		while (fd >= 0 && (n = read(0, buf, sizeof(buf))) > 0)
			if (write(fd, buf, (size_t)n) != n)
				break;
		struct stat st;
		if (fd >= 0)
			close(fd);
		if (stat(opt.input, &st) == 0 && st.st_size == 0)
			opt.input[0] = '\0'; /* nothing was given: like /dev/null */
	}

	record();
	plan();
	fprintf(stdout, "gfp-sweep: %s: %llu eligible calls at %zu call sites; %zu runs (%s mode",
		opt.argv[0], (unsigned long long)eligible, nsites, nruns, opt.mode);
	if (opt.shard_n > 1)
		fprintf(stdout, ", shard %d/%d", opt.shard_k, opt.shard_n);
	fprintf(stdout, ", -j %d)\n", opt.jobs);
	fflush(stdout);
	execute();

	size_t counts[O_COUNT] = {0};
	struct group *groups = calloc(nruns + 1, sizeof(*groups));
	size_t ngroups = 0;
	for (size_t i = 0; i < nruns; i++) {
		counts[runs[i].outcome]++;
		if (!is_finding(runs[i].outcome))
			continue;
		size_t g = 0;
		while (g < ngroups && !same_group(&runs[groups[g].first], &runs[i]))
			g++;
		if (g == ngroups)
			groups[ngroups++] = (struct group){i, 0, false};
		groups[g].count++;
	}
	for (size_t g = 0; g < ngroups; g++)
		groups[g].confirmed = confirm(&runs[groups[g].first], (int)(nruns + 1 + g));

	printf("outcomes:");
	for (int o = 0; o < O_COUNT; o++)
		if (counts[o])
			printf(" %s %zu", outcome_name[o], counts[o]);
	printf("\n");
	for (size_t g = 0; g < ngroups; g++) {
		const struct run *r = &runs[groups[g].first];
		printf("\n[%zu] %s", g + 1, outcome_name[r->outcome]);
		if (r->signal)
			printf(" (signal %d %s)", r->signal, strsignal(r->signal));
		printf(" in %zu run%s: allocation failure at site %s, %s %llu\n", groups[g].count,
		       groups[g].count == 1 ? "" : "s", r->inj_site[0] ? r->inj_site : "-",
		       r->site[0] ? "hit" : "call", (unsigned long long)r->hit);
		printf("  the failed allocation:\n");
		print_frames(r->inj_frames);
		if (r->crash_frames[0]) {
			printf("  the crash:\n");
			print_frames(r->crash_frames);
		}
		printf("  reproduce (%s): ", groups[g].confirmed ? "confirmed" : "NOT reproduced");
		reproducer(stdout, r);
		printf("\n");
	}
	if (!ngroups)
		printf("no crash, hang or silent data loss behind any failure point\n");
	if (opt.json)
		write_json(opt.json, groups, ngroups, counts);
	fflush(stdout);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", opt.tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "gfp-sweep: warning: could not remove %s\n", opt.tmp);
	free(groups);
	return ngroups ? EXIT_FINDINGS : 0;
}
