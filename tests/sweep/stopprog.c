/*
 * stopprog - a program that keeps gfp-sweep waiting, in one place at a time,
 * with a child of its own in another session (which only the run's keeper
 * can find) waiting too:
 *
 *   stopprog record MARK DIR   waits at once: the recording run never ends
 *   stopprog run MARK DIR      waits when its one allocation fails: a run
 *                              that hangs; else prints "ok"
 *   stopprog confirm MARK DIR  the first time its allocation fails it
 *                              crashes (DIR/crashed is made), every later
 *                              time it waits: the finding's confirmation
 *                              run hangs
 *
 * MARK is only there to be found on its command line (and its child's). No
 * stdio: its one allocation is the only one the sweep can fail.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void wait_forever(void)
{
	pid_t child = fork();
	if (child == 0)
		setsid();
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	const char *mode = argv[1];
	if (!strcmp(mode, "record"))
		wait_forever();
	char *volatile p = malloc(64);
	if (!p && !strcmp(mode, "confirm")) {
		char path[4096];
		size_t n = strlen(argv[3]);
		if (n + 10 > sizeof(path))
			return 2;
		memcpy(path, argv[3], n);
		memcpy(path + n, "/crashed", 9);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			raise(SIGSEGV);
	}
	if (!p)
		wait_forever();
	free(p);
	return write(1, "ok\n", 3) == 3 ? 0 : 1;
}
