/*
 * campaign.c - gfp-sweep --campaign FILE: many targets in one file, swept
 * one after the other with the same -j, each run journalled as it finishes
 * (journal.c), so that a campaign stopped at any point goes on where it was
 * when it is run again, and gives the results an unbroken one gives.
 *
 * A target is swept exactly as `gfp-sweep -- ARGV < STDIN` with ENV would
 * sweep it (record, plan, execute, confirm: the same functions); only the
 * runs the journal already holds are not run again. The reports are made
 * from the journal alone (campaign-out.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"
#include "text.h"
#include "journal.h"
#include "sweep.h"

static struct target *targets;
static size_t ntargets;

/* ------------------------------------------------------------------------
 * The campaign file: a JSON array of targets, or one target per line
 * ---------------------------------------------------------------------- */

/* An array of strings into a NULL-terminated vector; NULL when it is not one. */
static char **str_vec(const struct jval *a)
{
	if (!a || a->type != J_ARR)
		return NULL;
	char **v = xrealloc(NULL, (a->n + 1) * sizeof(*v));
	for (size_t i = 0; i < a->n; i++) {
		if (a->v[i].type != J_STR) {
			free(v);
			return NULL;
		}
		v[i] = xstrdup(a->v[i].s);
	}
	v[a->n] = NULL;
	return v;
}

static void parse_target(const struct jval *o, const char *where, struct target *t)
{
	static const char *const keys[] = {"id", "argv", "stdin", "env", "status"};
	if (o->type != J_OBJ)
		die(EXIT_USAGE, "%s: a target is an object {\"id\", \"argv\", ...}", where);
	for (size_t i = 0; i < o->n; i++) {
		size_t k = 0;
		while (k < 5 && strcmp(o->k[i], keys[k]) != 0)
			k++;
		if (k == 5)
			die(EXIT_USAGE,
			    "%s: unknown key \"%s\" (a target has id, argv, stdin, env, status)",
			    where, o->k[i]);
	}
	const char *id = json_str(o, "id");
	if (!id || !*id ||
	    strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	               "0123456789._-") != strlen(id))
		die(EXIT_USAGE, "%s: \"id\" is a name of letters, digits, '.', '_' and '-'", where);
	memset(t, 0, sizeof(*t));
	t->id = xstrdup(id);
	t->argv = str_vec(json_get(o, "argv"));
	if (!t->argv || !t->argv[0] || !*t->argv[0])
		die(EXIT_USAGE, "%s: target %s: \"argv\" is a list of strings, the program first",
		    where, id);
	const struct jval *in = json_get(o, "stdin");
	if (in && in->type != J_STR)
		die(EXIT_USAGE, "%s: target %s: \"stdin\" is a file's path", where, id);
	t->input = xstrdup(in ? in->s : "");
	const struct jval *env = json_get(o, "env");
	if (env && env->type != J_OBJ)
		die(EXIT_USAGE, "%s: target %s: \"env\" is an object of strings", where, id);
	t->env = xrealloc(NULL, ((env ? env->n : 0) + 1) * sizeof(*t->env));
	for (size_t i = 0; env && i < env->n; i++) {
		if (env->v[i].type != J_STR || !*env->k[i] || strchr(env->k[i], '='))
			die(EXIT_USAGE, "%s: target %s: env \"%s\" is not NAME: \"value\"", where,
			    id, env->k[i]);
		size_t n = strlen(env->k[i]) + strlen(env->v[i].s) + 2;
		t->env[i] = xrealloc(NULL, n);
		snprintf(t->env[i], n, "%s=%s", env->k[i], env->v[i].s);
	}
	t->env[env ? env->n : 0] = NULL;
	double st = 0;
	const struct jval *sv = json_get(o, "status");
	if (sv && (!json_num(o, "status", &st) || st < 0 || st > 255 || st != (int)st))
		die(EXIT_USAGE, "%s: target %s: \"status\" is an exit status, 0 to 255", where, id);
	t->status = (int)st;
	t->state = "not_run";
}

static void add_target(const struct jval *o, const char *where)
{
	targets = xrealloc(targets, (ntargets + 1) * sizeof(*targets));
	parse_target(o, where, &targets[ntargets]);
	for (size_t i = 0; i < ntargets; i++)
		if (strcmp(targets[i].id, targets[ntargets].id) == 0)
			die(EXIT_USAGE, "%s: a second target \"%s\": ids are unique", where,
			    targets[i].id);
	ntargets++;
}

/* The standard input to its end: a pipe may take its time (a generator
 * upstream), so the wait is one a stop signal ends. poll(2) returns EINTR
 * whatever SA_RESTART says. */
static char *read_stdin(size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = xrealloc(NULL, cap);
	progress_phase("reading the campaign from the standard input");
	for (;;) {
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		int ready = poll(&p, 1, 200);
		if (stop_requested())
			die(128 + stop_requested(), "stopped by SIG%s while reading the campaign",
			    sigabbrev_np(stop_requested()));
		if (!isatty(STDIN_FILENO)) /* a progress line would cut into the typing */
			progress_tick();
		if (ready <= 0)
			continue;
		ssize_t r = read(STDIN_FILENO, buf + n, cap - n - 1);
		if (r == 0)
			break;
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			die(EXIT_USAGE, "--campaign -: %s", strerror(errno));
		n += (size_t)r;
		if (cap - n - 1 == 0)
			buf = xrealloc(buf, cap *= 2);
	}
	progress_clear();
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The campaign's text: a regular file's, or the standard input's ("-").
 * Anything else is refused before it is read: a FIFO would hold the
 * sweep in open(2) until a writer came, a directory or a device never
 * ends its targets. */
static char *read_campaign(const char *path, size_t *len)
{
	if (strcmp(path, "-") == 0)
		return read_stdin(len);
	/* O_NONBLOCK: a FIFO opens at once, to be refused below. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		die(EXIT_USAGE, "--campaign %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die(EXIT_USAGE,
		    "--campaign %s is %s: give a regular file, or - for the standard input", path,
		    S_ISDIR(st.st_mode)    ? "a directory"
		    : S_ISFIFO(st.st_mode) ? "a FIFO"
		    : S_ISCHR(st.st_mode)  ? "a character device"
		                           : "not a regular file");
	char *text = infile_read_fd(fd, len);
	if (!text)
		die(EXIT_USAGE, "--campaign %s: %s", path, strerror(errno));
	close(fd);
	return text;
}

/* A JSON array of targets, or JSON Lines: one target per line, blank lines
 * and lines starting with '#' left out. */
static void load_campaign(const char *path)
{
	size_t len;
	char *text = read_campaign(path, &len), err[256], where[PATH_MAX + 32];
	struct jval v;
	size_t start = strspn(text, " \t\r\n");
	if (start < len && text[start] == '[') {
		if (!json_parse(text, len, 1, &v, err, sizeof(err)))
			die(EXIT_USAGE, "%s: %s", path, err);
		for (size_t i = 0; i < v.n; i++) {
			snprintf(where, sizeof(where), "%s: target %zu", path, i + 1);
			add_target(&v.v[i], where);
		}
		json_free(&v);
	}
	int lineno = 0;
	for (char *line = text; start < len && text[start] != '[' && line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t l = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		size_t sp = strspn(line, " \t\r");
		lineno++;
		if (sp < l && line[sp] != '#') {
			if (!json_parse(line, l, lineno, &v, err, sizeof(err)))
				die(EXIT_USAGE, "%s: %s", path, err);
			snprintf(where, sizeof(where), "%s:%d", path, lineno);
			add_target(&v, where);
			json_free(&v);
		}
		line = nl ? nl + 1 : text + len;
	}
	free(text);
	if (!ntargets)
		die(EXIT_USAGE, "--campaign %s has no target", path);
}

/* ------------------------------------------------------------------------
 * A target's key: it changes when what its runs would do changes
 * ---------------------------------------------------------------------- */

static void fnv(uint64_t *h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*h = (*h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
}

static void fnv_str(uint64_t *h, const char *s)
{
	fnv(h, s, strlen(s) + 1);
}

/* A file as it is now: its size and time (a rebuilt program, new input). */
static void fnv_file(uint64_t *h, const char *path)
{
	struct stat st;
	long long v[3] = {-1, 0, 0};
	if (path[0] && stat(path, &st) == 0)
		v[0] = (long long)st.st_size, v[1] = st.st_mtim.tv_sec, v[2] = st.st_mtim.tv_nsec;
	fnv(h, v, sizeof(v));
}

static void target_key(const struct target *t, char out[17])
{
	uint64_t h = 14695981039346656037ull;
	for (char **a = t->argv; *a; a++)
		fnv_str(&h, *a);
	fnv_str(&h, "\001env");
	for (char **e = t->env; *e; e++)
		fnv_str(&h, *e);
	fnv_str(&h, t->input);
	fnv(&h, &t->status, sizeof(t->status));
	fnv_str(&h, prog_path);
	fnv_file(&h, prog_path);
	fnv_file(&h, t->input);
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

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
	journal_run(cur, pos[r - runs], r);
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
	size_t n = nruns - from;
	size_t *ix = xrealloc(NULL, (n + 1) * sizeof(*ix));
	size_t *p = xrealloc(NULL, (n + 1) * sizeof(*p));
	byplan = xrealloc(byplan, (n + 1) * sizeof(*byplan));
	for (size_t i = 0; i < n; i++)
		ix[i] = from + i;
	qsort(ix, n, sizeof(*ix), pos_cmp);
	for (size_t i = 0; i < n; i++)
		byplan[i] = runs[ix[i]], p[i] = pos[ix[i]];
	memcpy(runs + from, byplan, n * sizeof(*runs));
	memcpy(pos + from, p, n * sizeof(*pos));
	free(ix);
	free(p);
}

/* Runs runs[from..nruns): those the journal has are taken from it and put
 * first, the others executed (and journalled), then all in plan order. */
static void run_phase(size_t from, const struct segment *s)
{
	pos = xrealloc(pos, (nruns + 1) * sizeof(*pos));
	for (size_t i = from; i < nruns; i++)
		pos[i] = i;
	struct run *kept = xrealloc(NULL, (s->nruns + 1) * sizeof(*kept));
	for (size_t i = 0; i < s->nruns; i++)
		journal_restore(s->runs[i], &kept[i]);
	qsort(kept, s->nruns, sizeof(*kept), run_cmp);
	size_t front = from;
	for (size_t i = from; i < nruns; i++) {
		struct run *k = bsearch(&runs[i], kept, s->nruns, sizeof(*kept), run_cmp);
		if (!k)
			continue;
		struct run r = *k;
		size_t p = pos[i];
		runs[i] = runs[front];
		pos[i] = pos[front];
		runs[front] = r;
		pos[front++] = p;
	}
	free(kept);
	if (front > from)
		tool_note("%zu of %zu runs finished before, taken from %s", front - from,
		          nruns - from, opt.state);
	run_done_hook = journal_hook;
	execute(front);
	run_done_hook = NULL;
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
	return e == (double)eligible && s == (double)nsites && st == opt.rec_status && u &&
	       u->b == opt.unstable && c && c->b == opt.by_call;
}

static void sweep_target(size_t t)
{
	struct target *tg = &targets[t];
	char why[PATH_MAX + 200], key[17];
	opt.argv = tg->argv;
	int bad = program_check(why, sizeof(why));
	target_key(tg, key);
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
	remove_tmp();
	make_tmp();
	nruns = nsites = 0;
	eligible = 0;
	opt.unstable = false;
	opt.by_call = false;
	progress_phase("target %s: recording run", tg->id);
	cur_key = key;
	record();
	cur_key = NULL;
	if (!stop_requested() && opt.rec_status != tg->status) {
		snprintf(why, sizeof(why), "without injection it exits %d, the campaign expects %d",
		         opt.rec_status, tg->status);
		target_error(t, key, why);
	} else if (!stop_requested()) {
		plan();
		if (!same || !recorded_same(s->target))
			journal_target(t, key);
		sweep_header();
		run_phase(0, s);
		if (strcmp(opt.mode, "nth") == 0 && !stop_requested())
			run_phase(plan_missed_sites(), s);
		keep_finished_runs();
		struct finding *fs = xrealloc(NULL, (nruns + 1) * sizeof(*fs));
		size_t counts[O_COUNT] = {0};
		size_t nfs = group_runs(fs, counts);
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

/* record() ends gfp-sweep when a recording run fails (the program crashes
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
	program_check(why, sizeof(why));
	target_key(tg, key);
	tg->error = NULL;
	if (!s->key || strcmp(s->key, key) != 0)
		tg->state = "not_run";
	else if (s->error) {
		tg->state = "error";
		tg->error = xstrdup(s->error);
	} else
		tg->state = s->done ? "done" : s->target ? "interrupted" : "not_run";
}

int campaign_main(void)
{
	load_campaign(opt.campaign);
	campaign_check_pages(targets, ntargets);
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
	return campaign_report(targets, ntargets);
}
