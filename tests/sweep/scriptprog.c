/*
 * scriptprog - a program run as "./scriptprog -f script < input" from its
 * own directory: it reads its script (a path relative to the working
 * directory) and its standard input, keeps a copy of each line and writes
 * through the copy unchecked, so that a failed malloc crashes it. Without
 * its script it exits 2 (repro_dir.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *keep(const char *line)
{
	size_t n = strlen(line);
	char *p = malloc(n + 1);
	p[n] = '\0'; /* unchecked */
	return memcpy(p, line, n);
}

static size_t lines(FILE *f, char **kept, size_t max)
{
	char buf[256];
	size_t n = 0;
	while (n < max && fgets(buf, sizeof(buf), f))
		kept[n++] = keep(buf);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], "-f") != 0) {
		fputs("usage: scriptprog -f SCRIPT < INPUT\n", stderr);
		return 2;
	}
	FILE *script = fopen(argv[2], "r");
	if (!script) {
		perror(argv[2]);
		return 2;
	}
	char *kept[16];
	size_t n = lines(script, kept, 8);
	fclose(script);
	n += lines(stdin, kept + n, 8);
	for (size_t i = 0; i < n; i++) {
		fputs(kept[i], stdout);
		free(kept[i]);
	}
	return 0;
}
