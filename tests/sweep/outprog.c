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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The payload, or nothing when the buffer cannot be had. */
static void payload(void)
{
	char *volatile buf = malloc(64);
	if (!buf)
		return; /* the planted bug: silence instead of an error */
	strcpy(buf, "payload\n");
	fputs(buf, stdout);
	free(buf);
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
	fputs("usage: outprog binary|status1|clock|child\n", stderr);
	return 2;
}
