/*
 * targets.c - a campaign's file: its targets, as a JSON array or one JSON
 * object per line (blank lines and '#' lines left out), each one checked
 * (exit 2 with where and why), and each target's key.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"
#include "targets.h"

/* The targets read so far. */
struct list {
	struct target *t;
	size_t n;
};

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

static void add_target(struct list *l, const struct jval *o, const char *where)
{
	l->t = xrealloc(l->t, (l->n + 1) * sizeof(*l->t));
	parse_target(o, where, &l->t[l->n]);
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->t[i].id, l->t[l->n].id) == 0)
			die(EXIT_USAGE, "%s: a second target \"%s\": ids are unique", where,
			    l->t[i].id);
	l->n++;
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
size_t targets_load(const char *path, struct target **out)
{
	size_t len;
	struct list list = {NULL, 0};
	char *text = read_campaign(path, &len), err[256], where[PATH_MAX + 32];
	struct jval v;
	size_t start = strspn(text, " \t\r\n");
	if (start < len && text[start] == '[') {
		if (!json_parse(text, len, 1, &v, err, sizeof(err)))
			die(EXIT_USAGE, "%s: %s", path, err);
		for (size_t i = 0; i < v.n; i++) {
			snprintf(where, sizeof(where), "%s: target %zu", path, i + 1);
			add_target(&list, &v.v[i], where);
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
			add_target(&list, &v, where);
			json_free(&v);
		}
		line = nl ? nl + 1 : text + len;
	}
	free(text);
	if (!list.n)
		die(EXIT_USAGE, "--campaign %s has no target", path);
	*out = list.t;
	return list.n;
}

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

void targets_key(const struct target *t, char out[17])
{
	uint64_t h = 14695981039346656037ull;
	for (char **a = t->argv; *a; a++)
		fnv_str(&h, *a);
	fnv_str(&h, "\001env");
	for (char **e = t->env; *e; e++)
		fnv_str(&h, *e);
	fnv_str(&h, t->input);
	fnv(&h, &t->status, sizeof(t->status));
	fnv_str(&h, sweep.prog_path);
	fnv_file(&h, sweep.prog_path);
	fnv_file(&h, t->input);
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}
