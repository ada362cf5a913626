/*
 * gfp-allocbench - deterministic allocator micro-benchmarks for tools/bench.
 *
 *   gfp-allocbench WORKLOAD [ITERS]
 *
 * Prints one line "WORKLOAD seconds=<float> ops=<n>" and exits 0. The time
 * covers the workload only (not process start-up). Every workload uses its
 * own xorshift PRNG with a fixed seed, so a run does the same operations
 * whatever allocator is preloaded. The line is written without stdio, so
 * that the program allocates nothing but what its workload does: `once`
 * (one malloc and its free) is the start-up of a program that allocates
 * once.
 *
 * The allocation functions are called through volatile function pointers and
 * every block is written to and folded into a checksum kept in a volatile
 * sink, so the compiler can neither elide malloc/free pairs nor merge them.
 *
 * The workload functions are named wl_* and never inlined: tools/bench runs
 * them under `valgrind --tool=callgrind --toggle-collect=wl_*` to count the
 * instructions of the workload alone.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gfpshim.h"
#include "allocbench.h"

#define NOINLINE __attribute__((noinline))

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef void *(*realloc_fn)(void *, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*aligned_alloc_fn)(size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);

static malloc_fn volatile p_malloc = malloc;
static free_fn volatile p_free = free;
static realloc_fn volatile p_realloc = realloc;
static posix_memalign_fn volatile p_posix_memalign = posix_memalign;
static aligned_alloc_fn volatile p_aligned_alloc = aligned_alloc;
static memalign_fn volatile p_memalign = memalign;

/* Where checksums end up; the compiler must assume someone reads it. */
static volatile uint64_t sink;

struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t x = r->s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	r->s = x;
	return x;
}

uint64_t injected;

/* malloc/free pairs of 16..128 bytes; not a wl_ name, so that callgrind's
 * --toggle-collect=wl_* does not switch off inside wl_inside. */
static NOINLINE uint64_t small_pairs(uint64_t iters)
{
	struct rng r = {0x9e3779b97f4a7c15ULL};
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		size_t size = 16 + (size_t)(rng_next(&r) % 113);
		unsigned char *p;
		while (!(p = p_malloc(size)))
			injected++;
		p[size - 1] = (unsigned char)i;
		sum += p[size - 1] + ((uintptr_t)p & 0xff0);
		p_free(p);
	}
	sink = sum;
	return iters * 2;
}

/* small: malloc/free pairs of 16..128 bytes. */
static NOINLINE uint64_t wl_small(uint64_t iters)
{
	return small_pairs(iters);
}

/* log-uniform-ish 8 B .. 64 KiB: a power of two 2^3..2^15 plus up to as much again */
static size_t mixed_size(struct rng *r)
{
	uint64_t x = rng_next(r);
	unsigned int shift = 3 + (unsigned int)(x % 13);
	size_t base = (size_t)1 << shift;

	return base + (size_t)((x >> 8) % (base + 1));
}

#define MIXED_SLOTS 4096

/* mixed: a live set of MIXED_SLOTS blocks; each op frees a random one and allocates anew. */
static NOINLINE uint64_t wl_mixed(uint64_t iters)
{
	struct rng r = {0x2545f4914f6cdd1dULL};
	static unsigned char *slot[MIXED_SLOTS];
	static size_t slot_size[MIXED_SLOTS];
	uint64_t sum = 0;
	uint64_t ops = 0;

	for (size_t i = 0; i < MIXED_SLOTS; i++) {
		size_t size = mixed_size(&r);

		while (!(slot[i] = p_malloc(size)))
			injected++;
		slot[i][0] = (unsigned char)i;
		slot[i][size - 1] = (unsigned char)size;
		slot_size[i] = size;
		ops++;
	}
	for (uint64_t i = 0; i < iters; i++) {
		size_t k = (size_t)(rng_next(&r) % MIXED_SLOTS);
		size_t size = mixed_size(&r);

		sum += slot[k][0] + slot[k][slot_size[k] - 1];
		p_free(slot[k]);
		while (!(slot[k] = p_malloc(size)))
			injected++;
		slot[k][0] = (unsigned char)i;
		slot[k][size - 1] = (unsigned char)k;
		slot_size[k] = size;
		ops += 2;
	}
	for (size_t i = 0; i < MIXED_SLOTS; i++) {
		sum += slot[i][0];
		p_free(slot[i]);
		ops++;
	}
	sink = sum;
	return ops;
}

/*
 * xthread: a producer thread mallocs blocks and hands them through a
 * single-producer single-consumer ring to a consumer thread that frees them.
 * The producer publishes in batches and the consumer drains all it sees, so
 * the cache lines of the indices do not bounce once per block. Both sides spin
 * briefly and then yield, so it also works on one CPU.
 */
#define RING_SIZE  1024 /* a power of two */
#define RING_BATCH 32   /* the producer publishes its head every RING_BATCH blocks */

struct ring {
	_Alignas(64) atomic_size_t head; /* written by the producer */
	_Alignas(64) atomic_size_t tail; /* written by the consumer */
	_Alignas(64) unsigned char *slot[RING_SIZE];
	uint64_t iters;
	uint64_t consumer_sum;
};

static inline void backoff(unsigned int *spins)
{
	if (++*spins >= 64) {
		*spins = 0;
		sched_yield();
	}
}

/*
 * The waits are functions of their own whose names also match wl_*: under
 * callgrind --toggle-collect=wl_* entering one turns collection off again, so
 * the instruction count leaves out the spinning, which depends on scheduling.
 */
static NOINLINE size_t wl_wait_head(struct ring *ring, size_t tail)
{
	unsigned int spins = 0;
	size_t head;

	while ((head = atomic_load_explicit(&ring->head, memory_order_acquire)) == tail)
		backoff(&spins);
	return head;
}

static NOINLINE void wl_wait_space(struct ring *ring, size_t head)
{
	unsigned int spins = 0;

	/* publish what is pending so that the consumer can drain it */
	atomic_store_explicit(&ring->head, head, memory_order_release);
	while (head - atomic_load_explicit(&ring->tail, memory_order_acquire) == RING_SIZE)
		backoff(&spins);
}

static NOINLINE void *wl_xthread_consumer(void *arg)
{
	struct ring *ring = arg;
	size_t tail = 0;
	uint64_t sum = 0;

	while (tail < ring->iters) {
		size_t head = wl_wait_head(ring, tail);

		while (tail != head) {
			unsigned char *p = ring->slot[tail & (RING_SIZE - 1)];

			sum += p[0];
			p_free(p);
			tail++;
		}
		atomic_store_explicit(&ring->tail, tail, memory_order_release);
	}
	ring->consumer_sum = sum;
	return NULL;
}

static NOINLINE uint64_t wl_xthread(uint64_t iters)
{
	static struct ring ring;
	struct rng r = {0x5851f42d4c957f2dULL};
	pthread_t consumer;
	size_t head = 0;
	uint64_t sum = 0;
	int err;

	ring.iters = iters;
	err = pthread_create(&consumer, NULL, wl_xthread_consumer, &ring);
	if (err) {
		fprintf(stderr, "gfp-allocbench: pthread_create: %s\n", strerror(err));
		exit(1);
	}
	for (uint64_t i = 0; i < iters; i++) {
		size_t size = 16 + (size_t)(rng_next(&r) % 497);
		unsigned char *p;
		while (!(p = p_malloc(size)))
			injected++;
		p[0] = (unsigned char)i;
		p[size - 1] = (unsigned char)size;
		sum += p[size - 1];
		if (head - atomic_load_explicit(&ring.tail, memory_order_acquire) == RING_SIZE)
			wl_wait_space(&ring, head);
		ring.slot[head & (RING_SIZE - 1)] = p;
		if (++head % RING_BATCH == 0)
			atomic_store_explicit(&ring.head, head, memory_order_release);
	}
	atomic_store_explicit(&ring.head, head, memory_order_release);
	err = pthread_join(consumer, NULL);
	if (err) {
		fprintf(stderr, "gfp-allocbench: pthread_join: %s\n", strerror(err));
		exit(1);
	}
	sink = sum + ring.consumer_sum;
	return iters * 2;
}

/* realloc: grow a buffer from 1 byte to 64 KiB by ~1/8 a step, then free it. */
#define REALLOC_MAX ((size_t)64 << 10)

static NOINLINE uint64_t wl_realloc(uint64_t iters)
{
	uint64_t sum = 0;
	uint64_t ops = 0;

	for (uint64_t i = 0; i < iters; i++) {
		unsigned char *p = NULL;
		size_t size = 1;

		for (;;) {
			unsigned char *q;

			while (!(q = p_realloc(p, size)))
				injected++;
			p = q;
			p[size - 1] = (unsigned char)size;
			sum += p[0];
			ops++;
			if (size == REALLOC_MAX)
				break;
			size += size / 8 + 1;
			if (size > REALLOC_MAX)
				size = REALLOC_MAX;
		}
		p_free(p);
		ops++;
	}
	sink = sum;
	return ops;
}

/* aligned: posix_memalign, aligned_alloc and memalign in turn, alignments 16..4096. */
static NOINLINE uint64_t wl_aligned(uint64_t iters)
{
	struct rng r = {0xd1b54a32d192ed03ULL};
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint64_t x = rng_next(&r);
		size_t align = (size_t)16 << (x % 9);
		size_t size = 1 + (size_t)((x >> 8) % 1024);
		unsigned char *p = NULL;

	retry:
		switch (i % 3) {
		case 0: {
			void *v = NULL;

			if (p_posix_memalign(&v, align, size) == 0)
				p = v;
			break;
		}
		case 1:
			/* C11 wants size to be a multiple of the alignment */
			size = (size + align - 1) & ~(align - 1);
			p = p_aligned_alloc(align, size);
			break;
		default:
			p = p_memalign(align, size);
			break;
		}
		if (!p) {
			injected++; /* an injected failure (gfp-bench armed mode): again */
			goto retry;
		}
		if ((uintptr_t)p & (align - 1)) {
			fprintf(stderr, "gfp-allocbench: %p is not aligned to %zu\n", (void *)p,
			        align);
			exit(1);
		}
		p[size - 1] = (unsigned char)i;
		sum += p[size - 1];
		p_free(p);
	}
	sink = sum;
	return iters * 2;
}

/*
 * larson: after Larson and Krishnan's server benchmark, as mimalloc-bench
 * runs it: LARSON_THREADS threads at once, each replacing random blocks of
 * its own set of LARSON_SLOTS (10..500 bytes) one at a time; every
 * LARSON_ROUND replacements a thread hands its set to a new thread and
 * ends, so that most blocks are freed by another thread than the one that
 * allocated them, and threads come and go.
 */
#define LARSON_THREADS 2
#define LARSON_SLOTS   1000
#define LARSON_ROUND   20000

struct larson {
	unsigned char *slot[LARSON_SLOTS];
	struct rng r;
	uint64_t left; /* replacements still to make, in rounds of LARSON_ROUND */
	uint64_t sum, ops;
};

static size_t larson_size(struct rng *r)
{
	return 10 + (size_t)(rng_next(r) % 491);
}

static NOINLINE void *wl_larson_round(void *arg)
{
	struct larson *l = arg;
	uint64_t n = l->left < LARSON_ROUND ? l->left : LARSON_ROUND;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t x = rng_next(&l->r);
		size_t k = (size_t)(x % LARSON_SLOTS);
		size_t size = larson_size(&l->r);
		unsigned char *p;

		l->sum += l->slot[k][0];
		p_free(l->slot[k]);
		while (!(p = p_malloc(size)))
			injected++;
		p[0] = (unsigned char)i;
		p[size - 1] = (unsigned char)size;
		l->slot[k] = p;
	}
	l->left -= n;
	l->ops += 2 * n;
	return NULL;
}

static void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "gfp-allocbench: pthread_create: %s\n", strerror(err));
		exit(1);
	}
}

static void join_thread(pthread_t t)
{
	int err = pthread_join(t, NULL);

	if (err) {
		fprintf(stderr, "gfp-allocbench: pthread_join: %s\n", strerror(err));
		exit(1);
	}
}

static NOINLINE uint64_t wl_larson(uint64_t iters)
{
	static struct larson set[LARSON_THREADS];
	pthread_t t[LARSON_THREADS];
	uint64_t sum = 0, ops = 0;
	bool busy = true;

	for (unsigned j = 0; j < LARSON_THREADS; j++) {
		struct larson *l = &set[j];

		l->r.s = 0x9e3779b97f4a7c15ULL * (j + 1);
		l->left = iters / LARSON_THREADS;
		for (size_t k = 0; k < LARSON_SLOTS; k++) {
			size_t size = larson_size(&l->r);

			while (!(l->slot[k] = p_malloc(size)))
				injected++;
			l->slot[k][0] = (unsigned char)k;
			l->ops++;
		}
	}
	while (busy) {
		busy = false;
		for (unsigned j = 0; j < LARSON_THREADS; j++)
			start_thread(&t[j], wl_larson_round, &set[j]);
		for (unsigned j = 0; j < LARSON_THREADS; j++) {
			join_thread(t[j]);
			busy |= set[j].left > 0;
		}
	}
	for (unsigned j = 0; j < LARSON_THREADS; j++) {
		for (size_t k = 0; k < LARSON_SLOTS; k++) {
			sum += set[j].slot[k][0];
			p_free(set[j].slot[k]);
		}
		sum += set[j].sum;
		ops += set[j].ops + LARSON_SLOTS;
	}
	sink = sum;
	return ops;
}

/* large: a live set of LARGE_SLOTS blocks of 1..4 MiB; each op frees a random
 * one and allocates anew, and touches its first and last page. */
#define LARGE_SLOTS 8
#define LARGE_MIN   ((size_t)1 << 20)

static NOINLINE uint64_t wl_large(uint64_t iters)
{
	struct rng r = {0xbf58476d1ce4e5b9ULL};
	unsigned char *slot[LARGE_SLOTS] = {NULL};
	size_t slot_size[LARGE_SLOTS] = {0};
	uint64_t sum = 0, ops = 0;

	for (uint64_t i = 0; i < iters; i++) {
		uint64_t x = rng_next(&r);
		size_t k = (size_t)(x % LARGE_SLOTS);
		size_t size = LARGE_MIN + (size_t)((x >> 8) % (3 * LARGE_MIN + 1));

		if (slot[k]) {
			sum += slot[k][0] + slot[k][slot_size[k] - 1];
			p_free(slot[k]);
			ops++;
		}
		while (!(slot[k] = p_malloc(size)))
			injected++;
		slot[k][0] = (unsigned char)i;
		slot[k][size - 1] = (unsigned char)k;
		slot_size[k] = size;
		ops++;
	}
	for (size_t k = 0; k < LARGE_SLOTS; k++) {
		if (slot[k]) {
			sum += slot[k][0];
			p_free(slot[k]);
			ops++;
		}
	}
	sink = sum;
	return ops;
}

/* once: ITERS malloc/free pairs of 100 bytes; with ITERS 1, the whole
 * process is the start-up of a program that allocates once. */
static NOINLINE uint64_t wl_once(uint64_t iters)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		unsigned char *p;

		while (!(p = p_malloc(100)))
			injected++;
		p[99] = (unsigned char)i;
		sum += p[99];
		p_free(p);
	}
	sink = sum;
	return iters * 2;
}

/* reserve: gfp_reserve/gfp_unreserve pairs of 64 KiB (free of cost without
 * the shim, where the header's weak call returns 0). */
static NOINLINE uint64_t wl_reserve(uint64_t iters)
{
	uint64_t failed = 0;

	for (uint64_t i = 0; i < iters; i++) {
		if (gfp_reserve(64 * 1024, GFP_KERNEL) != 0)
			failed++;
		gfp_unreserve();
	}
	sink = failed;
	return iters * 2;
}

/* inside: the small workload inside one reservation of 1 GiB, held
 * throughout (tokens mode draws every request from it). */
static NOINLINE uint64_t wl_inside(uint64_t iters)
{
	if (gfp_reserve((size_t)1 << 30, GFP_KERNEL) != 0) {
		fprintf(stderr, "gfp-allocbench: gfp_reserve(1 GiB) failed\n");
		exit(1);
	}
	uint64_t ops = small_pairs(iters);
	gfp_unreserve();
	return ops;
}

const struct workload allocbench_workloads[] = {
    {"small", wl_small, 30000000},     {"mixed", wl_mixed, 1800000},
    {"xthread", wl_xthread, 4000000},  {"realloc", wl_realloc, 40000},
    {"aligned", wl_aligned, 20000000}, {"reserve", wl_reserve, 2000000},
    {"inside", wl_inside, 3000000},    {"larson", wl_larson, 8000000},
    {"large", wl_large, 200000},       {"once", wl_once, 1},
};

const size_t allocbench_count = sizeof(allocbench_workloads) / sizeof(allocbench_workloads[0]);
