/*
 * gfp-sweep - drive a program through its allocation failure points and
 * report every crash, hang and silent data loss behind one.
 *
 *   gfp-sweep [--mode sites|nth] [-j N] [--timeout S] [--max-runs N] [--shard K/N]
 *             [--policy STR] [--persist] [--follow] [--no-junk] [--json F] [--junit F]
 *             [--html F] -- PROG ARGS
 *
 * A recording run (stats=paths) counts the eligible calls and the distinct
 * call sites with their hits; then one run per failure point - the first,
 * second and last hit of every site, or every Nth call - each with the
 * recording run's environment and input. Under --max-runs, sites mode keeps
 * every site's first hit before any later one, and nth mode every site's
 * first call before an even spread of the others. Runs are classified by their exit,
 * their output and the shim's records (GFP_RECORD), and findings are grouped
 * by (injection site, outcome, crash site); each group gets a reproducer that
 * the sweep re-runs once to confirm. The results go to the terminal and, on
 * request, to JSON, a JUnit XML report (one testcase per failure point, for
 * CI) and one self-contained HTML page.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
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
#include "keeper.h"
#include "symbolize.h"
#include "text.h"
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
	double started, seconds;
	long group; /* its finding group's index, -1 if it is no finding */
};

static struct {
	const char *mode, *policy, *json, *junit, *html;
	int jobs, timeout_s, max_runs, shard_k, shard_n;
	bool persist, follow, junk;
	char **argv;
	char lib[PATH_MAX], tmp[512], input[PATH_MAX];
	int rec_status;  /* the recording run's exit status */
	bool unstable;   /* two runs without injection wrote different output */
	double rec_seconds, started;
	time_t wall_started; /* for the reports' timestamps */
} opt = {.mode = "sites", .jobs = 0, .timeout_s = 0, .max_runs = 0, .shard_k = 1, .shard_n = 1,
	 .junk = true};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path) != 0 && errno != ENOENT;
}

/* The runs' files go with the sweep, however it ends (exit, die, a signal). */
static void remove_tmp(void)
{
	if (opt.tmp[0] && nftw(opt.tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "gfp-sweep: warning: could not remove %s\n", opt.tmp);
	opt.tmp[0] = '\0';
}

/* The runs in flight, by their keepers' pids (keeper.c): a signal that
 * stops the sweep (Ctrl-C, SIGTERM) stops them too, hung ones included,
 * with everything they started. */
static pid_t *running;
static size_t nrunning;
static volatile sig_atomic_t stop_signal;

static void track(pid_t pid, pid_t replace)
{
	for (size_t i = 0; i < nrunning; i++)
		if (running[i] == replace) {
			running[i] = pid;
			return;
		}
}

static void on_stop(int sig)
{
	stop_signal = sig;
	for (size_t i = 0; i < nrunning; i++)
		if (running[i] > 0)
			kill(running[i], SIGTERM);
}

/* Held while a run is forked and tracked, or reaped and forgotten: on_stop
 * must neither miss a run nor kill a pid that is no longer ours. */
static void stop_signals(int how, sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(how, how == SIG_SETMASK ? old : &set, how == SIG_SETMASK ? NULL : old);
}

/* waitpid, and the run forgotten once reaped. */
static pid_t reap(pid_t pid, int *st, int flags)
{
	sigset_t old;
	stop_signals(SIG_BLOCK, &old);
	pid_t r = waitpid(pid, st, flags);
	if (r == pid)
		track(0, pid);
	stop_signals(SIG_SETMASK, &old);
	return r;
}

static void stop_on_signals(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Ends a run that is still going (a hang, or the sweep stopping): its
 * keeper kills it and all it started, then itself; SIGKILL to the keeper
 * only if it has not ended within 10 s. */
static void end_run(pid_t keeper, int *st)
{
	kill(keeper, SIGTERM);
	double t0 = now();
	while (reap(keeper, st, WNOHANG) == 0) {
		if (now() - t0 > 10) {
			kill(keeper, SIGKILL);
			reap(keeper, st, 0);
			return;
		}
		usleep(1000);
	}
}

/* Between polls: a stop signal ends the sweep, its files removed (atexit),
 * once the runs in flight and what they started are gone. */
static void check_stop(void)
{
	if (stop_signal) {
		int st;
		for (size_t i = 0; i < nrunning; i++)
			if (running[i] > 0)
				end_run(running[i], &st);
		fprintf(stderr, "\ngfp-sweep: stopped by signal %d; the runs in flight were killed\n",
		        (int)stop_signal);
		exit(128 + stop_signal);
	}
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

/* ------------------------------------------------------------------------
 * Running the program
 * ---------------------------------------------------------------------- */

static void run_paths(int idx, const char *what, char *out, size_t n)
{
	snprintf(out, n, "%s/%d.%s", opt.tmp, idx, what);
}

/* MALLOC_CONF for the runs: the caller's, plus jemalloc's junk filling. */
static void junk_conf(char *out, size_t n)
{
	const char *mc = getenv("MALLOC_CONF");
	snprintf(out, n, "%s%sjunk:true", mc ? mc : "", mc && *mc ? "," : "");
}

/* What a run is started with (keeper.c calls start_run in the run). */
struct run_start {
	char out[PATH_MAX + 16], err[PATH_MAX + 16], rec[PATH_MAX + 16], rep[PATH_MAX + 16];
	const char *policy;
	bool recording;
};

static void start_run(void *arg)
{
	struct run_start *rs = arg;
	int in = open(opt.input[0] ? opt.input : "/dev/null", O_RDONLY);
	int o = open(rs->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(rs->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || o < 0 || e < 0)
		_exit(126);
	dup2(in, 0);
	dup2(o, 1);
	dup2(e, 2);
	char pol[4096];
	snprintf(pol, sizeof(pol), "%s%s%s", opt.policy ? opt.policy : "",
	         opt.policy && *opt.policy && *rs->policy ? ";" : "", rs->policy);
	setenv("GFP_POLICY", pol, 1);
	setenv("GFP_RECORD", rs->rec, 1);
	setenv("GFP_LOG", rs->err, 1);
	if (rs->recording && opt.follow) {
		/* Every process of the program reports (%p: its pid), and the
		 * plan takes the sites of them all. */
		strcat(rs->rep, ".%p");
		setenv("GFP_REPORT", rs->rep, 1);
	} else if (rs->recording) {
		setenv("GFP_REPORT", rs->rep, 1);
	} else
		unsetenv("GFP_REPORT");
	if (!opt.follow) {
		char pidbuf[32];
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)getpid());
		setenv("GFP_INJECT_PID", pidbuf, 1);
	}
	if (opt.junk) {
		/* Error paths that read uninitialised memory crash instead of
		 * passing by luck (jemalloc fills fresh allocations). */
		char conf[1024];
		junk_conf(conf, sizeof(conf));
		setenv("MALLOC_CONF", conf, 1);
	}
	tool_set_preload(opt.lib);
	execvp(opt.argv[0], opt.argv);
	_exit(127);
}

/* Starts PROG with the extra policy under a keeper (keeper.c), whose pid
 * it returns: the keeper ends as the run ended, once nothing the run
 * started is alive. Its stdout, stderr, log and records go to files named
 * after idx. */
static pid_t spawn(int idx, const char *policy, bool recording)
{
	struct run_start rs;
	run_paths(idx, "out", rs.out, sizeof(rs.out));
	run_paths(idx, "err", rs.err, sizeof(rs.err));
	run_paths(idx, "rec", rs.rec, sizeof(rs.rec));
	run_paths(idx, "report", rs.rep, sizeof(rs.rep));
	rs.policy = policy;
	rs.recording = recording;
	sigset_t old;
	stop_signals(SIG_BLOCK, &old);
	pid_t sweep = getpid();
	pid_t pid = fork();
	if (pid < 0)
		die(EXIT_USAGE, "fork: %s", strerror(errno));
	if (pid > 0) {
		setpgid(pid, pid); /* out of the terminal's foreground group */
		track(pid, 0);
		if (stop_signal) /* stopped while it was being started */
			kill(pid, SIGTERM);
		stop_signals(SIG_SETMASK, &old);
		return pid;
	}
	setpgid(0, 0);
	keeper_run(sweep, &old, start_run, &rs);
}

/* What a run wrote to its standard output. */
struct output {
	char *text;
	size_t len;
};

static struct output read_output(int idx)
{
	char path[PATH_MAX + 16];
	run_paths(idx, "out", path, sizeof(path));
	struct output o = {NULL, 0};
	o.text = text_slurp(path, &o.len);
	if (!o.text)
		o.text = strdup(""), o.len = 0;
	return o;
}

/* Waits for a run with a timeout; ends it on expiry. */
static int wait_run(pid_t pid, double started, double timeout, bool *timed_out)
{
	int st = 0;
	*timed_out = false;
	for (;;) {
		check_stop();
		pid_t r = reap(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (timeout > 0 && now() - started > timeout) {
			end_run(pid, &st);
			*timed_out = true;
			break;
		}
		usleep(2000);
	}
	return st;
}

static char prog_path[PATH_MAX];

/* The program's module name as the records spell it. */
static const char *prog_base(void)
{
	const char *base = strrchr(prog_path, '/');
	return base ? base + 1 : prog_path;
}

/* Source lines for the program's own frames, from its debug information,
 * with the chain of inlined functions: "make_title inventory.c:100 < main
 * inventory.c:480". Each module+offset is looked up once: the reports show
 * the same frames once per run. */
struct src_memo {
	char mod[128], off[32], src[600];
	bool return_address;
};
static struct src_memo *src_memo;
static size_t nsrc_memo, src_memo_cap;

static const char *source_cached(const char *mod, const char *off, bool return_address)
{
	for (size_t i = 0; i < nsrc_memo; i++)
		if (strcmp(src_memo[i].off, off) == 0 && strcmp(src_memo[i].mod, mod) == 0 &&
		    src_memo[i].return_address == return_address)
			return src_memo[i].src;
	if (nsrc_memo == src_memo_cap) {
		size_t cap = src_memo_cap ? src_memo_cap * 2 : 64;
		struct src_memo *m = realloc(src_memo, cap * sizeof(*m));
		if (!m)
			die(EXIT_USAGE, "out of memory");
		src_memo = m;
		src_memo_cap = cap;
	}
	struct src_memo *m = &src_memo[nsrc_memo++];
	snprintf(m->mod, sizeof(m->mod), "%s", mod);
	snprintf(m->off, sizeof(m->off), "%s", off);
	m->return_address = return_address;
	m->src[0] = '\0';
	char *end = NULL;
	errno = 0;
	unsigned long long o = strtoull(off, &end, 0);
	struct sym_module *sm = NULL;
	if (prog_path[0] && strcmp(mod, prog_base()) == 0 && end != off && !*end && errno == 0)
		sm = sym_open(prog_path, prog_base());
	size_t len = 0;
	if (sm)
		sym_chain(sm, o, return_address, m->src, sizeof(m->src), &len);
	return m->src;
}

/* One line of frames_of's output, "    symbol (module+offset)", taken
 * apart; src is the program's source line for it, or "". */
struct frame {
	char sym[200], mod[128], off[32], src[600];
};

static bool parse_frame(const char *line, size_t len, bool return_address, struct frame *fr)
{
	char buf[600];
	snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
	memset(fr, 0, sizeof(*fr));
	char *paren = strrchr(buf, '(');
	/* "(module+offset)": split at the last '+', module names have them
	 * (libstdc++.so.6). */
	char *close = paren ? strchr(paren, ')') : NULL;
	char *plus = close ? memrchr(paren, '+', (size_t)(close - paren)) : NULL;
	if (!plus || plus - paren - 1 >= (long)sizeof(fr->mod) ||
	    close - plus - 1 >= (long)sizeof(fr->off) || plus == paren + 1)
		return false;
	snprintf(fr->mod, sizeof(fr->mod), "%.*s", (int)(plus - paren - 1), paren + 1);
	snprintf(fr->off, sizeof(fr->off), "%.*s", (int)(close - plus - 1), plus + 1);
	while (paren > buf && paren[-1] == ' ')
		paren--;
	*paren = '\0';
	const char *sym = buf + strspn(buf, " ");
	snprintf(fr->sym, sizeof(fr->sym), "%s", sym);
	snprintf(fr->src, sizeof(fr->src), "%s", source_cached(fr->mod, fr->off, return_address));
	return true;
}

/* Calls fn for each line of frames (frames_of's output); fr is NULL for a
 * line that is not a frame. The first frame of a crash is the faulting pc,
 * every other one a return address. */
typedef void frame_fn(void *ctx, const char *line, size_t len, const struct frame *fr);

static void each_frame(const char *frames, bool crash, frame_fn *fn, void *ctx)
{
	bool first = true;
	for (const char *line = frames; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct frame fr;
		bool is_frame = parse_frame(line, len, !(crash && first), &fr);
		first &= !is_frame;
		if (is_frame)
			fn(ctx, line, len, &fr);
		else
			fn(ctx, line, len, NULL);
		line = nl ? nl + 1 : line + len;
	}
}

static void print_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	FILE *f = ctx;
	if (fr && fr->src[0])
		fprintf(f, "    %s (%s+%s)\n", fr->src, fr->mod, fr->off);
	else
		fprintf(f, "%.*s\n", (int)len, line);
}

struct top_ctx {
	const char *top; /* "module+offset symbol" */
	bool done;
};

static void top_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct top_ctx *t = ctx;
	if (!fr || t->done)
		return;
	size_t ml = strlen(fr->mod), ol = strlen(fr->off);
	if (!strncmp(t->top, fr->mod, ml) && t->top[ml] == '+' &&
	    !strncmp(t->top + ml + 1, fr->off, ol) &&
	    (t->top[ml + 1 + ol] == ' ' || !t->top[ml + 1 + ol])) {
		print_frame(stdout, line, len, fr);
		t->done = true;
	}
}

/* A crash group's crash site, as its backtrace prints it (the faulting pc
 * when it is the top frame, else a return address looked up one byte back). */
static void print_crash_top(const struct run *r)
{
	struct top_ctx t = {r->crash_top, false};
	each_frame(r->crash_frames, true, top_frame, &t);
	if (!t.done)
		printf("    %s\n", r->crash_top);
}

/* The frames as printed, with source lines where the program has them. */
static void print_frames(const char *frames, bool crash)
{
	each_frame(frames, crash, print_frame, stdout);
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
			snprintf(top, topn, "%s+%s%s%s", mod, off, *sym ? " " : "", sym);
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

/* Run idx wrote what the recording run wrote: byte for byte, NULs too. */
static bool same_output(int idx, const struct output *rec_out)
{
	struct output out = read_output(idx);
	bool same = out.len == rec_out->len && memcmp(out.text, rec_out->text, out.len) == 0;
	free(out.text);
	return same;
}

static void classify(struct run *r, int idx, int st, bool timed_out, const struct output *rec_out)
{
	char path[PATH_MAX + 16];
	run_paths(idx, "rec", path, sizeof(path));
	char *rec = text_slurp(path, NULL);
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
	if (timed_out && inj)
		r->outcome = O_HANG;
	else if (!inj)
		r->outcome = O_UNREACHED; /* also a timeout before the failure point */
	else if (r->signal == SIGABRT && !crash_is_memory(crash))
		r->outcome = O_ABORT;
	else if (r->signal)
		r->outcome = O_CRASH;
	else if (r->status != opt.rec_status && r->status != 0)
		r->outcome = O_HANDLED; /* it said so */
	else if (opt.unstable)
		r->outcome = O_OK; /* silent losses are not looked for */
	else if (r->status != opt.rec_status)
		r->outcome = O_SILENT; /* success where the plain run failed */
	else
		r->outcome = same_output(idx, rec_out) ? O_OK : O_SILENT;
	free(rec);
}

/* ------------------------------------------------------------------------
 * The recording run and the plan
 * ---------------------------------------------------------------------- */

/* The recording run's sites (first: the eligible-call number of a site's
 * first hit, 0 if unknown). */
static struct tool_site *sites;
static size_t nsites;
static uint64_t eligible;

/* Takes in the sites of one recording report; 0 when there is no report.
 * Every process counts its own calls and hits, and fail.nth and fail.site.hit
 * count within one process: a site seen by several processes keeps the most
 * hits one of them made, and the calls are the most one process made. */
static size_t read_sites(const char *path)
{
	char *rep = text_slurp(path, NULL);
	if (!rep)
		return 0;
	const char *e = strstr(rep, "\"eligible_calls\":");
	unsigned long long calls = e ? strtoull(e + 17, NULL, 10) : 0;
	if (calls > eligible)
		eligible = calls;
	static size_t cap;
	struct tool_sites it;
	struct tool_site one;
	tool_sites_begin(&it, rep);
	while (tool_sites_next(&it, &one)) {
		size_t i = 0;
		while (i < nsites && strcmp(sites[i].id, one.id) != 0)
			i++;
		if (i == nsites) {
			if (nsites == cap) {
				cap = cap ? cap * 2 : 64;
				sites = realloc(sites, cap * sizeof(*sites));
				if (!sites)
					die(EXIT_USAGE, "out of memory");
			}
			sites[nsites++] = (struct tool_site){.hits = 0, .first = 0};
			memcpy(sites[i].id, one.id, sizeof(one.id));
		}
		if (one.hits > sites[i].hits)
			sites[i].hits = one.hits;
		if (one.first && (!sites[i].first || one.first < sites[i].first))
			sites[i].first = one.first;
	}
	free(rep);
	return 1;
}

static void record(void)
{
	double t0 = now();
	pid_t pid = spawn(0, "stats=paths", true);
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
		char *err = text_slurp(path, NULL);
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
		die(EXIT_USAGE, "the recording run wrote no report: is %s a dynamically linked "
				"program that exits normally?",
		    opt.argv[0]);
	opt.rec_status = WEXITSTATUS(st);
	/* A second run without injection: output that changes by itself
	 * (times, addresses) says nothing of data lost. */
	pid = spawn(-1, "", false);
	t0 = now();
	int st2 = wait_run(pid, t0, 600, &to);
	struct output rec = read_output(0);
	opt.unstable = to || st2 != st || !same_output(-1, &rec);
	if (opt.unstable)
		fprintf(stderr, "gfp-sweep: note: two runs of %s without injection wrote different "
		                "output or exited differently: silent data losses are not looked for\n",
		        opt.argv[0]);
	free(rec.text);
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
		fprintf(stderr,
		        "gfp-sweep: warning: the recording run gave no first call for %zu "
		        "of %zu sites: they may get no run\n",
		        nsites - nf, nsites);
	if (nf >= budget) {
		fprintf(stderr,
		        "gfp-sweep: warning: %zu call sites but --max-runs %d: only the "
		        "first calls of %d of them, spread evenly, are tried\n",
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
			if (tier == 0 && h >= 1)
				plan_add(sites[i].id, 1);
			else if (tier == 1 && h >= 2)
				plan_add(sites[i].id, 2);
			else if (tier == 2 && h >= 3)
				plan_add(sites[i].id, h);
		}
	if (!opt.max_runs || nruns <= (size_t)opt.max_runs)
		return;
	if (nsites > (size_t)opt.max_runs)
		fprintf(stderr,
		        "gfp-sweep: warning: %zu call sites but --max-runs %d: %zu sites "
		        "get no run\n",
		        nsites, opt.max_runs, nsites - (size_t)opt.max_runs);
	nruns = (size_t)opt.max_runs;
}

static void plan(void)
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
static size_t plan_missed_sites(void)
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
		fprintf(stderr,
		        "gfp-sweep: %zu site%s not failed by the run at %s first call "
		        "(threads ordered the calls differently): %zu more run%s, by site id\n",
		        missed, missed == 1 ? "" : "s", missed == 1 ? "its" : "their", missed,
		        missed == 1 ? "" : "s");
	return from;
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

/* Runs runs[from..nruns). */
static void execute(size_t from)
{
	struct output rec_out = read_output(0);
	size_t next = from, done = from, active = 0;
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
			pid_t w = reap(r->pid, &st, WNOHANG);
			bool to = false;
			if (w == 0 && now() - r->started > run_timeout()) {
				end_run(r->pid, &st);
				to = true;
				w = r->pid;
			}
			if (w != r->pid)
				continue;
			r->seconds = now() - r->started;
			classify(r, slot_run[s], st, to, &rec_out);
			slot_run[s] = 0;
			active--;
			done++;
			if (tty) {
				double el = now() - t0,
				       eta = el / (double)(done - from) * (double)(nruns - done);
				fprintf(stderr, "\r%zu/%zu runs, %.0fs left   ", done, nruns, eta);
			}
		}
		usleep(1000);
		check_stop();
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
	free(slot_run);
	free(rec_out.text);
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

/* PROG ARGS as a shell would take them back. */
static void command_line(FILE *f)
{
	for (char **a = opt.argv; *a; a++) {
		if (a != opt.argv)
			fputc(' ', f);
		text_shell_quote(f, *a);
	}
	if (opt.input[0]) {
		fprintf(f, " < ");
		text_shell_quote(f, opt.input);
	}
}

/* gfp-run as a shell finds it, else the one beside this gfp-sweep (a build
 * tree's), so that a printed reproducer runs as printed. */
static const char *gfp_run_path(void)
{
	static char path[PATH_MAX];
	if (path[0])
		return path;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash = n > 0 ? (self[n] = '\0', strrchr(self, '/')) : NULL;
	if (!tool_resolve("gfp-run", path, sizeof(path)) && slash) {
		snprintf(slash + 1, sizeof(self) - (size_t)(slash + 1 - self), "gfp-run");
		if (access(self, X_OK) == 0) {
			snprintf(path, sizeof(path), "%s", self);
			return path;
		}
	}
	snprintf(path, sizeof(path), "gfp-run");
	return path;
}

/* The policy a run had: --policy's, then its failure point. */
static void full_policy(const struct run *r, char *out, size_t n)
{
	char pol[512];
	policy_of(r, pol, sizeof(pol));
	snprintf(out, n, "%s%s%s", opt.policy ? opt.policy : "",
	         opt.policy && *opt.policy ? ";" : "", pol);
}

/* The run's command with what it depends on: the whole policy, and the junk
 * filling without which a read of uninitialised memory may pass. */
static void reproducer(FILE *f, const struct run *r)
{
	char pol[4096], conf[1024];
	full_policy(r, pol, sizeof(pol));
	if (opt.junk) {
		junk_conf(conf, sizeof(conf));
		fprintf(f, "MALLOC_CONF=");
		text_shell_quote(f, conf);
		fputc(' ', f);
	}
	text_shell_quote(f, gfp_run_path());
	/* As the sweep did: failures in the program's own process only. */
	fprintf(f, "%s --policy ", opt.follow ? "" : " --no-follow");
	text_shell_quote(f, pol);
	fprintf(f, " -- ");
	command_line(f);
}

/* Re-runs a group's first failure point alone: the reproducer must give
 * the same outcome again. */
static bool confirm(const struct run *r, int idx)
{
	char pol[512];
	policy_of(r, pol, sizeof(pol));
	struct output rec_out = read_output(0);
	struct run again = *r;
	double t0 = now();
	pid_t pid = spawn(idx, pol, false);
	bool to;
	int st = wait_run(pid, t0, run_timeout(), &to);
	classify(&again, idx, st, to, &rec_out);
	free(rec_out.text);
	return again.outcome == r->outcome;
}

/* Formatted text goes through a memory stream: into JSON, or text that
 * still needs escaping. */
struct membuf {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *mem_open(struct membuf *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f)
		die(EXIT_USAGE, "open_memstream: %s", strerror(errno));
	return m->f;
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
		text_json_str(f, *a);
	}
	fprintf(f, "],\"shard\":\"%d/%d\",\"eligible_calls\":%llu,\"sites\":%zu,\"runs\":%zu,",
		opt.shard_k, opt.shard_n, (unsigned long long)eligible, nsites, nruns);
	fprintf(f, "\"junk\":%s,", opt.junk ? "true" : "false");
	fprintf(f, "\"outcomes\":{");
	for (int o = 0; o < O_COUNT; o++)
		fprintf(f, "%s\"%s\":%zu", o ? "," : "", outcome_name[o], counts[o]);
	fprintf(f, "},\"results\":[");
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		fprintf(f,
		        "%s{\"site\":\"%s\",\"hit\":%llu,\"outcome\":\"%s\",\"status\":%d,"
		        "\"signal\":%d,\"injected_site\":\"%s\",\"seconds\":%.3f}",
		        i ? "," : "", r->site, (unsigned long long)r->hit, outcome_name[r->outcome],
		        r->status, r->signal, r->inj_site, r->seconds);
	}
	fprintf(f, "],\"groups\":[");
	for (size_t g = 0; g < ngroups; g++) {
		const struct run *r = &runs[groups[g].first];
		char pol[4096];
		full_policy(r, pol, sizeof(pol));
		fprintf(f,
			"%s{\"outcome\":\"%s\",\"count\":%zu,\"first_run\":%zu,\"site\":\"%s\","
			"\"policy\":",
			g ? "," : "", outcome_name[r->outcome], groups[g].count, groups[g].first,
			r->inj_site);
		text_json_str(f, pol);
		struct membuf m;
		reproducer(mem_open(&m), r);
		fclose(m.f);
		fprintf(f, ",\"reproducer\":");
		text_json_str(f, m.buf);
		free(m.buf);
		fprintf(f, ",\"confirmed\":%s,\"signal\":%d,\"crash_site\":",
			groups[g].confirmed ? "true" : "false", r->signal);
		text_json_str(f, r->crash_top);
		fprintf(f, ",\"injection_frames\":");
		text_json_str(f, r->inj_frames);
		fprintf(f, ",\"crash_frames\":");
		text_json_str(f, r->crash_frames);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
	fclose(f);
}

/* ------------------------------------------------------------------------
 * JUnit and HTML reports
 * ---------------------------------------------------------------------- */

/* Writes n bytes of s as XML or HTML text (or an attribute value when
 * attr). Markup characters are escaped, and what XML 1.0 cannot carry -
 * control characters, malformed UTF-8 in the program's arguments or output -
 * becomes U+FFFD, so that the file parses whatever the program did. */
static void esc_n(FILE *f, const char *s, size_t n, bool attr)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		unsigned char c = *p;
		if (c >= 0x80) {
			size_t len = text_utf8_len(p, end);
			if (len)
				fwrite(p, 1, len, f);
			else
				fputs("&#xFFFD;", f);
			p += len ? len : 1;
			continue;
		}
		p++;
		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"' && attr)
			fputs("&quot;", f);
		else if (c == '\'' && attr)
			fputs("&#39;", f);
		else if ((c == '\n' || c == '\t' || c == '\r') && attr)
			fprintf(f, "&#%d;", c); /* attribute values normalise raw whitespace */
		else if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f))
			fputc(c, f);
		else
			fputs("&#xFFFD;", f);
	}
}

static void esc(FILE *f, const char *s, bool attr)
{
	esc_n(f, s, strlen(s), attr);
}

/* Closes m and writes its text to f, escaped. */
static void mem_flush(struct membuf *m, FILE *f, bool attr)
{
	fclose(m->f);
	esc_n(f, m->buf, m->len, attr);
	free(m->buf);
}

/* The group a finding run belongs to, from 0, or -1. */

static const char *point_kind(const struct run *r)
{
	return r->site[0] ? "hit" : "call";
}

/* "crash (signal 11)": the JUnit failure message. */
static void failure_message(FILE *f, const struct run *r)
{
	if (r->outcome == O_HANG)
		fprintf(f, "hang (killed after %.0f s)", run_timeout());
	else if (r->outcome == O_SILENT)
		fprintf(f, "silent (exit 0, output differs from the recording run)");
	else if (r->signal)
		fprintf(f, "%s (signal %d)", outcome_name[r->outcome], r->signal);
	else
		fprintf(f, "%s (exit status %d)", outcome_name[r->outcome], r->status);
}

/* The last bytes of a run's standard error (the program's messages and
 * the shim's log), from a line start so that no character is cut. */
static void stderr_tail(FILE *f, size_t run_idx)
{
	char path[PATH_MAX + 16];
	size_t len;
	run_paths((int)run_idx + 1, "err", path, sizeof(path));
	char *err = text_slurp(path, &len);
	if (!err)
		return;
	const char *from = err;
	if (len > 4096) {
		from = err + len - 4096;
		const char *nl = strchr(from, '\n');
		if (nl)
			from = nl + 1;
	}
	if (*from) {
		fprintf(f, "      <system-err>");
		esc(f, from, false);
		fprintf(f, "</system-err>\n");
	}
	free(err);
}

static void junit_property(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	esc(f, value, true);
	fprintf(f, "\"/>\n");
}

/* One testcase per failure point: CI shows each finding as a failed test
 * with both backtraces and its reproducer, unreached points as skipped. */
/* What the JUnit and HTML reports start with: the file, open for writing
 * (or exit 2), the number of findings, the sweep's start in `stamp_fmt`, and
 * this host's name ("" when unknown). */
struct report_head {
	FILE *f;
	size_t findings;
	char stamp[64], host[256];
};

static void report_open(struct report_head *h, const char *path, const size_t *counts,
			const char *stamp_fmt)
{
	h->f = fopen(path, "w");
	if (!h->f)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
	h->findings = 0;
	for (int o = 0; o < O_COUNT; o++)
		if (is_finding((enum outcome)o))
			h->findings += counts[o];
	struct tm tm;
	h->stamp[0] = '\0';
	if (localtime_r(&opt.wall_started, &tm))
		strftime(h->stamp, sizeof(h->stamp), stamp_fmt, &tm);
	if (gethostname(h->host, sizeof(h->host) - 1) != 0)
		h->host[0] = '\0';
	h->host[sizeof(h->host) - 1] = '\0';
}

static void write_junit(const char *path, const struct group *groups, const size_t *counts)
{
	struct report_head h;
	report_open(&h, path, counts, "%Y-%m-%dT%H:%M:%S");
	FILE *f = h.f;
	size_t failures = h.findings;
	const char *stamp = h.stamp, *host = h.host[0] ? h.host : "localhost";
	char buf[64];
	double total = now() - opt.started;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"gfp-sweep\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		   "time=\"%.3f\">\n",
		nruns, failures, total);
	fprintf(f, "  <testsuite name=\"gfp-sweep ");
	esc(f, opt.argv[0], true);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\" "
		   "timestamp=\"%s\" hostname=\"",
		nruns, failures, counts[O_UNREACHED], total, stamp);
	esc(f, host, true);
	fprintf(f, "\">\n    <properties>\n");
	struct membuf m;
	command_line(mem_open(&m));
	fclose(m.f);
	junit_property(f, "program", m.buf);
	free(m.buf);
	junit_property(f, "mode", opt.mode);
	snprintf(buf, sizeof(buf), "%d/%d", opt.shard_k, opt.shard_n);
	junit_property(f, "shard", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)eligible);
	junit_property(f, "eligible_calls", buf);
	snprintf(buf, sizeof(buf), "%zu", nsites);
	junit_property(f, "sites", buf);
	junit_property(f, "gfp_sweep", GFP_VERSION);
	fprintf(f, "    </properties>\n");

	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		const char *site = r->site[0] ? r->site : r->inj_site[0] ? r->inj_site : "none";
		fprintf(f, "    <testcase classname=\"site.%s\" name=\"%s %llu\" time=\"%.3f\"",
			site, point_kind(r), (unsigned long long)r->hit, r->seconds);
		if (r->outcome == O_UNREACHED) {
			fprintf(f, ">\n      <skipped message=\"the program made fewer eligible "
				   "calls than this failure point needs\"/>\n    </testcase>\n");
			continue;
		}
		if (!is_finding(r->outcome)) {
			fprintf(f, "/>\n");
			continue;
		}
		fprintf(f, ">\n      <failure message=\"");
		failure_message(mem_open(&m), r);
		mem_flush(&m, f, true);
		fprintf(f, "\" type=\"%s\">", outcome_name[r->outcome]);
		FILE *t = mem_open(&m);
		long g = runs[i].group;
		fprintf(t, "%s", outcome_name[r->outcome]);
		if (r->signal)
			fprintf(t, " (signal %d %s)", r->signal, strsignal(r->signal));
		fprintf(t, ": allocation failure at site %s, %s %llu",
			r->inj_site[0] ? r->inj_site : "-", point_kind(r),
			(unsigned long long)r->hit);
		if (g >= 0)
			fprintf(t, "; finding group [%ld] of %zu run%s", g + 1, groups[g].count,
				groups[g].count == 1 ? "" : "s");
		fprintf(t, "\nthe failed allocation:\n");
		each_frame(r->inj_frames, false, print_frame, t);
		if (r->crash_frames[0]) {
			fprintf(t, "the crash:\n");
			each_frame(r->crash_frames, true, print_frame, t);
		}
		fprintf(t, "reproduce: ");
		reproducer(t, r);
		fprintf(t, "\n");
		mem_flush(&m, f, false);
		fprintf(f, "</failure>\n");
		stderr_tail(f, i);
		fprintf(f, "    </testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	if (fclose(f) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
}

/* Bars in the order findings come first: crash, hang, silent, then the
 * runs that went well, unreached last. */
static const enum outcome bar_order[O_COUNT] = {O_CRASH,   O_HANG, O_SILENT,   O_ABORT,
						O_HANDLED, O_OK,   O_UNREACHED};

static const char html_style[] =
	":root{--ok:#2f9e5b;--handled:#9ccc65;--abort:#5b8de6;--silent:#e89a1c;"
	"--crash:#d83b3b;--hang:#8e44ad;--unreached:#b8b8b8;--fg:#1f2328;--mute:#656d76;"
	"--line:#d8dee4;--code:#f6f8fa}\n"
	"*{box-sizing:border-box}\n"
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);"
	"margin:0 auto;max-width:1240px;padding:18px 24px 40px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
	"border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:0 0 4px}"
	"h4{font-size:13px;margin:10px 0 2px;color:var(--mute)}\n"
	"code,pre{font:12.5px/1.4 ui-monospace,'DejaVu Sans Mono',monospace}\n"
	"pre{background:var(--code);border:1px solid var(--line);border-radius:6px;"
	"padding:8px 10px;margin:0;white-space:pre-wrap;overflow-wrap:anywhere}\n"
	".verdict{font-size:15px;margin:0 0 12px}.verdict.bad{color:var(--crash)}"
	".verdict.good{color:var(--ok)}\n"
	"table.kv{border-collapse:collapse}table.kv th{text-align:left;color:var(--mute);"
	"font-weight:500;padding:2px 16px 2px 0;vertical-align:top}table.kv td{padding:2px 0}\n"
	".legend{display:flex;flex-wrap:wrap;gap:6px;margin:12px 0 4px}"
	".legend span{border-radius:12px;padding:2px 10px;color:#fff;font-weight:600}"
	".legend span.zero{opacity:.35}\n"
	".o-ok{background:var(--ok)}.o-handled{background:var(--handled)}"
	".o-abort{background:var(--abort)}.o-silent{background:var(--silent)}"
	".o-crash{background:var(--crash)}.o-hang{background:var(--hang)}"
	".o-unreached{background:var(--unreached)}"
	".legend .o-handled,.bar .o-handled,.legend .o-unreached,.bar .o-unreached{"
	"color:#1f2328}\n"
	".note{color:var(--mute);margin:0 0 8px}\n"
	".chart{display:grid;grid-template-columns:max-content minmax(10em,26em) minmax(200px,1fr)"
	" max-content;gap:3px 12px;align-items:center}\n"
	".chart .head{color:var(--mute);font-size:12px;border-bottom:1px solid var(--line)}\n"
	".chart .where{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\n"
	".bar{display:flex;height:18px;border-radius:4px;overflow:hidden;background:#eee}"
	".bar span{min-width:3px;color:#fff;font-size:11px;line-height:18px;text-align:center;"
	"overflow:hidden;border-right:1px solid #fff}.bar span:last-child{border-right:0}\n"
	".n{color:var(--mute);font-size:12px;white-space:nowrap}.n a{margin-left:4px}\n"
	"a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}\n"
	".group{border:1px solid var(--line);border-left:6px solid var(--crash);border-radius:6px;"
	"padding:10px 14px;margin:12px 0}\n"
	".group.silent{border-left-color:var(--silent)}.group.hang{border-left-color:var(--hang)}\n"
	".meta{margin:0 0 4px;color:var(--mute)}.yes{color:var(--ok);font-weight:600}"
	".no{color:var(--crash);font-weight:600}\n"
	"pre .prog{color:var(--fg);font-weight:600}pre .lib,pre .loc{color:var(--mute)}\n"
	"table.runs{border-collapse:collapse;margin-top:8px}table.runs td,table.runs th{"
	"padding:1px 12px 1px 0;text-align:left}table.runs th{color:var(--mute);font-weight:500}\n"
	"details summary{cursor:pointer;margin-top:24px;font-weight:600}\n"
	"footer{margin-top:28px;color:var(--mute);font-size:12px}\n";

static void html_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	FILE *f = ctx;
	if (!fr) {
		esc_n(f, line, len, false);
	} else if (fr->src[0]) {
		fprintf(f, "    <span class=\"prog\">");
		esc(f, fr->src, false);
		fprintf(f, "</span> <span class=\"loc\">(");
		esc(f, fr->mod, false);
		fputc('+', f);
		esc(f, fr->off, false);
		fprintf(f, ")</span>");
	} else {
		fprintf(f, "    <span class=\"lib\">");
		esc(f, fr->sym, false);
		fprintf(f, "</span>%s<span class=\"loc\">(", fr->sym[0] ? " " : "");
		esc(f, fr->mod, false);
		fputc('+', f);
		esc(f, fr->off, false);
		fprintf(f, ")</span>");
	}
	fputc('\n', f);
}

/* Where a site is, for its bar: the first frame in the program (its
 * function and source line, the innermost of an inlined chain) and the
 * library function it called there; else the first frame outside libc and
 * the shim. full gets the whole chain. */
struct where {
	char label[400], full[900], via[64];
	bool found;
};

static void where_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct where *w = ctx;
	(void)line;
	(void)len;
	if (!fr || w->found)
		return;
	if (strcmp(fr->mod, prog_base()) != 0) {
		/* The outermost library frame before the program's is what
		 * the program called: strdup, asprintf. */
		int n = (int)strcspn(fr->sym, "+");
		if (n)
			snprintf(w->via, sizeof(w->via), "%.*s", n, fr->sym);
		if (!w->label[0] && strcmp(fr->mod, "libc.so.6") != 0 &&
		    strcmp(fr->mod, LIB_NAME) != 0) {
			snprintf(w->label, sizeof(w->label), "%s (%s)",
				 fr->sym[0] ? fr->sym : fr->off, fr->mod);
			snprintf(w->full, sizeof(w->full), "%s (%s+%s)", fr->sym, fr->mod, fr->off);
		}
		return;
	}
	const char *chain = fr->src[0] ? fr->src : fr->sym;
	if (chain[0]) {
		snprintf(w->label, sizeof(w->label), "%.*s", (int)strcspn(chain, "<"), chain);
		size_t l = strlen(w->label);
		while (l && w->label[l - 1] == ' ')
			w->label[--l] = '\0';
	} else {
		/* a stripped program: its module and offset are all there is */
		snprintf(w->label, sizeof(w->label), "%s+%s", fr->mod, fr->off);
	}
	snprintf(w->full, sizeof(w->full), "%s (%s+%s)", chain, fr->mod, fr->off);
	if (w->via[0]) {
		size_t l = strlen(w->label), k = strlen(w->full);
		snprintf(w->label + l, sizeof(w->label) - l, " via %s", w->via);
		snprintf(w->full + k, sizeof(w->full) - k, " via %s", w->via);
	}
	w->found = true;
}

static void site_where(const char *site, struct where *w)
{
	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < nruns; i++)
		if (runs[i].inj_frames[0] && strcmp(runs[i].inj_site, site) == 0) {
			each_frame(runs[i].inj_frames, false, where_frame, w);
			return;
		}
}

struct bar {
	char site[17];
	size_t n[O_COUNT], total, findings, order;
};

static int bar_cmp(const void *a, const void *b)
{
	const struct bar *x = a, *y = b;
	if (x->findings != y->findings)
		return x->findings > y->findings ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The failure points of one outcome at a site: "hit 1, hit 3". */
static void bar_points(FILE *f, const struct bar *b, enum outcome o)
{
	size_t shown = 0;
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		const char *key = r->site[0] ? r->site : r->inj_site;
		if (r->outcome != o || strcmp(key, b->site) != 0)
			continue;
		if (shown == 12) {
			fprintf(f, ", ...");
			break;
		}
		fprintf(f, "%s%s %llu", shown++ ? ", " : "", point_kind(r),
			(unsigned long long)r->hit);
	}
}

static void html_chart(FILE *f, const struct group *groups, size_t ngroups)
{
	struct bar *bars = calloc(nruns + 1, sizeof(*bars));
	size_t nbars = 0;
	if (!bars)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		const char *key = r->site[0] ? r->site : r->inj_site;
		size_t b = 0;
		while (b < nbars && strcmp(bars[b].site, key) != 0)
			b++;
		if (b == nbars) {
			snprintf(bars[b].site, sizeof(bars[b].site), "%s", key);
			bars[b].order = nbars++;
		}
		bars[b].n[r->outcome]++;
		bars[b].total++;
		bars[b].findings += is_finding(r->outcome);
	}
	qsort(bars, nbars, sizeof(*bars), bar_cmp);
	fprintf(f, "<div class=\"chart\">\n<span class=\"head\">site</span><span class=\"head\">"
		   "first frame in the program</span><span class=\"head\">outcomes of its failure "
		   "points</span><span class=\"head\">runs, groups</span>\n");
	for (size_t b = 0; b < nbars; b++) {
		struct where w;
		site_where(bars[b].site, &w);
		fprintf(f, "<code>%s</code>", bars[b].site[0] ? bars[b].site : "(none)");
		fprintf(f, "<span class=\"where\" title=\"");
		esc(f, w.full, true);
		fprintf(f, "\">");
		const char *none = bars[b].site[0] ? "(not reached)" : "no allocation failed";
		esc(f, w.label[0] ? w.label : none, false);
		fprintf(f, "</span><div class=\"bar\">");
		for (int k = 0; k < O_COUNT; k++) {
			enum outcome o = bar_order[k];
			if (!bars[b].n[o])
				continue;
			fprintf(f, "<span class=\"o-%s\" style=\"flex-grow:%zu\" title=\"",
				outcome_name[o], bars[b].n[o]);
			struct membuf m;
			FILE *t = mem_open(&m);
			fprintf(t, "%s: ", outcome_name[o]);
			bar_points(t, &bars[b], o);
			mem_flush(&m, f, true);
			fprintf(f, "\">%zu</span>", bars[b].n[o]);
		}
		fprintf(f, "</div><span class=\"n\">%zu", bars[b].total);
		for (size_t g = 0; g < ngroups; g++)
			if (strcmp(runs[groups[g].first].inj_site, bars[b].site) == 0 &&
			    bars[b].site[0])
				fprintf(f, "<a href=\"#g%zu\">[%zu]</a>", g + 1, g + 1);
		fprintf(f, "</span>\n");
	}
	fprintf(f, "</div>\n");
	free(bars);
}

static void html_group(FILE *f, const struct group *groups, size_t g)
{
	const struct run *r = &runs[groups[g].first];
	fprintf(f, "<article class=\"group %s\" id=\"g%zu\">\n<h3>[%zu] %s",
		outcome_name[r->outcome], g + 1, g + 1, outcome_name[r->outcome]);
	if (r->signal)
		fprintf(f, " (signal %d %s)", r->signal, strsignal(r->signal));
	fprintf(f, " in %zu run%s</h3>\n<p class=\"meta\">allocation failure at site "
		   "<code>%s</code>, %s %llu &middot; reproducer ",
		groups[g].count, groups[g].count == 1 ? "" : "s",
		r->inj_site[0] ? r->inj_site : "-", point_kind(r), (unsigned long long)r->hit);
	fputs(groups[g].confirmed ? "<span class=\"yes\">confirmed</span>"
				  : "<span class=\"no\">NOT reproduced</span>",
	      f);
	fprintf(f, " &middot; runs: ");
	size_t shown = 0;
	for (size_t i = groups[g].first; i < nruns; i++) {
		if (runs[i].group != (long)g)
			continue;
		if (shown == 20) {
			fprintf(f, ", ...");
			break;
		}
		fprintf(f, "%s%s %llu", shown++ ? ", " : "", point_kind(&runs[i]),
			(unsigned long long)runs[i].hit);
	}
	fprintf(f, "</p>\n<h4>The failed allocation</h4>\n<pre>");
	each_frame(r->inj_frames, false, html_frame, f);
	fprintf(f, "</pre>\n");
	if (r->crash_frames[0]) {
		fprintf(f, "<h4>The crash</h4>\n<pre>");
		each_frame(r->crash_frames, true, html_frame, f);
		fprintf(f, "</pre>\n");
	}
	fprintf(f, "<h4>Reproduce</h4>\n<pre>");
	struct membuf m;
	reproducer(mem_open(&m), r);
	mem_flush(&m, f, false);
	fprintf(f, "</pre>\n</article>\n");
}

/* One file with everything inline - no scripts, fonts or images to fetch -
 * so that it can be archived by CI and opened anywhere. */
static void write_html(const char *path, const struct group *groups, size_t ngroups,
		       const size_t *counts)
{
	struct report_head h;
	report_open(&h, path, counts, "%Y-%m-%d %H:%M:%S");
	FILE *f = h.f;
	size_t findings = h.findings;
	const char *stamp = h.stamp, *host = h.host;

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		   "<title>gfp-sweep: ");
	esc(f, opt.argv[0], false);
	fprintf(f, "</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>\n%s</style>\n</head>\n"
		   "<body>\n<h1>gfp-sweep: <code>",
		html_style);
	esc(f, opt.argv[0], false);
	fprintf(f, "</code></h1>\n");
	if (ngroups)
		fprintf(f, "<p class=\"verdict bad\">%zu finding%s in %zu group%s</p>\n", findings,
			findings == 1 ? "" : "s", ngroups, ngroups == 1 ? "" : "s");
	else
		fprintf(f, "<p class=\"verdict good\">no crash, hang or silent data loss behind "
			   "any failure point</p>\n");

	fprintf(f, "<table class=\"kv\">\n<tr><th>program</th><td><code>");
	struct membuf m;
	command_line(mem_open(&m));
	mem_flush(&m, f, false);
	fprintf(f, "</code></td></tr>\n<tr><th>mode</th><td>%s: %s</td></tr>\n", opt.mode,
		strcmp(opt.mode, "nth") == 0 ? "fail every Nth eligible call"
					     : "fail the first, second and last hit of every site");
	fprintf(f, "<tr><th>eligible calls</th><td>%llu</td></tr>\n<tr><th>call sites</th><td>%zu"
		   "</td></tr>\n<tr><th>runs</th><td>%zu",
		(unsigned long long)eligible, nsites, nruns);
	if (opt.shard_n > 1)
		fprintf(f, " (shard %d/%d)", opt.shard_k, opt.shard_n);
	fprintf(f, ", %d at a time, timeout %.0f s; the sweep took %.1f s</td></tr>\n", opt.jobs,
		run_timeout(), now() - opt.started);
	fprintf(f, "<tr><th>started</th><td>%s", stamp);
	if (host[0]) {
		fprintf(f, " on ");
		esc(f, host, false);
	}
	fprintf(f, "</td></tr>\n</table>\n<div class=\"legend\">");
	for (int k = 0; k < O_COUNT; k++) {
		enum outcome o = bar_order[k];
		fprintf(f, "<span class=\"o-%s%s\">%s %zu</span>", outcome_name[o],
			counts[o] ? "" : " zero", outcome_name[o], counts[o]);
	}
	fprintf(f, "</div>\n<p class=\"note\">ok: the output matched the recording run; handled: "
		   "a non-zero exit; abort: an abort the program chose; silent: exit 0 with "
		   "different output; crash: a signal or a failed memory check; hang: killed "
		   "after the timeout; unreached: the failure point was never reached.</p>\n");

	fprintf(f, "<h2>Outcomes per call site</h2>\n<p class=\"note\">One bar per site, "
		   "findings first; hover over a segment for its failure points.</p>\n");
	html_chart(f, groups, ngroups);

	fprintf(f, "<h2>Findings</h2>\n");
	if (!ngroups)
		fprintf(f, "<p>None.</p>\n");
	for (size_t g = 0; g < ngroups; g++)
		html_group(f, groups, g);

	fprintf(f, "<details>\n<summary>All %zu runs</summary>\n<table class=\"runs\">\n<tr><th>#"
		   "</th><th>site</th><th>failure point</th><th>outcome</th><th>exit</th><th>time"
		   "</th></tr>\n",
		nruns);
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		fprintf(f, "<tr><td>%zu</td><td><code>%s</code></td><td>%s %llu</td><td>%s</td>"
			   "<td>",
			i + 1, r->inj_site[0] ? r->inj_site : r->site[0] ? r->site : "-",
			point_kind(r), (unsigned long long)r->hit, outcome_name[r->outcome]);
		if (r->signal)
			fprintf(f, "signal %d", r->signal);
		else
			fprintf(f, "%d", r->status);
		fprintf(f, "</td><td>%.2f s</td></tr>\n", r->seconds);
	}
	fprintf(f, "</table>\n</details>\n<footer>gfp-sweep %s</footer>\n</body>\n</html>\n",
		GFP_VERSION);
	if (fclose(f) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
}

/* A count option: a whole number of at least 1. */
static int positive(const char *name, const char *v)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (end == v || *end || errno || n < 1 || n > INT_MAX)
		die(EXIT_USAGE, "%s takes a whole number of at least 1, not '%s'", name, v);
	return (int)n;
}

/* --policy: the runs' keys; the failure points are the sweep's to choose, and
 * a trailing separator would double in reproducers. */
static const char *policy_arg(char *v)
{
	for (const char *k = v; (k = strstr(k, "fail.")); k++)
		if (k == v || k[-1] == ';' || k[-1] == ',' || k[-1] == ' ')
			die(EXIT_USAGE,
			    "--policy '%s' has fail.* keys: the sweep chooses the failure points "
			    "(give the other keys, such as limit= or default=)",
			    v);
	size_t n = strlen(v);
	while (n && (v[n - 1] == ';' || v[n - 1] == ',' || v[n - 1] == ' '))
		v[--n] = '\0';
	return v;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gfp-sweep [--mode sites|nth] [-j N] [--timeout S] [--max-runs N]\n"
		"                 [--shard K/N] [--policy STR] [--persist] [--follow] [--no-junk]\n"
		"                 [--input FILE] [--json FILE] [--junit FILE] [--html FILE]\n"
		"                 -- PROG [ARGS...]\n"
		"Runs PROG once to record its allocation call sites, then once per failure point\n"
		"(sites: the first, second and last hit of every site; nth: every Nth call;\n"
		"with --max-runs, every site's first hit or first call comes first),\n"
		"and reports the crashes, hangs and silent data losses it finds.\n"
		"--json, --junit and --html also write every result as JSON, as a JUnit XML\n"
		"report (one testcase per failure point) and as one self-contained HTML page.\n"
		"--input FILE is every run's standard input (else /dev/null).\n"
		"Exit status: 0 no finding, 1 findings, 2 usage errors, 125 the shim refused\n"
		"--policy.\n");
}

static void print_group_top(size_t g, void *groups)
{
	print_crash_top(&runs[((const struct group *)groups)[g].first]);
}

static void crash_sites_digest(const struct group *groups, size_t ngroups)
{
	const char **top = calloc(ngroups ? ngroups : 1, sizeof(*top));
	double *count = calloc(ngroups ? ngroups : 1, sizeof(*count));
	if (!top || !count)
		die(EXIT_USAGE, "out of memory");
	for (size_t g = 0; g < ngroups; g++) {
		const struct run *r = &runs[groups[g].first];
		if (r->outcome == O_CRASH)
			top[g] = r->crash_top;
		count[g] = (double)groups[g].count;
	}
	tool_crash_sites_digest(ngroups, top, count, print_group_top, (void *)groups);
	free(top);
	free(count);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mode", required_argument, NULL, 'm'},	   {"jobs", required_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 't'}, {"max-runs", required_argument, NULL, 'M'},
		{"shard", required_argument, NULL, 's'},   {"policy", required_argument, NULL, 'p'},
		{"persist", no_argument, NULL, 'P'},	   {"follow", no_argument, NULL, 'F'},
		{"no-junk", no_argument, NULL, 'J'},	   {"json", required_argument, NULL, 'o'},
		{"junit", required_argument, NULL, 'U'},   {"html", required_argument, NULL, 'H'},
		{"lib", required_argument, NULL, 'L'},	   {"help", no_argument, NULL, 'h'},
		{"input", required_argument, NULL, 'i'},   {NULL, 0, NULL, 0},
	};
	int c;
	const char *lib = NULL;
	opt.started = now();
	opt.wall_started = time(NULL);
	while ((c = getopt_long(argc, argv, "+m:j:t:M:s:p:o:L:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': opt.mode = optarg; break;
		case 'j': opt.jobs = positive("-j", optarg); break;
		case 't': opt.timeout_s = positive("--timeout", optarg); break;
		case 'M': opt.max_runs = positive("--max-runs", optarg); break;
		case 'i':
			if (!realpath(optarg, opt.input) || access(opt.input, R_OK) != 0)
				die(EXIT_USAGE, "--input %s: %s", optarg, strerror(errno));
			break;
		case 's':
			if (sscanf(optarg, "%d/%d", &opt.shard_k, &opt.shard_n) != 2 ||
			    opt.shard_n < 1 || opt.shard_k < 1 || opt.shard_k > opt.shard_n)
				die(EXIT_USAGE, "--shard takes K/N with 1 <= K <= N, e.g. 2/4");
			break;
		case 'p': opt.policy = policy_arg(optarg); break;
		case 'P': opt.persist = true; break;
		case 'F': opt.follow = true; break;
		case 'J': opt.junk = false; break;
		case 'o': opt.json = optarg; break;
		case 'U': opt.junit = optarg; break;
		case 'H': opt.html = optarg; break;
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
	nrunning = (size_t)opt.jobs + 1;
	running = calloc(nrunning, sizeof(*running));
	if (!running)
		die(EXIT_USAGE, "out of memory");
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

	/* The reports' files are checked before the runs, not after them. */
	const char *outputs[] = {opt.json, opt.junit, opt.html};
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		FILE *o = outputs[i] ? fopen(outputs[i], "a") : NULL;
		if (outputs[i] && !o)
			die(EXIT_USAGE, "cannot write %s: %s", outputs[i], strerror(errno));
		if (o)
			fclose(o);
	}

	snprintf(opt.tmp, sizeof(opt.tmp), "%s/gfp-sweep.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(opt.tmp))
		die(EXIT_USAGE, "mkdtemp: %s", strerror(errno));
	atexit(remove_tmp);
	stop_on_signals();

	record();
	plan();
	fprintf(stdout, "gfp-sweep: %s: %llu eligible calls at %zu call sites; %zu run%s (%s mode",
		opt.argv[0], (unsigned long long)eligible, nsites, nruns, nruns == 1 ? "" : "s",
		opt.mode);
	if (opt.shard_n > 1)
		fprintf(stdout, ", shard %d/%d", opt.shard_k, opt.shard_n);
	fprintf(stdout, ", -j %d)\n", opt.jobs);
	fflush(stdout);
	execute(0);
	if (strcmp(opt.mode, "nth") == 0)
		execute(plan_missed_sites());

	size_t counts[O_COUNT] = {0};
	struct group *groups = calloc(nruns + 1, sizeof(*groups));
	size_t ngroups = 0;
	for (size_t i = 0; i < nruns; i++) {
		counts[runs[i].outcome]++;
		runs[i].group = -1;
		if (!is_finding(runs[i].outcome))
			continue;
		size_t g = 0;
		while (g < ngroups && !same_group(&runs[groups[g].first], &runs[i]))
			g++;
		if (g == ngroups)
			groups[ngroups++] = (struct group){i, 0, false};
		groups[g].count++;
		runs[i].group = (long)g;
	}
	for (size_t g = 0; g < ngroups; g++)
		groups[g].confirmed = confirm(&runs[groups[g].first], (int)(nruns + 1 + g));

	printf("outcomes:");
	for (int o = 0; o < O_COUNT; o++)
		if (counts[o])
			printf(" %s %zu", outcome_name[o], counts[o]);
	printf("%s\n", nruns ? "" : " none");
	for (size_t g = 0; g < ngroups; g++) {
		const struct run *r = &runs[groups[g].first];
		printf("\n[%zu] %s", g + 1, outcome_name[r->outcome]);
		if (r->signal)
			printf(" (signal %d %s)", r->signal, strsignal(r->signal));
		printf(" in %zu run%s: allocation failure at site %s, %s %llu\n", groups[g].count,
		       groups[g].count == 1 ? "" : "s", r->inj_site[0] ? r->inj_site : "-",
		       r->site[0] ? "hit" : "call", (unsigned long long)r->hit);
		printf("  the failed allocation:\n");
		print_frames(r->inj_frames, false);
		if (r->crash_frames[0]) {
			printf("  the crash:\n");
			print_frames(r->crash_frames, true);
		}
		printf("  reproduce (%s): ", groups[g].confirmed ? "confirmed" : "NOT reproduced");
		reproducer(stdout, r);
		printf("\n");
	}
	if (!ngroups)
		printf("no crash, hang or silent data loss behind any failure point\n");
	crash_sites_digest(groups, ngroups);
	if (opt.json)
		write_json(opt.json, groups, ngroups, counts);
	if (opt.junit)
		write_junit(opt.junit, groups, counts);
	if (opt.html)
		write_html(opt.html, groups, ngroups, counts);
	fflush(stdout);
	free(groups);
	return ngroups ? EXIT_FINDINGS : 0;
}
