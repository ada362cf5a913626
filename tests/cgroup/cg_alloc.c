/*
 * cg_alloc - memory that a cgroup charges: every block is written to, so
 * that its pages are in the cgroup's usage.
 *
 *   cg_alloc fill CHUNK        allocate CHUNK bytes at a time until NULL
 *   cg_alloc take BYTES        take BYTES (1 MiB at a time) and exit
 *   cg_alloc hold BYTES        hold BYTES, say "ready", wait for a signal
 *   cg_alloc staged FIRST CHUNK  hold FIRST, say "ready", wait for a line on
 *                              stdin, then fill with CHUNK until NULL
 *
 * fill, take and staged print one JSON line: {"first":..,"total":..} (total
 * counts first too). Status 0; 2 for bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t take(size_t chunk, size_t max)
{
	size_t total = 0;
	while (total < max) {
		char *p = malloc(chunk);
		if (!p)
			break;
		memset(p, 0x5a, chunk);
		total += chunk;
	}
	return total;
}

/* Takes `want` bytes a MiB at a time, or exits 1. */
static void hold(size_t want)
{
	if (take(1 << 20, want) < want) {
		fprintf(stderr, "cg_alloc: could not hold %zu bytes\n", want);
		exit(1);
	}
}

static void wait_line(void)
{
	char line[64];
	if (!fgets(line, sizeof(line), stdin))
		exit(0); /* the test went away */
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "fill") == 0) {
		size_t total = take(strtoull(argv[2], NULL, 0), (size_t)-1);
		printf("{\"first\":0,\"total\":%zu}\n", total);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "take") == 0) {
		size_t total = take(1 << 20, strtoull(argv[2], NULL, 0));
		printf("{\"first\":0,\"total\":%zu}\n", total);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "hold") == 0) {
		hold(strtoull(argv[2], NULL, 0));
		printf("ready\n");
		fclose(stdout); /* the reader sees the end of the line */
		for (;;)
			pause();
	}
	if (argc == 4 && strcmp(argv[1], "staged") == 0) {
		size_t first = strtoull(argv[2], NULL, 0);
		hold(first);
		printf("ready\n");
		wait_line();
		size_t total = first + take(strtoull(argv[3], NULL, 0), (size_t)-1);
		printf("{\"first\":%zu,\"total\":%zu}\n", first, total);
		return 0;
	}
	fprintf(stderr,
	        "usage: cg_alloc fill CHUNK | take BYTES | hold BYTES | staged FIRST CHUNK\n");
	return 2;
}
