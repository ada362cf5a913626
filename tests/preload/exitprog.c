/*
 * exitprog MODE: allocations, then an end by _exit, as dash and daemons
 * end, with children and threads around:
 *   plain    _exit(0)
 *   fork     a child allocates and _exits 3; the parent waits, _exit(0)
 *   vfork    a vfork child's exec fails and it _exits 127; the parent
 *            waits, _exit(0)
 *   thread   a detached thread still allocating and freeing when main
 *            calls _exit(0)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void work(int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(64 + (size_t)i);
		__asm__ volatile("" : : "r"(p) : "memory"); /* not elided with free */
		free(p);
	}
}

static void *busy(void *arg)
{
	(void)arg;
	for (;;)
		work(100);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	work(50);
	if (strcmp(mode, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			work(20);
			_exit(3);
		}
		waitpid(pid, NULL, 0);
	} else if (strcmp(mode, "vfork") == 0) {
		char *const args[] = {"/nonexistent/program", NULL};
		pid_t pid = vfork();
		if (pid == 0) {
			execv(args[0], args);
			_exit(127);
		}
		waitpid(pid, NULL, 0);
	} else if (strcmp(mode, "thread") == 0) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_create(&t, &a, busy, NULL);
		usleep(20000);
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	_exit(0);
}
