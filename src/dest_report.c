/*
 * dest_report.c - GFP_REPORT: a report is written whole at exit into a new
 * file (O_EXCL, mode 0600) in the same directory and renamed over the path,
 * so a symlink there is replaced, not written through.
 *
 * Many processes of one run (a shell script and what it starts, forked
 * children) may inherit one GFP_REPORT path without %p. The run's first
 * process, the one that did not inherit it (or the program it exec'd: the
 * same pid and start time), writes the path; every other one writes
 * PATH.PID beside it, as the kernel appends .PID to a core_pattern without
 * %p (core_uses_pid, format_corename). GFP_INHERITED names the first
 * process (dest_inherit.c), and every report carries it ("run"). At its
 * exit the first process says in one line which reports of its run lie
 * beside its own; so does one that ends after it (the first's report is
 * there) if no process of the run started it: one line for what outlived
 * the first process, not one per process. A relative path is made absolute
 * by the first process and handed on so (dest_set.c): a child that changed
 * directory writes beside the others.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename(2) only: no stdio */
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "comm.h"
#include "fd.h"
#include "dest.h"
#include "dest_report.h"

/* The other reports of a run the first process's line names by pid. */
#define RUN_NAMED 8

/* ------------------------------------------------------------------------
 * Names
 * ---------------------------------------------------------------------- */

/* The report's path with %p replaced by the pid; false when it does not fit. */
static bool expand_pid(const char *tmpl, char *out, size_t cap)
{
	struct gfp_buf b = {out, cap, 0};
	for (const char *c = tmpl; *c; c++) {
		if (c[0] == '%' && c[1] == 'p') {
			gfp_buf_printf(&b, "%d", (int)getpid());
			c++;
		} else {
			gfp_buf_printf(&b, "%c", *c);
		}
	}
	return b.len + 1 < cap;
}

/* The directory part of path into dir ("." when there is none). */
static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		gfp_snprintf(dir, cap, ".");
	else if (slash == path)
		gfp_snprintf(dir, cap, "/");
	else
		gfp_snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

/* A new file beside path, O_EXCL (a name someone planted, even a symlink,
 * is skipped, never opened), 0600; its name in tmp. */
static int create_temp(const char *path, char *tmp, size_t cap)
{
	char dir[sizeof(((struct gfp_dest *)0)->path) + GFP_DEST_SLACK];
	dir_of(path, dir, sizeof(dir));
	static unsigned counter; /* atomic */
	for (int attempt = 0; attempt < 64; attempt++) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		gfp_snprintf(tmp, cap, "%s/.gfpshim-%d-%x%lx.tmp", dir, (int)getpid(),
		             __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED),
		             (unsigned long)ts.tv_nsec);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* ------------------------------------------------------------------------
 * Runs: one report path, many processes
 * ---------------------------------------------------------------------- */

/* This process's start time, in clock ticks after boot (/proc/self/stat's
 * 22nd field): exec keeps it with the pid, a pid given out again has
 * another. 0 when /proc cannot say (then the pid alone tells). */
static unsigned long long self_start(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	/* The name in parentheses may hold spaces and ')': the fields count
	 * from the last ')'. */
	const char *p = n > 0 ? memrchr(buf, ')', (size_t)n) : NULL;
	if (p)
		buf[n] = '\0';
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	unsigned long long v = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	return v;
}

/* Whether this process writes the run's own path. */
static bool run_first(const struct gfp_dest *d)
{
	return d->run_first && getpid() == d->run_pid;
}

/* The file this process's report goes to: %p expanded, or for a process
 * that is not the run's first, PATH.PID. False when it does not fit. */
static bool report_name(const struct gfp_dest *d, const char *tmpl, char *out, size_t cap)
{
	if (!expand_pid(tmpl, out, cap))
		return false;
	if (strstr(tmpl, "%p") || run_first(d))
		return true;
	size_t len = strlen(out);
	int n = gfp_snprintf(out + len, cap - len, ".%d", (int)getpid());
	return n > 0 && (size_t)n < cap - len;
}

void gfp_dest_report_run_json(const struct gfp_dest *d, struct gfp_buf *b)
{
	if (d->run_pid)
		gfp_buf_printf(b, ",\"run\":{\"pid\":%d,\"start\":%llu}", (int)d->run_pid,
		               d->run_start);
}

/* Whether the file name (in dir, or a path with AT_FDCWD) is a report of
 * d's run, and this user's. */
static bool of_run(const struct gfp_dest *d, int dir, const char *name)
{
	char tag[96], head[256];
	struct gfp_buf t = {tag, sizeof(tag), 0};
	gfp_dest_report_run_json(d, &t);
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	ssize_t n = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		n = read(fd, head, sizeof(head));
	close(fd);
	/* {"gfpshim":"V","pid":N,"run":{...}: within the first bytes */
	return n > 0 && t.len > 1 && memmem(head, (size_t)n, tag + 1, t.len - 1);
}

/* PID when name is base.PID, else 0. */
static int sibling_pid(const char *name, const char *base, size_t blen)
{
	if (strncmp(name, base, blen) != 0 || name[blen] != '.')
		return 0;
	long pid = 0;
	const char *c = name + blen + 1;
	for (; *c >= '0' && *c <= '9' && pid < 1L << 31; c++)
		pid = pid * 10 + (*c - '0');
	return *c || c == name + blen + 1 || pid >= 1L << 31 ? 0 : (int)pid;
}

/* The first process's line: the reports of its run found beside its own.
 * A process that ends after it says the same, with its own name, if its
 * parent is none of the run's: there is one such line for what outlived
 * the first process (a daemon, a job left running), not one per process. */
static void name_the_others(const struct gfp_dest *d, const char *first, bool late)
{
	/* Static: it runs once, at exit, perhaps on a signal's small stack. */
	static char dir[sizeof(d->path) + GFP_DEST_SLACK], buf[32768];
	dir_of(first, dir, sizeof(dir));
	const char *base = strrchr(first, '/') ? strrchr(first, '/') + 1 : first;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	int pids[RUN_NAMED];
	unsigned found = 0;
	long got;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			const struct dirent64 *e = (const void *)(buf + off);
			off += e->d_reclen;
			int pid = sibling_pid(e->d_name, base, strlen(base));
			if (pid <= 0 || !of_run(d, dfd, e->d_name))
				continue;
			/* the lowest pids: the first ones started, mostly */
			unsigned i = found < RUN_NAMED ? found : RUN_NAMED;
			for (; i && pids[i - 1] > pid; i--)
				if (i < RUN_NAMED)
					pids[i] = pids[i - 1];
			if (i < RUN_NAMED)
				pids[i] = pid;
			found++;
		}
	}
	close(dfd);
	if (!found)
		return;
	unsigned shown = found < RUN_NAMED ? found : RUN_NAMED;
	char list[RUN_NAMED * 12 + 32], q[GFP_DEST_QUOTED], who[96] = "";
	struct gfp_buf b = {list, sizeof(list), 0};
	for (unsigned i = 0; i < shown; i++)
		gfp_buf_printf(&b, "%s%d", i ? ", " : "", pids[i]);
	if (found > shown)
		gfp_buf_printf(&b, " and %u more", found - shown);
	if (late)
		gfp_snprintf(who, sizeof(who),
		             "pid %d (%s) ended after its run's first process: ", (int)getpid(),
		             gfp_comm());
	gfp_quote(q, sizeof(q), first, strlen(first));
	gfp_dest_say(
	    "gfpshim: info: ",
	    "GFP_REPORT: %s%u %sprocess%s of this run wrote %s beside '%s', as '%s.PID': %s", who,
	    found, late ? "" : "other ", found == 1 ? "" : "es",
	    found == 1 ? "its report" : "their reports", q, q, list);
}

/* Whether the parent of this process is of its run: the GFP_INHERITED it
 * started with names the run (a process of the run started it). */
static bool parent_of_run(const struct gfp_dest *d)
{
	static char buf[4096]; /* once, at exit */
	char name[32], tag[128];
	gfp_snprintf(name, sizeof(name), "/proc/%d/environ", (int)getppid());
	int tl = gfp_snprintf(tag, sizeof(tag), "%s:%016llx@%d:%llu", d->var,
	                      (unsigned long long)d->hash, (int)d->run_pid, d->run_start);
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	/* A read may end inside the tag: its start is kept for the next. */
	size_t keep = 0;
	bool found = false;
	ssize_t n;
	while (!found && (n = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
		size_t len = keep + (size_t)n;
		found = memmem(buf, len, tag, (size_t)tl) != NULL;
		keep = len < (size_t)tl ? len : (size_t)tl - 1;
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return found;
}

void gfp_dest_report_join(struct gfp_dest *d, pid_t run_pid, unsigned long long run_start)
{
	unsigned long long start = self_start();
	d->run_pid = run_pid ? run_pid : getpid();
	d->run_start = run_pid ? run_start : start;
	d->run_first = d->run_pid == getpid() && d->run_start == start;
}

/* ------------------------------------------------------------------------
 * Start-up and exit
 * ---------------------------------------------------------------------- */

/* A device (/dev/null, /dev/full) is opened now and written, a path at exit. */
int gfp_dest_report_check(struct gfp_dest *d, const char *tmpl, const char *q, char *err,
                          size_t errlen)
{
	char path[sizeof(d->path) + GFP_DEST_SLACK];
	expand_pid(tmpl, path, sizeof(path));
	size_t len = strlen(path);
	struct stat st;
	bool exists = lstat(path, &st) == 0;
	if ((len && path[len - 1] == '/') || (exists && S_ISDIR(st.st_mode))) {
		gfp_snprintf(err, errlen,
		             "%s: '%s' is a directory (give a file path, fd:N or stderr)", d->var,
		             q);
		return -1;
	}
	if (exists) {
		if (S_ISCHR(st.st_mode)) {
			int fd =
			    gfp_fd_lift(open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
			if (fd < 0 || fstat(fd, &st) != 0) {
				gfp_snprintf(err, errlen, "%s: cannot open '%s': %s", d->var, q,
				             gfp_strerror(errno));
				return -1;
			}
			gfp_dest_keep(d, fd, &st, path);
			return 0;
		}
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			gfp_snprintf(err, errlen,
			             "%s: '%s' is not a regular file (%s) (give a file path, or "
			             "fd:N for a pipe)",
			             d->var, q, gfp_fd_type(st.st_mode));
			return -1;
		}
	}
	char tmp[sizeof(path) + GFP_DEST_SLACK];
	int fd = create_temp(path, tmp, sizeof(tmp));
	if (fd < 0) {
		int e = errno;
		char dir[sizeof(path)], qd[GFP_DEST_QUOTED];
		dir_of(path, dir, sizeof(dir));
		gfp_snprintf(err, errlen,
		             "%s: cannot create a file in '%s': %s (give a path in an existing, "
		             "writable directory, fd:N or stderr)",
		             d->var, gfp_quote(qd, sizeof(qd), dir, strlen(dir)), gfp_strerror(e));
		return -1;
	}
	close(fd);
	unlink(tmp);
	memcpy(d->path, tmpl, strlen(tmpl) + 1);
	return 0;
}

void gfp_dest_report_publish(struct gfp_dest *d, const char *p, size_t n)
{
	if (__atomic_load_n(&d->fd, __ATOMIC_RELAXED) >= 0) {
		gfp_dest_write(d, p, n);
		return;
	}
	if (!d->path[0])
		return;
	int saved = errno;
	char path[sizeof(d->path) + GFP_DEST_SLACK], tmp[sizeof(path) + GFP_DEST_SLACK];
	int err = report_name(d, d->path, path, sizeof(path)) ? 0 : ENAMETOOLONG;
	int fd = err ? -1 : create_temp(path, tmp, sizeof(tmp));
	if (fd < 0) {
		err = err ? err : errno;
	} else {
		if (!gfp_dest_write_fd(fd, p, n))
			err = errno;
		if (close(fd) != 0 && !err)
			err = errno;
		if (!err && rename(tmp, path) != 0)
			err = errno;
		if (err)
			unlink(tmp);
	}
	char q[GFP_DEST_QUOTED];
	if (err)
		gfp_dest_say("gfpshim: warning: ", "GFP_REPORT: cannot write to '%s': %s",
		             gfp_quote(q, sizeof(q), path, strlen(path)), gfp_strerror(err));
	char first[sizeof(path)];
	if (strstr(d->path, "%p") || !expand_pid(d->path, first, sizeof(first))) {
		/* one report per process, as asked */
	} else if (run_first(d)) {
		name_the_others(d, first, false);
	} else if (!err && of_run(d, AT_FDCWD, first) && !parent_of_run(d)) {
		/* the first process's report is there: its line is said */
		name_the_others(d, first, true);
	}
	errno = saved;
}
