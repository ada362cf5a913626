/*
 * outprog - what gfp-sweep must tell apart by output and exit status alone.
 *
 *   outprog binary    writes "\0hdr" and a payload, 0; the payload is left out
 *                     when its buffer cannot be had (data lost, exit 0 still)
 *   outprog status1   the same in text, ending with status 1 as grep -c does
 *                     with no match: lost data behind the normal status
 *   outprog clock     prints the time and allocates: its output changes by
 *                     itself, so it says nothing of data lost
 *   outprog child     runs itself as "outprog binary" and passes on its status
 *   outprog midline   a payload lost inside a line of UTF-8 and control bytes
 *   outprog wide      a payload lost 5000 bytes into one line
 *   outprog slow N    sleeps 0.4 s, then allocates N times (at one site): a
 *                     program whose runs take long enough to watch
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The payload, or nothing when the buffer cannot be had. */
static void payload_line(bool newline)
{
	char *volatile buf = malloc(64);
	if (!buf)
		return; /* the planted bug: silence instead of an error */
	strcpy(buf, newline ? "payload\n" : "payload");
	fputs(buf, stdout);
	free(buf);
}

static void payload(void)
{
	payload_line(true);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "binary")) {
		fwrite("\0hdr\n", 1, 5, stdout);
		payload();
		return 0;
	}
	if (!strcmp(mode, "status1")) {
		fputs("hdr\n", stdout);
		payload();
		return 1;
	}
	if (!strcmp(mode, "clock")) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		printf("%ld\n", t.tv_nsec);
		char *volatile p = malloc(64);
		if (p)
			printf("ok\n");
		free(p);
		return 0;
	}
	if (!strcmp(mode, "child")) {
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "'%s' binary", argv[0]);
		int st = system(cmd);
		return st == 0 ? 0 : 4;
	}
	if (!strcmp(mode, "midline") || !strcmp(mode, "wide")) {
		fputs("first line\n", stdout);
		if (!strcmp(mode, "wide"))
			for (int i = 0; i < 5000; i++)
				putchar('a' + i % 26);
		fputs("name: caf\xc3\xa9\t\x01\\[", stdout);
		payload_line(false);
		fputs("]\nlast line\n", stdout);
		return 0;
	}
	if (!strcmp(mode, "slow") && argc > 2) {
		usleep(400 * 1000);
		for (int i = 0; i < atoi(argv[2]); i++) {
			char *volatile p = malloc(32);
			if (!p) {
				fputs("outprog: out of memory\n", stderr);
				return 1;
			}
			free(p);
		}
		return 0;
	}
	fputs("usage: outprog binary|status1|clock|child|midline|wide|slow N\n", stderr);
	return 2;
}
