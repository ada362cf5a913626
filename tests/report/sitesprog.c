/*
 * sitesprog - what stats=sites must count exactly, every way the profiled
 * routes and profile.c count a block: threads allocate from nine call
 * sites (one noinline function each, so that the report names them) with
 * sizes of every kind the shadow map tells apart (8 bytes and less, the
 * small table, the page-sized classes up to 112 KiB, larger blocks counted
 * apart), calloc, realloc chains, and aligned blocks from three entry
 * points in turn at alignments 16..8192; a live set that spans many 2 MiB
 * chunks; blocks handed to another thread, which frees them. At the end
 * each thread keeps some of its blocks, and the program prints, per site,
 * what it holds:
 * "SITE calls bytes live_calls live_bytes" (bytes as the shim counts a
 * request: n, or 1 for n = 0; live bytes by malloc_usable_size).
 *
 *   sitesprog [THREADS [ROUNDS]]
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define SLOTS    256
#define HANDOFF  64

enum { TINY, SMALL, MID, LARGE, ZEROED, PM, AA, MA, RE, NSITES };
static const char *const site_name[NSITES] = {
    "site_tiny",           "site_small",         "site_mid",      "site_large",  "site_calloc",
    "site_posix_memalign", "site_aligned_alloc", "site_memalign", "site_realloc"};

/* One allocation call each; the empty asm keeps them apart. */
#define SITE(name, call)                                                                           \
	NOINLINE void *name(size_t n)                                                              \
	{                                                                                          \
		void *p = call;                                                                    \
		__asm__ volatile("" ::: "memory");                                                 \
		return p;                                                                          \
	}
SITE(site_tiny, malloc(n))
SITE(site_small, malloc(n))
SITE(site_mid, malloc(n))
SITE(site_large, malloc(n))
SITE(site_calloc, calloc(1, n))

NOINLINE void *site_posix_memalign(size_t align, size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, align, n) != 0)
		p = NULL;
	__asm__ volatile("" ::: "memory");
	return p;
}

NOINLINE void *site_aligned_alloc(size_t align, size_t n)
{
	void *p = aligned_alloc(align, (n + align - 1) & ~(align - 1));
	__asm__ volatile("" ::: "memory");
	return p;
}

NOINLINE void *site_realloc(void *old, size_t n)
{
	void *p = realloc(old, n);
	__asm__ volatile("" ::: "memory");
	return p;
}

NOINLINE void *site_memalign(size_t align, size_t n)
{
	void *p = memalign(align, n);
	__asm__ volatile("" ::: "memory");
	return p;
}

struct block {
	void *p;
	int site;
};

struct counts {
	long long calls, bytes;
};

/* What each thread counted, and the blocks handed between threads. */
static struct counts made[NSITES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block handoff[HANDOFF];
static int nhandoff;
static struct block kept[1024 * 64];
static int nkept;
static int rounds = 4000;

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static struct block make(uint64_t *r, struct counts *c)
{
	uint64_t x = next(r);
	int site = (int)(x % NSITES);
	size_t align = (size_t)16 << (x >> 8) % 10, n;
	void *p;
	switch (site) {
	case TINY:
		n = (x >> 16) % 9; /* 0..8 */
		p = site_tiny(n);
		break;
	case SMALL:
		n = 9 + (x >> 16) % 14328; /* 9..14336 */
		p = site_small(n);
		break;
	case MID:
		n = 14337 + (x >> 16) % (114688 - 14336); /* 14337..114688 */
		p = site_mid(n);
		break;
	case LARGE:
		n = 114689 + (x >> 16) % (3 << 20);
		p = site_large(n);
		break;
	case ZEROED:
		n = (x >> 16) % 70000;
		p = site_calloc(n);
		break;
	case PM:
		n = (x >> 16) % 5000;
		p = site_posix_memalign(align, n);
		break;
	case AA:
		n = (x >> 16) % 5000;
		p = site_aligned_alloc(align, n);
		n = (n + align - 1) & ~(align - 1);
		break;
	case MA:
		n = (x >> 16) % 5000;
		p = site_memalign(align, n);
		break;
	default: {
		/* a block of its own, grown or shrunk: two calls of the site */
		size_t first = 1 + (x >> 16) % 20000;
		n = 1 + (x >> 32) % 20000;
		p = site_realloc(NULL, first);
		if (p) {
			memset(p, 0x5a, first < 64 ? first : 64);
			p = site_realloc(p, n);
		}
		c[site].calls++;
		c[site].bytes += (long long)first;
		break;
	}
	}
	if (!p) {
		fprintf(stderr, "sitesprog: %s(%zu) failed\n", site_name[site], n);
		exit(1);
	}
	memset(p, 0x5a, n < 64 ? n : 64);
	c[site].calls++;
	c[site].bytes += n ? (long long)n : 1;
	return (struct block){p, site};
}

static void *worker(void *arg)
{
	uint64_t r = 0x9e3779b97f4a7c15ULL * ((uintptr_t)arg + 1);
	struct block slot[SLOTS];
	struct counts c[NSITES];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < SLOTS; i++)
		slot[i] = make(&r, c);
	for (int i = 0; i < rounds; i++) {
		int k = (int)(next(&r) % SLOTS);
		if (next(&r) % 4 == 0) {
			/* to another thread, which frees it; take one of theirs */
			pthread_mutex_lock(&lock);
			struct block mine = slot[k];
			if (nhandoff == HANDOFF) {
				free(handoff[0].p);
				handoff[0] = handoff[--nhandoff];
			}
			handoff[nhandoff++] = mine;
			int j = (int)(next(&r) % (unsigned)nhandoff);
			struct block theirs = handoff[j];
			handoff[j] = handoff[--nhandoff];
			pthread_mutex_unlock(&lock);
			free(theirs.p);
		} else {
			free(slot[k].p);
		}
		slot[k] = make(&r, c);
	}
	/* keep every other block */
	pthread_mutex_lock(&lock);
	for (int i = 0; i < SLOTS; i++) {
		if (i % 2)
			kept[nkept++] = slot[i];
		else
			free(slot[i].p);
	}
	for (int s = 0; s < NSITES; s++) {
		made[s].calls += c[s].calls;
		made[s].bytes += c[s].bytes;
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (threads < 1 || threads > 64 || rounds < 1) {
		fprintf(stderr, "usage: sitesprog [THREADS 1..64 [ROUNDS]]\n");
		return 2;
	}
	pthread_t t[64];
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0)
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	/* what is still handed off stays live too */
	for (int i = 0; i < nhandoff; i++)
		kept[nkept++] = handoff[i];
	long long live_calls[NSITES] = {0}, live_bytes[NSITES] = {0};
	for (int i = 0; i < nkept; i++) {
		live_calls[kept[i].site]++;
		live_bytes[kept[i].site] += (long long)malloc_usable_size(kept[i].p);
	}
	for (int s = 0; s < NSITES; s++)
		printf("%s %lld %lld %lld %lld\n", site_name[s], made[s].calls, made[s].bytes,
		       live_calls[s], live_bytes[s]);
	return 0;
}
