/*
 * dest.c - every destination the shim writes to: GFP_LOG, GFP_RECORD and
 * GFP_REPORT, named the same way (stderr, fd:N or a path), checked before
 * main, written without allocating.
 *
 * A path is opened once, at start-up, with O_NOFOLLOW and mode 0600, and the
 * descriptor is kept: a symlink planted at the path, or swapped in while the
 * program runs, is never followed, even by root. A report is written whole
 * at exit into a new file (O_EXCL) in the same directory and renamed over
 * the path, so a symlink there is replaced, not written through.
 *
 * A program that closes "all other" descriptors (daemons do) may close ours
 * and reuse its number: every write first checks that the descriptor still
 * holds the file it opened, and opens the path again only if it still names
 * that same file. fd:N above the standard three is checked the same way,
 * and dropped (said once) when the program put another file there. Writes
 * hold SIGPIPE blocked: a reader that goes away costs the destination
 * (reported once), never the program.
 *
 * Descriptors the shim keeps sit at the top of the numbers a program uses
 * (gfp_fd_lift), close-on-exec: a program that lists its descriptors, or
 * passes some to a child by number, finds the ones it opened where it would
 * without the shim.
 *
 * A child inherits the variables, not the descriptors (close-on-exec). The
 * process that opens a destination first names it in GFP_INHERITED (a hash
 * of the value; for fd:N the file's device and inode): a descendant started
 * with the same value that cannot open it (it changed its uid, or closed
 * fd:N, as CPython's subprocess does) runs on without it and says so once,
 * at its first write, rather than exiting 125 before main. A value nobody
 * opened yet is checked as strictly as ever.
 *
 * Many processes of one run (a shell script and what it starts, forked
 * children) may inherit one GFP_REPORT path without %p. The run's first
 * process, the one that did not inherit it (or the program it exec'd: the
 * same pid and start time), writes the path; every other one writes
 * PATH.PID beside it, as the kernel appends .PID to a core_pattern without
 * %p (core_uses_pid, format_corename). GFP_INHERITED names the first
 * process, and every report carries it ("run"). At its exit the first
 * process says in one line which reports of its run lie beside its own;
 * so does one that ends after it (the first's report is there) if no
 * process of the run started it: one line for what outlived the first
 * process, not one per process. A relative path is made absolute by the
 * first process and handed on so: a child that changed directory writes
 * beside the others.
 *
 * Must never: follow a symlink at the path, create a file others can read,
 * allocate (it runs inside malloc and in signal handlers; GFP_INHERITED is
 * exported from a constructor), change errno.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h> /* rename(2) only: no stdio */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "log.h"
#include "dest.h"
#include "thread.h"

/* What the messages quote of a path. */
#define QUOTED_PATH 512

/* The temporary name beside the report's, and its pid when %p expands. */
#define REPORT_SLACK 64

/* A destination's own descriptor sits above the standard three: a program
 * started with one of them closed must not find our file there. */
#define DEST_FD_MIN 3

/*
 * The shim's descriptors take the lowest free numbers from FD_TOP - FD_SLOTS
 * up (below RLIMIT_NOFILE when that is lower). A program is handed the
 * lowest free number, so it meets these only with some thousand open, and
 * shells' own (10 and up, bash's 255) lie below. 1024 is the kernel's
 * default soft limit and select()'s FD_SETSIZE; higher numbers would grow
 * the kernel's table of descriptors in every process, and every fork
 * copies it.
 */
#define FD_TOP   1024
#define FD_SLOTS 32

/* The variable the first process names its destinations in. */
#define INHERIT_VAR "GFP_INHERITED"

/* The other reports of a run the first process's line names by pid. */
#define RUN_NAMED 8

/* ------------------------------------------------------------------------
 * Names
 * ---------------------------------------------------------------------- */

/* 1 with *fd when value names a descriptor (stderr, fd:N, and the paths that
 * alias one: those are symlinks that O_NOFOLLOW would refuse), 0 for a
 * path, -1 for a malformed number. */
static int parse_fd(const char *v, int *fd)
{
	if (strcmp(v, "stderr") == 0 || strcmp(v, "/dev/stderr") == 0)
		return *fd = STDERR_FILENO, 1;
	if (strcmp(v, "/dev/stdout") == 0)
		return *fd = STDOUT_FILENO, 1;
	static const char *const prefix[] = {"fd:", "/dev/fd/", "/proc/self/fd/"};
	const char *num = NULL;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]) && !num; i++)
		if (strncmp(v, prefix[i], strlen(prefix[i])) == 0)
			num = v + strlen(prefix[i]);
	if (!num)
		return 0;
	int n = 0;
	const char *p = num;
	for (; *p >= '0' && *p <= '9' && n < 1000000; p++)
		n = n * 10 + (*p - '0');
	if (*p || p == num)
		return -1;
	*fd = n;
	return 1;
}

const char *gfp_file_type(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISLNK(m)  ? "a symbolic link"
	                     : "not a file";
}

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
	char dir[sizeof(((struct gfp_dest *)0)->path) + REPORT_SLACK];
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

void gfp_dest_run_json(const struct gfp_dest *d, struct gfp_buf *b)
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
	gfp_dest_run_json(d, &t);
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
	static char dir[sizeof(d->path) + REPORT_SLACK], buf[32768];
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
	char list[RUN_NAMED * 12 + 32], q[QUOTED_PATH], who[96] = "";
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
	gfp_log(GFP_LOG_INFO,
	        "GFP_REPORT: %s%u %sprocess%s of this run wrote %s beside '%s', as '%s.PID': %s",
	        who, found, late ? "" : "other ", found == 1 ? "" : "es",
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

static int fd_floor(void)
{
	struct rlimit rl;
	rlim_t top = FD_TOP;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
		top = rl.rlim_cur;
	return top >= DEST_FD_MIN + FD_SLOTS ? (int)(top - FD_SLOTS) : DEST_FD_MIN;
}

int gfp_fd_lift(int fd)
{
	int floor = fd_floor();
	if (fd < 0 || fd >= floor)
		return fd;
	int saved = errno;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
	if (high < 0 && fd < DEST_FD_MIN)
		high = fcntl(fd, F_DUPFD_CLOEXEC, DEST_FD_MIN);
	if (high < 0 && fd >= DEST_FD_MIN) {
		/* every number up there taken: it works where it is */
		errno = saved;
		return fd;
	}
	int err = high < 0 ? errno : saved;
	close(fd);
	errno = err;
	return high;
}

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

static void quote_where(const struct gfp_dest *d, char *out, size_t cap)
{
	char q[QUOTED_PATH];
	if (d->own)
		gfp_snprintf(out, cap, "'%s'", gfp_quote(q, sizeof(q), d->path, strlen(d->path)));
	else
		gfp_snprintf(out, cap, "fd:%d", __atomic_load_n(&d->fd, __ATOMIC_RELAXED));
}

/* The first failure of a destination is said once; then it is dropped. */
static void dest_failed(struct gfp_dest *d, int err)
{
	if (__atomic_exchange_n(&d->dead, true, __ATOMIC_ACQ_REL))
		return;
	char where[QUOTED_PATH + 8];
	quote_where(d, where, sizeof(where));
	const char *what = d->log ? "messages" : strcmp(d->var, "GFP_RECORD") == 0 ? "records" : "";
	char lost[160];
	const char *why = gfp_strerror(err);
	if (d->lost && d->own) {
		gfp_snprintf(lost, sizeof(lost),
		             "%s in this process (uid %u), though its parent "
		             "opened it",
		             gfp_strerror(err), (unsigned)geteuid());
		why = lost;
	} else if (d->lost) {
		why = "this process did not inherit the descriptor its parent wrote to";
	} else if (err == ESTALE)
		why = d->own
		          ? "the program closed its descriptor and the path now names another "
		            "file"
		          : "the program closed the descriptor or put another file at its number";
	if (!d->log) {
		gfp_log(GFP_LOG_WARNING, "%s: cannot write to %s: %s%s%s", d->var, where, why,
		        *what ? "; no more " : "", what);
		return;
	}
	/* The log cannot carry news of its own failure: stderr does, unless
	 * it was the log. */
	if (__atomic_load_n(&d->fd, __ATOMIC_RELAXED) == STDERR_FILENO && !d->own)
		return;
	char line[QUOTED_PATH + 256];
	int n = gfp_snprintf(line, sizeof(line),
	                     "gfpshim: warning: %s: cannot write to %s: %s; no more %s\n", d->var,
	                     where, why, what);
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	(void)gfp_write_all(STDERR_FILENO, line, (size_t)n);
}

/* The descriptor to write to: for one of ours, the one it opened, or the
 * same file opened again (see the head of the file); -1 with errno. */
static int dest_fd(struct gfp_dest *d)
{
	int fd = __atomic_load_n(&d->fd, __ATOMIC_ACQUIRE);
	struct stat st;
	if (!d->own) {
		if (d->pinned &&
		    (fstat(fd, &st) != 0 || st.st_dev != d->dev || st.st_ino != d->ino)) {
			errno = ESTALE;
			return -1;
		}
		return fd;
	}
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == d->dev && st.st_ino == d->ino)
		return fd;
	int again =
	    open(d->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (again < 0) {
		if (errno == ELOOP) /* a symlink now: another file, not followed */
			errno = ESTALE;
		return -1;
	}
	if (fstat(again, &st) != 0 || st.st_dev != d->dev || st.st_ino != d->ino) {
		close(again);
		errno = ESTALE;
		return -1;
	}
	int high = gfp_fd_lift(again);
	if (high < 0)
		return -1;
	fcntl(high, F_SETFL, fcntl(high, F_GETFL) & ~O_NONBLOCK);
	/* The old number is the program's now: never close it. */
	if (__atomic_compare_exchange_n(&d->fd, &fd, high, false, __ATOMIC_ACQ_REL,
	                                __ATOMIC_ACQUIRE))
		return high;
	close(high); /* another thread got there first */
	return fd;
}

/* write_all with SIGPIPE blocked: a pipe without a reader gives EPIPE and
 * the signal it raised is taken back, unless one was pending already. And
 * with cancellation disabled: write(2) is a cancellation point, malloc is
 * none, and a record must not be cut off half-written. */
static bool write_nosigpipe(int fd, const char *p, size_t n)
{
	int cancel_state;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	sigset_t pipe, old;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	bool pending_before = false;
	if (sigismember(&old, SIGPIPE)) {
		sigset_t pending;
		pending_before = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	}
	bool ok = gfp_write_all(fd, p, n);
	int err = errno;
	if (!ok && err == EPIPE && !pending_before) {
		static const struct timespec zero = {0, 0};
		sigtimedwait(&pipe, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_setcancelstate(cancel_state, NULL);
	errno = err;
	return ok;
}

bool gfp_dest_on(const struct gfp_dest *d)
{
	return __atomic_load_n(&d->fd, __ATOMIC_RELAXED) >= 0 || d->path[0];
}

bool gfp_dest_private(const struct gfp_dest *d)
{
	return (d->own || __atomic_load_n(&d->fd, __ATOMIC_RELAXED) > STDERR_FILENO) && !d->lost &&
	       !__atomic_load_n(&d->dead, __ATOMIC_RELAXED);
}

bool gfp_dest_write(struct gfp_dest *d, const char *p, size_t n)
{
	if (__atomic_load_n(&d->dead, __ATOMIC_RELAXED))
		return false;
	int saved = errno;
	if (d->lost) {
		dest_failed(d, d->lost);
		errno = saved;
		return false;
	}
	int fd = dest_fd(d);
	bool ok = fd >= 0 && write_nosigpipe(fd, p, n);
	/* A full non-blocking pipe loses this line only. */
	if (!ok && errno != EAGAIN)
		dest_failed(d, errno);
	errno = saved;
	return ok;
}

void gfp_dest_publish(struct gfp_dest *d, const char *p, size_t n)
{
	if (__atomic_load_n(&d->fd, __ATOMIC_RELAXED) >= 0) {
		gfp_dest_write(d, p, n);
		return;
	}
	if (!d->path[0])
		return;
	int saved = errno;
	char path[sizeof(d->path) + REPORT_SLACK], tmp[sizeof(path) + REPORT_SLACK];
	int err = report_name(d, d->path, path, sizeof(path)) ? 0 : ENAMETOOLONG;
	int fd = err ? -1 : create_temp(path, tmp, sizeof(tmp));
	if (fd < 0) {
		err = err ? err : errno;
	} else {
		if (!write_nosigpipe(fd, p, n))
			err = errno;
		if (close(fd) != 0 && !err)
			err = errno;
		if (!err && rename(tmp, path) != 0)
			err = errno;
		if (err)
			unlink(tmp);
	}
	char q[QUOTED_PATH];
	if (err)
		gfp_log(GFP_LOG_WARNING, "GFP_REPORT: cannot write to '%s': %s",
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

/* ------------------------------------------------------------------------
 * Start-up
 * ---------------------------------------------------------------------- */

/* d writes to fd, which path opened: st tells it from what the program may
 * put under its number later. */
static void keep(struct gfp_dest *d, int fd, const struct stat *st, const char *path)
{
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->own = true;
	memcpy(d->path, path, strlen(path) + 1);
	__atomic_store_n(&d->fd, fd, __ATOMIC_RELEASE);
}

/* A path for messages or records: opened now, for good. */
static int open_append(struct gfp_dest *d, const char *path, const char *q, char *err,
                       size_t errlen)
{
	/* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
	 * stopping the process before main. */
	int fd = open(
	    path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
	    0600);
	struct stat st;
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			gfp_snprintf(err, errlen,
			             "%s: '%s' is a symbolic link, not followed (give the file it "
			             "points to, fd:N or stderr)",
			             d->var, q);
		else if (e == ENXIO)
			gfp_snprintf(err, errlen,
			             "%s: '%s' is a FIFO with no reader (start the reader first, "
			             "or give fd:N)",
			             d->var, q);
		else
			gfp_snprintf(err, errlen, "%s: cannot open '%s': %s (give a writable path)",
			             d->var, q, gfp_strerror(e));
		errno = e;
		return -1;
	}
	if ((fd = gfp_fd_lift(fd)) < 0 || fstat(fd, &st) != 0) {
		gfp_snprintf(err, errlen, "%s: cannot open '%s': %s", d->var, q,
		             gfp_strerror(errno));
		return -1;
	}
	/* O_NOFOLLOW sees symlinks only: a hard link to a file someone else
	 * owns, or a file planted for root, is as bad. */
	if (S_ISREG(st.st_mode) && (st.st_nlink > 1 || (geteuid() == 0 && st.st_uid != 0))) {
		if (st.st_nlink > 1)
			gfp_snprintf(err, errlen,
			             "%s: '%s' has %lu hard links: appending would write to every "
			             "one of them (give a file of its own, fd:N or stderr)",
			             d->var, q, (unsigned long)st.st_nlink);
		else
			gfp_snprintf(err, errlen,
			             "%s: '%s' belongs to uid %u, and root does not append to "
			             "another user's file (remove it, or give fd:N or stderr)",
			             d->var, q, (unsigned)st.st_uid);
		close(fd);
		errno = st.st_nlink > 1 ? EMLINK : EPERM;
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	keep(d, fd, &st, path);
	return 0;
}

/* A report's path: checked now (a new file can be made beside it), written
 * at exit. A device (/dev/null, /dev/full) is opened now and written. */
static int check_report(struct gfp_dest *d, const char *tmpl, const char *q, char *err,
                        size_t errlen)
{
	char path[sizeof(d->path) + REPORT_SLACK];
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
			keep(d, fd, &st, path);
			return 0;
		}
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			gfp_snprintf(err, errlen,
			             "%s: '%s' is not a regular file (%s) (give a file path, or "
			             "fd:N for a pipe)",
			             d->var, q, gfp_file_type(st.st_mode));
			return -1;
		}
	}
	char tmp[sizeof(path) + REPORT_SLACK];
	int fd = create_temp(path, tmp, sizeof(tmp));
	if (fd < 0) {
		int e = errno;
		char dir[sizeof(path)], qd[QUOTED_PATH];
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

/* ------------------------------------------------------------------------
 * Children (GFP_INHERITED)
 * ---------------------------------------------------------------------- */

/* What a parent said of one destination. */
struct inherited {
	bool id; /* fd:N: the file it held */
	dev_t dev;
	ino_t ino;
	pid_t run_pid; /* a report's path: the run's first process */
	unsigned long long run_start;
};

/* FNV-1a of VAR=value: a child tells a value its parent opened from one
 * it set itself. */
static uint64_t value_hash(const char *var, const char *value)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const char *s = var; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	h = (h ^ '=') * 0x100000001b3ULL;
	for (const char *s = value; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static unsigned long long parse_ull(const char **p)
{
	unsigned long long v = 0;
	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = v * 10 + (unsigned long long)(**p - '0');
	return v;
}

/* Whether GFP_INHERITED names var with this value's hash: entries
 * VAR:HASH[:DEV:INO][@PID:START], comma-separated. */
static bool inherited_find(const char *var, uint64_t hash, struct inherited *in)
{
	const char *s = secure_getenv(INHERIT_VAR);
	char want[64];
	int n = gfp_snprintf(want, sizeof(want), "%s:%016llx", var, (unsigned long long)hash);
	for (; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
		if (strncmp(s, want, (size_t)n) != 0 ||
		    (s[n] && s[n] != ',' && s[n] != ':' && s[n] != '@'))
			continue;
		const char *p = s + n;
		in->id = *p == ':';
		if (in->id) {
			p++;
			in->dev = (dev_t)parse_ull(&p);
			p += *p == ':';
			in->ino = (ino_t)parse_ull(&p);
		}
		if (*p == '@') {
			p++;
			in->run_pid = (pid_t)parse_ull(&p);
			p += *p == ':';
			in->run_start = parse_ull(&p);
		}
		return true;
	}
	return false;
}

/* The destinations this process names to its children. */
static struct gfp_dest *named[4];
static unsigned nnamed;

static void name_for_children(struct gfp_dest *d)
{
	for (unsigned i = 0; i < nnamed; i++)
		if (named[i] == d)
			return;
	if (nnamed < sizeof(named) / sizeof(named[0]))
		named[nnamed++] = d;
}

/* An inherited destination this process cannot open: the first write says
 * so (dest_failed), the children still inherit it. */
static int lose(struct gfp_dest *d, int fd, const char *path, int err, const struct inherited *in)
{
	d->lost = err ? err : EIO;
	d->own = path != NULL;
	if (path)
		memcpy(d->path, path, strlen(path) + 1);
	d->pinned = in->id;
	d->dev = in->dev;
	d->ino = in->ino;
	__atomic_store_n(&d->fd, path ? -1 : fd, __ATOMIC_RELEASE);
	name_for_children(d);
	return 0;
}

/* After the configuration was read (gfpshim_ctor runs at 101), outside
 * malloc: setenv allocates. */
__attribute__((constructor(102))) static void export_inherited(void)
{
	if (!nnamed)
		return;
	char v[512];
	struct gfp_buf b = {v, sizeof(v), 0};
	for (unsigned i = 0; i < nnamed; i++) {
		gfp_buf_printf(&b, "%s%s:%016llx", i ? "," : "", named[i]->var,
		               (unsigned long long)named[i]->hash);
		if (named[i]->pinned)
			gfp_buf_printf(&b, ":%llu:%llu", (unsigned long long)named[i]->dev,
			               (unsigned long long)named[i]->ino);
		if (named[i]->run_pid)
			gfp_buf_printf(&b, "@%d:%llu", (int)named[i]->run_pid, named[i]->run_start);
	}
	gfp_tls.guard++; /* the shim's own allocations: never failed, never counted */
	for (unsigned i = 0; i < nnamed; i++)
		if (named[i]->export_path)
			setenv(named[i]->var, named[i]->path, 1);
	const char *now = getenv(INHERIT_VAR);
	if (!now || strcmp(now, v) != 0)
		setenv(INHERIT_VAR, v, 1);
	gfp_tls.guard--;
}

/* A report's path joins the run a parent named, or starts one. */
static void join_run(struct gfp_dest *d, const struct inherited *in)
{
	unsigned long long start = self_start();
	d->run_pid = in && in->run_pid ? in->run_pid : getpid();
	d->run_start = in && in->run_pid ? in->run_start : start;
	d->run_first = d->run_pid == getpid() && d->run_start == start;
}

/* value after the working directory, into out; false when there is none
 * (removed, or out of this root) or it does not fit. */
static bool absolute(const char *value, char *out, size_t cap)
{
	/* the system call: glibc's getcwd may fall back to opendir */
	long len = syscall(SYS_getcwd, out, cap);
	if (len <= 1 || out[0] != '/')
		return false;
	size_t used = strlen(out);
	int n =
	    gfp_snprintf(out + used, cap - used, "%s%s", out[used - 1] == '/' ? "" : "/", value);
	return n > 0 && (size_t)n < cap - used;
}

int gfp_dest_set(struct gfp_dest *d, const char *var, enum gfp_dest_kind kind, const char *value,
                 bool secure, char *err, size_t errlen)
{
	d->var = var;
	d->hash = value_hash(var, value);
	struct inherited in = {0};
	bool inherited = inherited_find(var, d->hash, &in);
	char q[QUOTED_PATH];
	gfp_quote(q, sizeof(q), value, strlen(value));
	int fd;
	int named_fd = parse_fd(value, &fd);
	if (named_fd < 0) {
		gfp_snprintf(err, errlen,
		             "%s: bad value '%s' (expected stderr, fd:N or a file path)", var, q);
		return -1;
	}
	if (named_fd) {
		struct stat st;
		bool is_open = fcntl(fd, F_GETFD) >= 0;
		if (inherited && fd > STDERR_FILENO &&
		    (!is_open || (in.id && (fstat(fd, &st) != 0 || st.st_dev != in.dev ||
		                            st.st_ino != in.ino))))
			return lose(d, fd, NULL, is_open ? ESTALE : EBADF, &in);
		if (!is_open) {
			gfp_snprintf(err, errlen,
			             "%s: descriptor %d is not open (open it in the shell, e.g. "
			             "'3>>%s', or give a file path)",
			             var, fd,
			             kind == GFP_DEST_REPORT ? "report.json"
			             : d->log                ? "log"
			                                     : "records");
			return -1;
		}
		d->own = false;
		d->path[0] = '\0';
		/* A descriptor of the program's own beyond the standard three: it
		 * may close it and put another file there (see dest_fd). */
		if (fd > STDERR_FILENO && fstat(fd, &st) == 0) {
			d->pinned = true;
			d->dev = st.st_dev;
			d->ino = st.st_ino;
			name_for_children(d);
		}
		__atomic_store_n(&d->fd, fd, __ATOMIC_RELEASE);
		return 0;
	}
	if (secure) /* a setuid program must not write to a path the caller chose */
		return 0;
	char abs[sizeof(d->path) - REPORT_SLACK];
	if (kind == GFP_DEST_REPORT && value[0] != '/' && absolute(value, abs, sizeof(abs))) {
		value = abs;
		d->hash = value_hash(var, value);
		d->export_path = true;
	}
	if (strlen(value) >= sizeof(d->path) - REPORT_SLACK) {
		gfp_snprintf(err, errlen, "%s: path is longer than %zu bytes", var,
		             sizeof(d->path) - REPORT_SLACK - 1);
		return -1;
	}
	int r = kind == GFP_DEST_REPORT ? check_report(d, value, q, err, errlen)
	                                : open_append(d, value, q, err, errlen);
	if (kind == GFP_DEST_REPORT && (r == 0 || inherited) &&
	    __atomic_load_n(&d->fd, __ATOMIC_RELAXED) < 0)
		join_run(d, inherited ? &in : NULL);
	if (r != 0 && inherited) {
		if (kind != GFP_DEST_APPEND) {
			/* tried at exit, where a failure is said */
			memcpy(d->path, value, strlen(value) + 1);
			name_for_children(d);
			return 0;
		}
		return lose(d, -1, value, errno, &in);
	}
	if (r == 0)
		name_for_children(d);
	return r;
}
