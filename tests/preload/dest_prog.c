/*
 * dest_prog - makes the shim write to its destinations (GFP_LOG, GFP_RECORD)
 * when the test says so, to check what those writes may touch.
 *
 *   dest_prog OPS [FILE]
 *
 * Under GFP_POLICY='fail.probability=1;fail.min=1M;fail.verbose=1' every
 * 'm' is one injection: a log message and a record. OPS, one letter each:
 *   m  malloc(2 MiB), which must fail (else exit 2)
 *   l  300 times: m, then 5 ms of sleep (a reader of a pipe may go away)
 *   w  wait for a line on stdin (the test changes files meanwhile)
 *   c  close every descriptor from 3 up, as daemons do, and open FILE for
 *     appending: it gets descriptor 3, the shim's old number
 *   p  write "ok" to stdout
 * Exit status 0 when every op went as described.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int inject(void)
{
	void *p = malloc(2u << 20);
	if (p) {
		free(p);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	for (const char *op = argv[1]; *op; op++) {
		switch (*op) {
		case 'm':
			if (inject() != 0)
				return 2;
			break;
		case 'l':
			for (int i = 0; i < 300; i++) {
				if (inject() != 0)
					return 2;
				nanosleep(&(struct timespec){0, 5000000}, NULL);
			}
			break;
		case 'w': {
			char c = 0;
			while (read(0, &c, 1) == 1 && c != '\n')
				;
			break;
		}
		case 'c':
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
			if (argc < 3 || open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644) != 3)
				return 3;
			break;
		case 'p':
			if (write(1, "ok\n", 3) != 3)
				return 4;
			break;
		default:
			return 5;
		}
	}
	return 0;
}
