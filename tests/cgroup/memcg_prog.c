/*
 * memcg_prog - requests of given gfp flags against a memory cgroup's
 * limits (limit=cgroup), every byte written so that a real cgroup charges
 * it.
 *
 *   memcg_prog fill FLAGS CHUNK MAX [THREADS]
 *       THREADS threads (1 by default) each allocate CHUNK bytes at a time
 *       with gfp_malloc(FLAGS) until their share of MAX is taken or a
 *       request gets NULL; one JSON line: {"total":..,"nulls":..} (nulls:
 *       the threads that got NULL)
 *   memcg_prog fillwait FLAGS CHUNK MAX [THREADS]
 *       the same, then waits for a line (or the end) on stdin and exits 0
 *   memcg_prog hold BYTES
 *       takes BYTES (1 MiB at a time, plain malloc), prints {"ready":BYTES},
 *       then waits for a line (or the end) on stdin and exits 0
 *
 * FLAGS: names joined by '|' (KERNEL, NOFS, NOWAIT, ATOMIC, NOFAIL,
 * RETRY_MAYFAIL, ...: the slow-path tests' sp_parse_flags). Status 0, 2 for
 * bad arguments, 1 when hold cannot take its bytes.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gfpshim.h>

#include "../slowpath/sp_common.h" /* sp_parse_flags */

static gfp_t flags;
static size_t chunk, share;
static uint64_t total, nulls; /* atomic */

static void *fill(void *arg)
{
	(void)arg;
	for (size_t got = 0; got < share; got += chunk) {
		char *p = gfp_malloc(chunk, flags);
		if (!p) {
			__atomic_add_fetch(&nulls, 1, __ATOMIC_RELAXED);
			break;
		}
		memset(p, 0x5a, chunk);
		__atomic_add_fetch(&total, chunk, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	/* stdio's buffer now: a full budget leaves no room for it later. */
	static char out[4096];
	setvbuf(stdout, out, _IOLBF, sizeof(out));
	bool wait = argc > 1 && strcmp(argv[1], "fillwait") == 0;
	if ((argc == 5 || argc == 6) && (wait || strcmp(argv[1], "fill") == 0)) {
		unsigned threads = argc == 6 ? (unsigned)atoi(argv[5]) : 1;
		chunk = strtoull(argv[3], NULL, 0);
		flags = sp_parse_flags(argv[2]); /* exits 2 on an unknown name */
		if (!chunk || threads < 1 || threads > 32) {
			fprintf(stderr, "memcg_prog: bad chunk or threads\n");
			return 2;
		}
		share = strtoull(argv[4], NULL, 0) / threads;
		pthread_t t[32];
		for (unsigned i = 0; i < threads; i++)
			if (pthread_create(&t[i], NULL, fill, NULL) != 0) {
				fprintf(stderr, "memcg_prog: pthread_create failed\n");
				return 2;
			}
		for (unsigned i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
		printf("{\"total\":%llu,\"nulls\":%llu}\n", (unsigned long long)total,
		       (unsigned long long)nulls);
		char line[16];
		if (wait)
			(void)!read(0, line, sizeof(line));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "hold") == 0) {
		size_t want = strtoull(argv[2], NULL, 0);
		for (size_t got = 0; got < want; got += 1 << 20) {
			char *p = malloc(1 << 20);
			if (!p) {
				fprintf(stderr, "memcg_prog: could not hold %zu bytes\n", want);
				return 1;
			}
			memset(p, 0x5a, 1 << 20);
		}
		printf("{\"ready\":%zu}\n", want);
		char line[16];
		(void)!read(0, line, sizeof(line));
		return 0;
	}
	fprintf(stderr, "usage: memcg_prog fill FLAGS CHUNK MAX [THREADS] | hold BYTES\n");
	return 2;
}
