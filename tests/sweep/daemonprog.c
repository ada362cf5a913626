/*
 * daemonprog - a program whose runs leave processes behind, for gfp-sweep.
 *
 *   daemonprog MARKER
 *
 * Starts a daemon (fork, setsid, fork: a grandchild in a session of its
 * own, reparented away from the run) that sleeps 60 s with MARKER in its
 * argv; then makes three allocations from three call sites. When the
 * first fails it returns 1 (handled). When the second fails it also
 * starts a second daemon and a child in its own process group, then hangs
 * (the sweep's timeout ends it). The third's failure is ignored (ok).
 *
 *   daemonprog --daemon MARKER   (what the daemons run: sleeps 60 s)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void run_self(char *self, char *marker)
{
	int null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	unsetenv("LD_PRELOAD");
	execl(self, self, "--daemon", marker, (char *)NULL);
	_exit(127);
}

/* fork, setsid, fork: the grandchild runs on; its parent is gone. */
static void daemonize(char *self, char *marker)
{
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		if (fork() == 0)
			run_self(self, marker);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--daemon")) {
		sleep(60);
		return 0;
	}
	if (argc != 2) {
		fputs("usage: daemonprog MARKER\n", stderr);
		return 2;
	}
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 2;
	self[n] = '\0';
	daemonize(self, argv[1]);

	char *volatile a = malloc(100);
	if (!a) {
		fputs("no memory\n", stderr);
		return 1;
	}
	char *volatile b = malloc(200);
	if (!b) {
		daemonize(self, argv[1]);
		if (fork() == 0) {
			setpgid(0, 0);
			run_self(self, argv[1]);
		}
		for (;;)
			pause();
	}
	char *volatile c = malloc(300);
	puts("done");
	free(a);
	free(b);
	free(c);
	return 0;
}
