/*
 * gfp-ctl - read and change the policy of a running process (ctl=1).
 *
 *   gfp-ctl PID get [KEY]            the policy, or one key, as key=value
 *   gfp-ctl PID set KEY=VALUE...     change keys at once (GFP_POLICY syntax)
 *   gfp-ctl PID report               the statistics now (GFP_REPORT JSON)
 *   gfp-ctl PID status [--json]      the budget now, for people (binary
 *                                    units, the part of live mapped, the
 *                                    memory events met), or as JSON
 *   gfp-ctl --list                   this user's processes that listen
 *
 * What the process answers goes to stdout; an error it answers is said by
 * gfp-ctl, naming the process and that the shim in it said the rest:
 * "gfp-ctl: error: pid 42 (server) refused: gfpshim: ...".
 *
 * Exit status: 0 done; 1 the process answered with an error (refused, or a
 * key that cannot change at run time, or closed the connection without a
 * reply); 125 a set the policy parser rejects; 2 usage, or no process
 * listening for this user.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "infile.h"
#include "tool.h"
#include "json.h"
#include "policy.h"
#include "text.h"

static void usage(void)
{
	printf("usage: gfp-ctl PID get [KEY]\n"
	       "       gfp-ctl PID set KEY=VALUE...\n"
	       "       gfp-ctl PID report\n"
	       "       gfp-ctl PID status [--json]\n"
	       "       gfp-ctl --list | --help | --version\n"
	       "Talks to a process started with GFP_POLICY ctl=1 (same user only): get prints\n"
	       "its policy or one key as key=value, set changes keys at once (GFP_POLICY\n"
	       "syntax), report prints its statistics now (GFP_REPORT JSON), status its\n"
	       "budget now (live, limit, free, the part of live the program mapped itself,\n"
	       "the memory events it met, ... in KiB, MiB, GiB; --json: bytes).\n"
	       "--list prints the pid and name of each process of this user that listens.\n"
	       "Exit status:\n"
	       "  0    done\n"
	       "  1    the process answered with an error (refused, an unknown key, a key\n"
	       "       that cannot change at run time) or closed without a reply\n"
	       "  2    usage error, or no process of this user listening at PID\n"
	       "  125  set: the policy parser rejects the keys (as GFP_POLICY would)\n"
	       "See gfp-ctl(1) and gfpshim(7).\n");
}

/* The command line's mistakes, each named; NULL when it is well formed. */
static const char *bad_usage(int argc, char **argv, long *pid)
{
	static char why[256];
	if (argc < 3)
		return "expected PID and a command: get, set, report or status";
	char *end;
	errno = 0;
	*pid = strtol(argv[1], &end, 10);
	if (end == argv[1] || *end || errno || *pid <= 0 || *pid > INT_MAX) {
		snprintf(why, sizeof(why), "'%s' is not a process id", argv[1]);
		return why;
	}
	const char *cmd = argv[2];
	if (!strcmp(cmd, "set")) {
		/* set needs a key: an empty argument is a mistake on this side. */
		bool any = false;
		for (int i = 3; i < argc; i++)
			any |= argv[i][strspn(argv[i], " \t;")] != '\0';
		return any ? NULL : "set needs KEY=VALUE";
	}
	if (!strcmp(cmd, "get"))
		return argc > 4 ? "get takes at most one KEY" : NULL;
	if (!strcmp(cmd, "report"))
		return argc > 3 ? "report takes no argument" : NULL;
	if (!strcmp(cmd, "status"))
		return argc > 4 || (argc == 4 && strcmp(argv[3], "--json") != 0)
		           ? "status takes --json only"
		           : NULL;
	snprintf(why, sizeof(why), "unknown command '%s' (get, set, report or status)", cmd);
	return why;
}

/* The name of process pid, its control bytes as \xNN as the shim's
 * messages show them; NULL when /proc does not say. */
static const char *comm_of(long pid)
{
	static char q[80];
	char path[64], comm[64];
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t n = fread(comm, 1, sizeof(comm) - 1, f);
	fclose(f);
	if (n && comm[n - 1] == '\n') /* the kernel's, not the name's */
		n--;
	return gfp_quote(q, sizeof(q), comm, n);
}

/* " (NAME)" after a pid, or "". */
static const char *process_name(long pid)
{
	static char out[96];
	const char *comm = comm_of(pid);
	snprintf(out, sizeof(out), comm ? " (%s)" : "", comm);
	return out;
}

/* ------------------------------------------------------------------------
 * --list
 * ---------------------------------------------------------------------- */

/* Whether /proc/net/unix (table) has a socket listening at path: one a
 * process left behind (killed before it could remove it) has none. */
static bool listening(const char *table, const char *path)
{
	for (const char *line = table; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char copy[512];
		unsigned long flags = 0;
		int at = 0;
		if (len < sizeof(copy)) {
			memcpy(copy, line, len);
			copy[len] = '\0';
			/* Num RefCount Protocol Flags Type St Inode Path */
			if (sscanf(copy, "%*s %*s %*s %lx %*s %*s %*s %n", &flags, &at) == 1 &&
			    at && (flags & 0x10000) /* __SO_ACCEPTCON */ &&
			    strcmp(copy + at, path) == 0)
				return true;
		}
		line = eol ? eol + 1 : NULL;
	}
	return false;
}

static int by_pid(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* Every process of this user with a socket in the directories gfp-ctl
 * looks in, listening now: "PID\tNAME" lines, by pid. */
static int list(void)
{
	char *table = infile_read("/proc/net/unix", NULL);
	long *pids = NULL;
	size_t n = 0;
	char first[PATH_MAX] = "";
	for (int which = 0; which < 2; which++) {
		char dir[PATH_MAX], why[512];
		if (ctl_socket_dir(which, dir, sizeof(dir), false, why, sizeof(why)) != 0) {
			if (errno != ENOENT)
				tool_warning("%s", why);
			continue;
		}
		if (!strcmp(dir, first)) /* no XDG_RUNTIME_DIR: the same one */
			continue;
		snprintf(first, sizeof(first), "%s", dir);
		DIR *d = opendir(dir);
		for (struct dirent *e; d && (e = readdir(d));) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);
			if (!isdigit((unsigned char)e->d_name[0]) || strcmp(end, ".sock") != 0 ||
			    pid <= 0 || pid > INT_MAX)
				continue;
			char path[PATH_MAX + 256], proc[64];
			struct stat st;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			snprintf(proc, sizeof(proc), "/proc/%ld", pid);
			/* Without /proc/net/unix, a live pid is all there is to go by. */
			if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode) ||
			    access(proc, F_OK) != 0 || (table && !listening(table, path)))
				continue;
			pids = xrealloc(pids, (n + 1) * sizeof(*pids));
			pids[n++] = pid;
		}
		if (d)
			closedir(d);
	}
	qsort(pids, n, sizeof(*pids), by_pid);
	for (size_t i = 0; i < n; i++) {
		if (i && pids[i] == pids[i - 1])
			continue;
		const char *comm = comm_of(pids[i]);
		printf("%ld\t%s\n", pids[i], comm ? comm : "");
	}
	free(pids);
	free(table);
	return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
}

/* ------------------------------------------------------------------------
 * status
 * ---------------------------------------------------------------------- */

/* A number of the reply exactly as written (bytes beyond 2^53 too). */
static bool number(const struct jval *o, const char *key, long long *out)
{
	const struct jval *v = json_get(o, key);
	if (!v || v->type != J_NUM)
		return false;
	char *end;
	errno = 0;
	*out = strtoll(v->s, &end, 10);
	return !*end && !errno;
}

/* "name  64.0 MiB" and a remark: the sizes as the shim's own messages
 * show them (gfp_human_size: binary units, one decimal, rounded). */
static void size_row(const char *name, long long bytes, const char *remark)
{
	char h[GFP_HUMAN_LEN];
	printf("%-10s %10s%s%s\n", name, gfp_human_size(h, bytes), *remark ? "  " : "", remark);
}

/* "NAME  12.0 MiB  (...)": the part of live the program mapped itself (the
 * report's "mapped"), when it is counted. */
static void mapped_row(const struct jval *st, bool limited, bool tree)
{
	const struct jval *m = json_get(st, "mapped");
	long long live, pieces = 0, held = 0;
	if (!number(m, "live_bytes", &live))
		return;
	number(m, "live_mappings", &pieces);
	number(m, "uncharged_bytes", &held);
	char remark[160], h[GFP_HUMAN_LEN];
	int n = snprintf(remark, sizeof(remark), "(%s%lld mapping%s the program made itself",
	                 !limited ? ""
	                 : tree   ? "of this process's live: "
	                          : "of live: ",
	                 pieces, pieces == 1 ? "" : "s");
	if (held > 0)
		snprintf(remark + n, sizeof(remark) - (size_t)n, "; %s more reserved, uncharged",
		         gfp_human_size(h, held));
	strncat(remark, ")", sizeof(remark) - strlen(remark) - 1);
	size_row("mapped", live, remark);
}

/* "events  max 3, oom 1": the counts of memory.events that are not 0, in
 * the order the process wrote them, or "none". */
static void events_row(const char *name, const struct jval *ev)
{
	if (!ev || ev->type != J_OBJ)
		return;
	printf("%-10s ", name);
	const char *sep = "";
	for (size_t i = 0; i < ev->n; i++) {
		long long v;
		if (!number(ev, ev->k[i], &v) || v == 0)
			continue;
		char q[64];
		printf("%s%s %lld", sep, gfp_quote(q, sizeof(q), ev->k[i], strlen(ev->k[i])), v);
		sep = ", ";
	}
	printf("%s\n", *sep ? "" : "none");
}

static int print_status(long pid, const char *text, size_t len)
{
	struct jval st;
	char err[256] = "no limit";
	long long limit, live, own, v;
	if (!json_parse(text, len, 1, &st, err, sizeof(err)) || !number(&st, "limit", &limit)) {
		tool_error("pid %ld%s answered a status gfp-ctl cannot read (%s): %.200s", pid,
		           process_name(pid), err, text);
		return 1;
	}
	printf("%-10s %ld%s\n", "pid", pid, process_name(pid));
	if (number(&st, "threads", &v))
		printf("%-10s %10lld\n", "threads", v);
	bool tree = json_str(&st, "scope") && !strcmp(json_str(&st, "scope"), "tree");
	if (!limit || !number(&st, "live", &live)) {
		printf("%-10s %10s  (live bytes are counted under a limit=)\n", "limit", "none");
		mapped_row(&st, false, false);
	} else {
		const char *from = json_str(&st, "limit_from");
		size_row("limit", limit,
		         tree                              ? "(the tree's: limit.scope=tree)"
		         : from && !strcmp(from, "cgroup") ? "(the cgroup's: limit=cgroup)"
		                                           : "");
		char mine[GFP_HUMAN_LEN + 32] = "";
		if (tree && number(&st, "process_live", &own)) {
			char h[GFP_HUMAN_LEN];
			snprintf(mine, sizeof(mine), "(the tree's; this process %s)",
			         gfp_human_size(h, own));
		}
		size_row("live", live, mine);
		mapped_row(&st, true, tree);
		static const char *const rows[] = {"free", "min_free", "reserved"};
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
			if (number(&st, rows[i], &v))
				size_row(rows[i], v, "");
		if (number(&st, "waiting", &v))
			printf("%-10s %10lld\n", "waiting", v);
		events_row("events", json_get(&st, "memory_events"));
		events_row("tree_events", json_get(&st, "tree_memory_events"));
	}
	if (number(&st, "allocated", &v) && v >= 0)
		size_row("allocated", v, "(jemalloc's count, the shim's own blocks too)");
	if (number(&st, "resident", &v) && v >= 0)
		size_row("resident", v, "(jemalloc's)");
	json_free(&st);
	return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
}

/* ------------------------------------------------------------------------
 * Requests
 * ---------------------------------------------------------------------- */

/* why[]: what was wrong with a directory that was looked in, if anything. */
static int connect_to(pid_t pid, char *path, size_t n, char *why, size_t wn)
{
	int last = ENOENT;
	why[0] = '\0';
	for (int which = 0; which < 2; which++) {
		char bad[512];
		if (ctl_socket_path(which, pid, path, n, false, bad, sizeof(bad)) != 0) {
			/* A directory that does not exist says nothing. */
			if (!why[0] && errno != ENOENT)
				snprintf(why, wn, "%s", bad);
			continue;
		}
		struct sockaddr_un addr = {.sun_family = AF_UNIX};
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return fd;
		last = errno;
		close(fd);
	}
	errno = last;
	return -1;
}

/* The error lines of a reply, each said by gfp-ctl: who answered, and
 * that the shim in it wrote the rest. */
static void relay_errors(long pid, const char *reply)
{
	const char *name = process_name(pid);
	for (const char *line = reply; *line;) {
		const char *eol = strchr(line, '\n');
		int len = eol ? (int)(eol - line) : (int)strlen(line);
		const char *prefix[] = {GFP_CTL_REFUSED, GFP_CTL_ERROR};
		for (size_t i = 0; i < 2; i++)
			if (!strncmp(line, prefix[i], strlen(prefix[i]))) {
				len -= (int)strlen(prefix[i]);
				line += strlen(prefix[i]);
				break;
			}
		tool_error("pid %ld%s refused: gfpshim: %.*s", pid, name, len, line);
		if (!eol)
			break;
		line = eol + 1;
	}
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage();
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version"))
		return tool_version();
	if (argc >= 2 && !strcmp(argv[1], "--list"))
		return argc == 2 ? list() : tool_usage_error("--list takes no argument");
	/* --json before the pid too, as options go */
	bool json = argc >= 2 && !strcmp(argv[1], "--json");
	if (json)
		argv++, argc--;
	if (argc >= 2 && argv[1][0] == '-' && argv[1][1] && !isdigit((unsigned char)argv[1][1]))
		return tool_usage_error("unknown option '%s'", argv[1]);
	long pid = 0;
	const char *why_bad = bad_usage(argc, argv, &pid);
	if (why_bad)
		return tool_usage_error("%s", why_bad);
	const char *cmd = argv[2];
	bool is_set = !strcmp(cmd, "set");
	if (json && strcmp(cmd, "status") != 0)
		return tool_usage_error("--json goes with status (get, set and report print as "
		                        "they are)");
	bool human = !strcmp(cmd, "status") && argc == 3 && !json;
	/* One request line: the command and its arguments, set's joined by ';'
	 * (status --json is gfp-ctl's: the process always answers bytes). */
	static char req[64 * 1024];
	size_t len = (size_t)snprintf(req, sizeof(req), "%s", cmd);
	for (int i = 3; i < argc && len < sizeof(req) && strcmp(cmd, "status"); i++)
		len += (size_t)snprintf(req + len, sizeof(req) - len, "%s%s", i == 3 ? " " : ";",
		                        argv[i]);
	if (len >= sizeof(req) - 1 || strchr(req, '\n')) {
		tool_error("the request is too long or has a newline");
		return EXIT_USAGE;
	}
	req[len++] = '\n';

	char path[108], why[512];
	int fd = connect_to((pid_t)pid, path, sizeof(path), why, sizeof(why));
	if (fd < 0) {
		tool_error("no control socket for process %ld (%s): start it with "
		           "GFP_POLICY='ctl=1' as this user",
		           pid, strerror(errno));
		if (why[0])
			tool_note("%s", why);
		return EXIT_USAGE;
	}
	/* A refusal may close the socket before the request is read: the
	 * reply, if any, still says why. */
	signal(SIGPIPE, SIG_IGN);
	bool sent = gfp_write_all(fd, req, len);
	int send_errno = errno;
	shutdown(fd, SHUT_WR);
	/* The whole reply: its first line decides where it goes and the exit
	 * status. */
	char *reply = NULL;
	size_t got = 0, cap = 0;
	ssize_t n;
	do {
		if (cap - got < 4096)
			reply = xrealloc(reply, cap = cap ? 2 * cap : 1 << 16);
		n = read(fd, reply + got, cap - got - 1);
		got += n > 0 ? (size_t)n : 0;
	} while (n > 0 || (n < 0 && errno == EINTR));
	close(fd);
	reply[got] = '\0';
	if (!got && !sent) {
		tool_error("cannot send to %s: %s", path, strerror(send_errno));
		free(reply);
		return EXIT_USAGE;
	}
	if (!got) {
		tool_error("process %ld%s closed the connection without a reply", pid,
		           process_name(pid));
		free(reply);
		return 1;
	}
	char head[512];
	snprintf(head, sizeof(head), "%.*s", (int)strcspn(reply, "\n"), reply);
	int status = ctl_reply_status(head, is_set);
	if (ctl_reply_is_error(reply, got))
		relay_errors(pid, reply);
	else if (human)
		status = print_status(pid, reply, got);
	else if (fwrite(reply, 1, got, stdout) != got || fflush(stdout) != 0)
		status = EXIT_USAGE;
	free(reply);
	return status;
}
