/*
 * A fork while another thread is adding the program to the shim's table of
 * modules (its readlink of /proc/self/exe held up by the test): the child
 * finds the table's filler recorded as a thread it does not have. The
 * child's injected call must still be recorded with its modules, without
 * waiting for a thread that will never finish there.
 *
 * fork_modules: thread "filler" makes the first injected call
 * (inject_here); once it has started, the main thread forks, and the child
 * makes one of its own. Both calls must fail (GFP_POLICY fails every call
 * from inject_here). Exit 0 when both did.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int started;

__attribute__((noipa)) static void *inject_here(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory"); /* a frame of its own, not a tail call */
	return p;
}

static void *filler(void *arg)
{
	(void)arg;
	atomic_store(&started, 1);
	void *p = inject_here(64);
	if (p) {
		fprintf(stderr, "filler: the injected call succeeded\n");
		exit(3);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, filler, NULL) != 0)
		return 2;
	while (!atomic_load(&started))
		sched_yield();
	/* Into the filler's record: its readlink is held up for seconds. */
	nanosleep(&(struct timespec){.tv_nsec = 300 * 1000 * 1000}, NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		void *p = inject_here(64);
		if (p) {
			fprintf(stderr, "child: the injected call succeeded\n");
			_exit(3);
		}
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "child: status %#x\n", st);
		return 1;
	}
	pthread_join(t, NULL);
	printf("fork_modules done\n");
	return 0;
}
