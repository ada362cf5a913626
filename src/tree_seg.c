/*
 * tree_seg.c - the segment of a tree (limit.scope=tree): the file every
 * member maps, created by the tree's first process and checked by every
 * other before it is trusted.
 *
 * GFP_TREE names it; a process started without the variable makes a tree
 * of its own in /dev/shm (mode 0600), sweeping away this user's trees that
 * nobody is in any more. A GFP_TREE that names a symlink, a FIFO, another
 * user's file, a file other users may read, or anything but a tree of this
 * build stops the process with exit 125, as a bad policy does, with one
 * line that says what is wrong and what to do.
 *
 * Must never write through a symlink or trust the file's contents before
 * its header is checked.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "fd.h"
#include "tree_structs.h"
#include "sys.h"

#define READY_WAIT 1000 /* ms a joiner waits for a new segment's creator */
#define STALE_S    10   /* an abandoned tree's file is this old at least */

/* The message for a GFP_TREE that is refused. */
static int refuse(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *err, size_t n, const char *fmt, ...)
{
	int saved = errno; /* create_named words its own message from it */
	char why[768];
	va_list ap;
	va_start(ap, fmt);
	gfp_vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	char q[PATH_MAX + 64];
	gfp_snprintf(err, n, "GFP_TREE: '%s' %s (unset GFP_TREE to start a new tree)",
	             gfp_quote(q, sizeof(q), tree_path, strlen(tree_path)), why);
	errno = saved;
	return -1;
}

static void mode_text(mode_t mode, char out[5])
{
	unsigned m = (unsigned)mode;
	out[0] = (char)('0' + (m >> 9 & 7));
	out[1] = (char)('0' + (m >> 6 & 7));
	out[2] = (char)('0' + (m >> 3 & 7));
	out[3] = (char)('0' + (m & 7));
	out[4] = '\0';
}

/* What is wrong with the file at tree_path for a tree, as open found it. */
static int refuse_file(const struct stat *st, int err_open, char *err, size_t n)
{
	char mode[5];
	mode_text(st->st_mode, mode);
	if (S_ISLNK(st->st_mode) || err_open == ELOOP)
		return refuse(err, n, "is a symbolic link, not a tree's budget");
	if (!S_ISREG(st->st_mode))
		return refuse(err, n, "is not a regular file (%s), not a tree's budget",
		              gfp_fd_type(st->st_mode));
	if (st->st_uid != geteuid())
		return refuse(err, n,
		              "belongs to uid %u, not to uid %u: only one user's processes share "
		              "a budget",
		              (unsigned)st->st_uid, (unsigned)geteuid());
	if (st->st_mode & 077)
		return refuse(err, n, "has mode %s: other users could read or change the budget",
		              mode);
	return refuse(err, n, "cannot be opened: %s", gfp_strerror(err_open));
}

static uint64_t now_ms(void)
{
	return gfp_now_ns() / 1000000;
}

static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Maps an existing segment and checks it is a tree of this user and this
 * build; its creator may still be filling it in. */
static int open_existing(int fd, char *err, size_t n)
{
	struct stat st;
	uint64_t until = now_ms() + READY_WAIT;
	for (;;) {
		if (fstat(fd, &st) != 0)
			return refuse(err, n, "cannot be read: %s", gfp_strerror(errno));
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
			return refuse_file(&st, 0, err, n);
		if ((size_t)st.st_size == TREE_SEG_SIZE || now_ms() > until)
			break;
		pause_ms(1); /* its creator between open and ftruncate */
	}
	if ((size_t)st.st_size != TREE_SEG_SIZE)
		return refuse(err, n,
		              "is not a tree's budget of this gfpshim (%lld bytes, one is %zu)",
		              (long long)st.st_size, TREE_SEG_SIZE);
	void *p = sys_mmap(NULL, TREE_SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return refuse(err, n, "cannot be mapped: %s", gfp_strerror(errno));
	struct tree_seg *s = p;
	while (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != TREE_MAGIC && now_ms() <= until)
		pause_ms(1);
	if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != TREE_MAGIC ||
	    s->version != TREE_VERSION || s->size != TREE_SEG_SIZE || s->uid != geteuid()) {
		sys_munmap(p, TREE_SEG_SIZE);
		return refuse(err, n,
		              "is not a tree's budget of this gfpshim (no header of version %d)",
		              TREE_VERSION);
	}
	int64_t limit = __atomic_load_n(&s->limit, __ATOMIC_RELAXED);
	if (limit < 64 * 1024) {
		sys_munmap(p, TREE_SEG_SIZE);
		return refuse(err, n, "is not a tree's budget: its limit is %lld bytes",
		              (long long)limit);
	}
	tree_seg = s;
	return 0;
}

/* A new segment at tree_path; 1 when the file exists already. */
static int create(char *err, size_t n)
{
	int fd = open(tree_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		return 1;
	if (fd < 0)
		return refuse(err, n, "cannot be created: %s", gfp_strerror(errno));
	if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)TREE_SEG_SIZE) != 0) {
		int e = errno;
		close(fd);
		unlink(tree_path);
		errno = e;
		return refuse(err, n, "cannot be created: %s", gfp_strerror(e));
	}
	void *p = sys_mmap(NULL, TREE_SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;
		close(fd);
		unlink(tree_path);
		errno = e;
		return refuse(err, n, "cannot be mapped: %s", gfp_strerror(e));
	}
	struct tree_seg *s = p;
	s->version = TREE_VERSION;
	s->size = (uint32_t)TREE_SEG_SIZE;
	s->uid = (uint32_t)geteuid();
	s->limit = (int64_t)gfp_policy.limit;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&s->lock, &a);
	pthread_mutexattr_destroy(&a);
	__atomic_store_n(&s->magic, TREE_MAGIC, __ATOMIC_RELEASE);
	tree_seg = s;
	tree_member_keep_fd(fd); /* for the slot's lock */
	return 0;
}

/* Opens the segment GFP_TREE names; a name no file has (the tree's last
 * member is gone and took it along) starts the tree again under it. */
static int open_named(char *err, size_t n)
{
	for (int tries = 0; tries < 3; tries++) {
		int fd = open(tree_path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0) {
			int r = open_existing(fd, err, n);
			if (r == 0)
				tree_member_keep_fd(fd); /* for the slot's lock */
			else
				close(fd);
			return r;
		}
		int e = errno;
		struct stat st;
		if (e != ENOENT)
			return lstat(tree_path, &st) == 0
			           ? refuse_file(&st, e, err, n)
			           : refuse(err, n, "cannot be opened: %s", gfp_strerror(e));
		int r = create(err, n);
		if (r <= 0)
			return r;
		/* created by another process meanwhile: open it */
	}
	return refuse(err, n, "appears and disappears: cannot be opened");
}

/* Whether the tree at fd has no member left (all of them gone without a
 * word: killed, or ended by a raw exit_group). A tree being made has no
 * member for a moment: only one untouched for STALE_S is looked at. */
static bool abandoned(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t)st.st_size != TREE_SEG_SIZE || time(NULL) - st.st_mtime < STALE_S)
		return false;
	struct tree_seg *s = sys_mmap(NULL, TREE_SEG_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED)
		return false;
	bool empty = __atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) == TREE_MAGIC;
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; empty && i < high && i < TREE_MEMBERS; i++) {
		int32_t pid = __atomic_load_n(&s->m[i].pid, __ATOMIC_ACQUIRE);
		empty = pid == 0 || (pid > 0 && tree_member_gone(s, fd, i, pid, true));
	}
	sys_munmap(s, TREE_SEG_SIZE);
	return empty;
}

/* This user's trees in /dev/shm that nobody is in any more: their last
 * member died without a word, so nobody removed them. Looked for when a
 * new tree is made, with getdents64 into a buffer of the stack. */
static void sweep_abandoned(void)
{
	int dfd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	char prefix[48], buf[4096];
	int plen = gfp_snprintf(prefix, sizeof(prefix), "gfpshim-tree.%u.", (unsigned)geteuid());
	long got;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			const struct dirent64 *d = (const void *)(buf + off);
			off += d->d_reclen;
			if (strncmp(d->d_name, prefix, (size_t)plen) != 0)
				continue;
			int fd =
			    openat(dfd, d->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (abandoned(fd))
				unlinkat(dfd, d->d_name, 0);
			close(fd);
		}
	}
	close(dfd);
}

/* A name of our own: /dev/shm/gfpshim-tree.UID.PID.RANDOM. */
static int create_named(char *err, size_t n, bool *fresh)
{
	sweep_abandoned();
	for (int tries = 0; tries < 8; tries++) {
		uint32_t r = 0;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint32_t)gfp_now_ns();
		gfp_snprintf(tree_path, PATH_MAX, "/dev/shm/gfpshim-tree.%u.%d.%08x",
		             (unsigned)geteuid(), (int)getpid(), r);
		int c = create(err, n);
		if (c < 0) {
			/* Nobody named this path: say where one can be named. */
			gfp_snprintf(
			    err, n,
			    "limit.scope=tree: cannot create the tree's budget in /dev/shm: %s "
			    "(set GFP_TREE to a file path in a directory of yours)",
			    gfp_strerror(errno));
			return c;
		}
		if (c == 0) {
			*fresh = true;
			return 0;
		}
	}
	return refuse(err, n, "cannot be created: every name tried exists");
}

int tree_seg_open(char *err, size_t n, bool *fresh)
{
	const char *name = getenv("GFP_TREE");
	if (!name || !*name)
		return create_named(err, n, fresh);
	gfp_snprintf(tree_path, PATH_MAX, "%s", name);
	if (name[0] != '/' || strlen(name) >= PATH_MAX)
		return refuse(err, n, "is not an absolute path of a tree's budget");
	return open_named(err, n);
}
