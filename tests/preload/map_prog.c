/*
 * map_prog.c - a program that maps its memory itself, as pymalloc and
 * custom pools do: what the shim must charge to the budget and credit back.
 *
 *   map_prog pool THREADS ROUNDS [FORKS]
 *        THREADS threads, each with its own slots, map, partly unmap (head,
 *        tail, a hole), grow, shrink and move (mremap), map over their own
 *        mappings (MAP_FIXED), commit reservations (mprotect) and unmap,
 *        ROUNDS times; with FORKS, the main thread forks that many times
 *        meanwhile and each child prints what it inherited ("child") and
 *        _exits through exit(). Then the threads are joined and it prints
 *        "held": the bytes it holds mapped and writable, and keeps them.
 *   map_prog fill CHUNK MAX      maps and writes CHUNK bytes at a time until
 *                                mmap fails or MAX are held
 *   map_prog commit CHUNK MAX    reserves MAX bytes PROT_NONE, then makes
 *                                CHUNK of them writable at a time (mprotect)
 *   map_prog sbrk CHUNK MAX      grows the break by CHUNK until sbrk fails
 *                                or MAX; then gives half back and grows again
 *   map_prog brk CHUNK MAX       the same with brk
 *   map_prog wait CHUNK MAX      fills as fill does; at the failure a thread
 *                                maps one more CHUNK ("waiter": 0 or its
 *                                errno, -1 when it did not run), and once it
 *                                sleeps the main thread unmaps one chunk
 *   map_prog hold BYTES          maps and writes BYTES, prints "holding",
 *                                waits for a line or EOF on stdin
 *   map_prog hostile             garbage and overlapping calls, each checked
 *                                against the kernel's answer; prints "held"
 *
 * Every line is one JSON object on stdout (test_out.h: nothing allocates).
 * fill, commit, sbrk and brk print {"total":..,"errno":..}. Status 0; 1 when
 * a call answers otherwise than the kernel must; 2 for bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_out.h"

extern void *__sbrk(intptr_t incr); /* glibc's, exported, undeclared */

#define RW   (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

static size_t pg;

static void die(const char *what)
{
	test_out(2, "map_prog: %s: errno %d\n", what, errno);
	exit(1);
}

static void *map(void *at, size_t len, int prot, int flags)
{
	return mmap(at, len, prot, flags, -1, 0);
}

static void touch(char *p, size_t len)
{
	for (size_t o = 0; o < len; o += pg)
		p[o] = 1;
}

/* ------------------------------------------------------------------------
 * pool
 * ---------------------------------------------------------------------- */

#define SLOTS 16

struct slot {
	char *p;
	size_t len; /* 0: empty */
};

/* Taken shared around each operation and its bookkeeping, exclusive by a
 * fork: a child's slots then say exactly what it inherited. */
static pthread_rwlock_t quiet;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

static void step(struct slot *sl, unsigned *seed)
{
	struct slot *s = &sl[next_rand(seed) % SLOTS];
	size_t pages = s->len / pg;
	if (!s->len) {
		size_t n = 1 + next_rand(seed) % 32;
		bool reserve = next_rand(seed) % 4 == 0;
		char *p = map(NULL, n * pg, reserve ? PROT_NONE : RW, ANON);
		if (p == MAP_FAILED)
			die("mmap");
		if (reserve && mprotect(p, n * pg, RW) != 0) /* committed after all */
			die("mprotect");
		p[0] = 1;
		*s = (struct slot){p, n * pg};
		return;
	}
	switch (next_rand(seed) % 7) {
	case 0: /* all of it */
		if (munmap(s->p, s->len) != 0)
			die("munmap");
		s->len = 0;
		break;
	case 1: /* its tail */
		if (pages > 1) {
			size_t k = 1 + next_rand(seed) % (pages - 1);
			if (munmap(s->p + (pages - k) * pg, k * pg) != 0)
				die("munmap tail");
			s->len -= k * pg;
		}
		break;
	case 2: /* its head */
		if (pages > 1) {
			size_t k = 1 + next_rand(seed) % (pages - 1);
			if (munmap(s->p, k * pg) != 0)
				die("munmap head");
			s->p += k * pg;
			s->len -= k * pg;
		}
		break;
	case 3: /* a hole: the part after it is another slot's, or goes */
		if (pages > 2) {
			size_t at = 1 + next_rand(seed) % (pages - 2);
			if (munmap(s->p + at * pg, pg) != 0)
				die("munmap hole");
			struct slot rest = {s->p + (at + 1) * pg, (pages - at - 1) * pg};
			s->len = at * pg;
			struct slot *o = &sl[next_rand(seed) % SLOTS];
			if (o->len == 0)
				*o = rest;
			else if (munmap(rest.p, rest.len) != 0)
				die("munmap rest");
		}
		break;
	case 4: { /* grow or shrink, maybe moving */
		size_t n = 1 + next_rand(seed) % 48;
		char *r = mremap(s->p, s->len, n * pg, MREMAP_MAYMOVE);
		if (r == MAP_FAILED)
			die("mremap");
		*s = (struct slot){r, n * pg};
		r[s->len - 1] = 1;
		break;
	}
	case 5: { /* moved onto a place of its own choosing */
		char *to = map(NULL, s->len, PROT_NONE, ANON | MAP_NORESERVE);
		if (to == MAP_FAILED)
			die("mmap target");
		char *r = mremap(s->p, s->len, s->len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		if (r != to)
			die("mremap fixed");
		s->p = r;
		break;
	}
	case 6: /* mapped afresh where it is */
		if (map(s->p, s->len, RW, ANON | MAP_FIXED) != s->p)
			die("mmap fixed");
		break;
	}
}

struct worker {
	pthread_t t;
	unsigned seed, rounds;
	struct slot sl[SLOTS];
};

static void *work(void *arg)
{
	struct worker *w = arg;
	for (unsigned i = 0; i < w->rounds; i++) {
		pthread_rwlock_rdlock(&quiet);
		step(w->sl, &w->seed);
		pthread_rwlock_unlock(&quiet);
	}
	return NULL;
}

static size_t held_by(struct worker *w, unsigned n, size_t *mappings)
{
	size_t held = 0;
	*mappings = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < SLOTS; k++)
			if (w[i].sl[k].len) {
				held += w[i].sl[k].len;
				++*mappings;
			}
	return held;
}

static int pool(unsigned n, unsigned rounds, unsigned forks)
{
	static struct worker w[64];
	if (n == 0 || n > 64)
		return 2;
	/* A fork waits for the operations under way, not for the workers'
	 * end (glibc's default lets readers starve a writer). */
	pthread_rwlockattr_t ra;
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&quiet, &ra);
	for (unsigned i = 0; i < n; i++) {
		w[i].seed = 7919 * (i + 1);
		w[i].rounds = rounds;
		if (pthread_create(&w[i].t, NULL, work, &w[i]) != 0)
			die("pthread_create");
	}
	for (unsigned f = 0; f < forks; f++) {
		usleep(2000);
		pthread_rwlock_wrlock(&quiet);
		pid_t pid = fork();
		if (pid == 0) {
			size_t m, held = held_by(w, n, &m);
			test_out(1,
			         "{\"event\":\"child\",\"pid\":%d,\"held\":%zu,\"mappings\":%zu}\n",
			         (int)getpid(), held, m);
			exit(0);
		}
		pthread_rwlock_unlock(&quiet);
		if (pid < 0)
			die("fork");
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("the child");
	}
	for (unsigned i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	size_t m, held = held_by(w, n, &m);
	test_out(1, "{\"event\":\"held\",\"held\":%zu,\"mappings\":%zu}\n", held, m);
	return 0;
}

/* ------------------------------------------------------------------------
 * Filling
 * ---------------------------------------------------------------------- */

static int fill(size_t chunk, size_t max)
{
	size_t total = 0;
	int err = 0;
	while (total < max) {
		char *p = map(NULL, chunk, RW, ANON);
		if (p == MAP_FAILED) {
			err = errno;
			break;
		}
		touch(p, chunk);
		total += chunk;
	}
	test_out(1, "{\"total\":%zu,\"errno\":%d}\n", total, err);
	return 0;
}

static int commit(size_t chunk, size_t max)
{
	char *r = map(NULL, max, PROT_NONE, ANON);
	if (r == MAP_FAILED)
		die("mmap reservation");
	size_t total = 0;
	int err = 0;
	while (total + chunk <= max) {
		if (mprotect(r + total, chunk, RW) != 0) {
			err = errno;
			break;
		}
		touch(r + total, chunk);
		total += chunk;
	}
	test_out(1, "{\"total\":%zu,\"errno\":%d}\n", total, err);
	return 0;
}

/* Grows the break by chunk until it fails or max: how far it got. */
static size_t grow(bool by_brk, size_t chunk, size_t max, int *err)
{
	size_t total = 0;
	*err = 0;
	while (total < max) {
		char *cur = sbrk(0);
		int r = by_brk ? brk(cur + chunk) : (sbrk((intptr_t)chunk) == (void *)-1 ? -1 : 0);
		if (r != 0) {
			*err = errno;
			if (sbrk(0) != cur)
				die("a failed break moved");
			break;
		}
		touch(cur, chunk);
		total += chunk;
	}
	return total;
}

static int breaks(bool by_brk, size_t chunk, size_t max)
{
	int err, err2;
	size_t total = grow(by_brk, chunk, max, &err);
	size_t back = total / 2 / chunk * chunk;
	char *cur = sbrk(0);
	if (by_brk ? brk(cur - back) != 0 : sbrk(-(intptr_t)back) == (void *)-1)
		die("giving the break back");
	size_t again = grow(by_brk, chunk, max - (total - back), &err2);
	test_out(1, "{\"total\":%zu,\"errno\":%d,\"back\":%zu,\"again\":%zu,\"errno_again\":%d}\n",
	         total, err, back, again, err2);
	return 0;
}

struct waiter {
	size_t len;
	int tid, got;
};

/* The waiting mapping: its own call site, for the report. */
static __attribute__((noinline)) void *small_map(void *arg)
{
	struct waiter *w = arg;
	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELEASE);
	char *p = map(NULL, w->len, RW, ANON);
	w->got = p == MAP_FAILED ? errno : 0;
	if (p != MAP_FAILED)
		touch(p, w->len);
	return NULL;
}

/* Until thread tid sleeps (or is gone), 10 s at most. */
static void until_asleep(int tid)
{
	char path[64], st[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	for (int i = 0; i < 10000; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		ssize_t n = read(fd, st, sizeof(st) - 1);
		close(fd);
		st[n > 0 ? n : 0] = '\0';
		const char *s = strrchr(st, ')');
		if (s && s[1] == ' ' && s[2] == 'S')
			return;
		usleep(1000);
	}
}

/* The pool of `wait` (a rule may make its calls NORETRY, by this name). */
static __attribute__((noinline)) size_t fill_until_refused(size_t chunk, size_t max, char **last,
                                                           int *err)
{
	size_t total = 0;
	*err = 0;
	while (total < max) {
		char *p = map(NULL, chunk, RW, ANON);
		if (p == MAP_FAILED) {
			*err = errno;
			break;
		}
		touch(p, chunk);
		*last = p;
		total += chunk;
	}
	return total;
}

/* Fills with chunks until mmap fails, then a thread maps one more chunk
 * and, once that thread sleeps (waiting for memory), one is unmapped. */
static int wait_for_unmap(size_t chunk, size_t max)
{
	char *last = NULL;
	int err;
	struct waiter w = {chunk, 0, -1};
	size_t total = fill_until_refused(chunk, max, &last, &err);
	if (err && last) {
		pthread_t t;
		if (pthread_create(&t, NULL, small_map, &w) != 0)
			die("pthread_create");
		while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		until_asleep(w.tid);
		if (munmap(last, chunk) != 0)
			die("munmap");
		pthread_join(t, NULL);
	}
	test_out(1, "{\"total\":%zu,\"errno\":%d,\"waiter\":%d}\n", total, err, w.got);
	return 0;
}

static int hold(size_t bytes)
{
	size_t total = 0;
	while (total < bytes) {
		size_t n = bytes - total < (1u << 20) ? bytes - total : (1u << 20);
		char *p = map(NULL, n, RW, ANON);
		if (p == MAP_FAILED) {
			test_out(1, "{\"event\":\"refused\",\"total\":%zu,\"errno\":%d}\n", total,
			         errno);
			return 0;
		}
		touch(p, n);
		total += n;
	}
	test_out(1, "{\"event\":\"holding\",\"total\":%zu}\n", total);
	char line[16];
	(void)!read(0, line, sizeof(line));
	return 0;
}

/* ------------------------------------------------------------------------
 * hostile
 * ---------------------------------------------------------------------- */

static size_t held; /* what the program holds mapped and writable */

static void expect(bool ok, const char *what)
{
	if (!ok)
		die(what);
}

static int hostile(void)
{
	/* An arena of address space of our own: nothing charged there. */
	size_t n = 64;
	char *A = map(NULL, n * pg, PROT_NONE, ANON | MAP_NORESERVE);
	expect(A != MAP_FAILED, "arena");
	/* Pieces at known places in it, charged: [0,8) [16,24) [32,40). */
	for (size_t at = 0; at < 48; at += 16) {
		expect(map(A + at * pg, 8 * pg, RW, ANON | MAP_FIXED) == A + at * pg, "piece");
		held += 8 * pg;
	}
	/* Garbage: misaligned, empty, never mapped, unmapped twice. */
	errno = 0;
	expect(munmap(A + 1, pg) == -1 && errno == EINVAL, "munmap misaligned");
	expect(munmap(A, 0) == -1 && errno == EINVAL, "munmap empty");
	char *gone = map(NULL, 4 * pg, RW, ANON);
	expect(gone != MAP_FAILED, "mmap");
	expect(munmap(gone, 4 * pg) == 0, "munmap");
	expect(munmap(gone, 4 * pg) == 0, "munmap again");
	expect(munmap(gone + pg, pg) == 0, "munmap inside what went");
	/* Across a piece and the uncharged arena around it. */
	expect(munmap(A + 6 * pg, 12 * pg) == 0, "munmap across"); /* [6,8) and [16,18) */
	held -= 4 * pg;
	/* A hole, twice. */
	expect(munmap(A + 20 * pg, pg) == 0, "hole");
	expect(munmap(A + 20 * pg, pg) == 0, "hole again");
	held -= pg;
	/* MAP_FIXED over charged pages: the same again (no double charge), then
	 * a mapping that is not charged (credit), then a shared one. */
	expect(map(A + 32 * pg, 8 * pg, RW, ANON | MAP_FIXED) == A + 32 * pg, "fixed over");
	expect(map(A + 32 * pg, 2 * pg, PROT_NONE, ANON | MAP_FIXED | MAP_NORESERVE) == A + 32 * pg,
	       "fixed noreserve over");
	held -= 2 * pg;
	expect(map(A + 34 * pg, 2 * pg, RW, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED) == A + 34 * pg,
	       "fixed shared over");
	held -= 2 * pg;
	/* A MAP_FIXED_NOREPLACE onto a charged page fails and changes nothing. */
	void *nr = map(A + 36 * pg, pg, RW, ANON | MAP_FIXED_NOREPLACE);
	expect(nr == MAP_FAILED && errno == EEXIST, "noreplace");
	/* mremap with MREMAP_FIXED|MREMAP_MAYMOVE onto a charged piece: the
	 * piece there goes, the moved one is charged in its place. */
	char *r = mremap(A + 36 * pg, 4 * pg, 4 * pg, MREMAP_MAYMOVE | MREMAP_FIXED, A + 2 * pg);
	expect(r == A + 2 * pg, "mremap fixed onto a piece");
	held -= 4 * pg; /* [2,6) was charged, and is again: 4 pages went from [36,40) */
	/* Growing in place where the arena is mapped: the kernel refuses. */
	errno = 0;
	expect(mremap(A, 2 * pg, 4 * pg, 0) == MAP_FAILED && errno == ENOMEM, "mremap in place");
	/* Shrinking in place, and a move that grows. */
	expect(mremap(A + 2 * pg, 4 * pg, 3 * pg, 0) == A + 2 * pg, "mremap shrink");
	held -= pg;
	char *big = mremap(A + 18 * pg, 2 * pg, 16 * pg, MREMAP_MAYMOVE);
	expect(big != MAP_FAILED, "mremap grow");
	held += 14 * pg;
	/* A reservation (tracked, not charged) committed half, then
	 * write access taken and given again: charged once. */
	expect(map(A + 48 * pg, 8 * pg, PROT_NONE, ANON | MAP_FIXED) == A + 48 * pg, "reserve");
	expect(mprotect(A + 50 * pg, 4 * pg, RW) == 0, "commit");
	held += 4 * pg;
	expect(mprotect(A + 48 * pg, 8 * pg, PROT_READ) == 0, "read only");
	expect(mprotect(A + 50 * pg, 4 * pg, RW) == 0, "commit again");
	expect(mprotect(A + 51 * pg, pg, RW) == 0, "commit inside");
	errno = 0;
	expect(mprotect(A + 1, pg, RW) == -1 && errno == EINVAL, "mprotect misaligned");
	/* A file mapping, private and writable: not charged, nor credited. */
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	expect(fd >= 0, "open");
	char *f = mmap(NULL, pg, RW, MAP_PRIVATE, fd, 0);
	expect(f != MAP_FAILED, "file mmap");
	close(fd);
	expect(munmap(f, pg) == 0, "file munmap");
	/* A break that goes nowhere, then a page by glibc's other name. */
	char *b0 = sbrk(0);
	expect(brk(b0) == 0 && sbrk(0) == b0, "brk where it is");
	expect(__sbrk((intptr_t)pg) == b0 && sbrk(0) == b0 + pg, "__sbrk");
	held += pg;
	test_out(1, "{\"event\":\"held\",\"held\":%zu}\n", held);
	return 0;
}

int main(int argc, char **argv)
{
	pg = (size_t)sysconf(_SC_PAGESIZE);
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	size_t a = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;
	size_t b = argc > 3 ? strtoull(argv[3], NULL, 0) : 0;
	if (!strcmp(m, "pool") && argc >= 4)
		return pool((unsigned)a, (unsigned)b, argc > 4 ? (unsigned)atoi(argv[4]) : 0);
	if (!strcmp(m, "fill") && argc == 4)
		return fill(a, b);
	if (!strcmp(m, "commit") && argc == 4)
		return commit(a, b);
	if (!strcmp(m, "sbrk") && argc == 4)
		return breaks(false, a, b);
	if (!strcmp(m, "brk") && argc == 4)
		return breaks(true, a, b);
	if (!strcmp(m, "wait") && argc == 4)
		return wait_for_unmap(a, b);
	if (!strcmp(m, "hold") && argc == 3)
		return hold(a);
	if (!strcmp(m, "hostile"))
		return hostile();
	return 2;
}
