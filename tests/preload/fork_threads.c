/*
 * fork() from a process whose other threads allocate all the time, 200
 * times; every child allocates before it exits. A lock held across fork by
 * another thread (ours or jemalloc's) deadlocks the child: the alarm turns
 * that into a failure instead of a hung test.
 */
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int stop;
static void *(*volatile vmalloc)(size_t) = malloc;

static void *churn(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	void *keep[64] = {0};
	while (!atomic_load(&stop)) {
		unsigned i = (seed = seed * 1103515245u + 12345u) % 64;
		free(keep[i]);
		keep[i] = vmalloc(16 + seed % 4096);
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1));
	for (int n = 0; n < 200; n++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			alarm(10);
			for (int i = 0; i < 1000; i++) {
				char *p = vmalloc((size_t)i * 8 + 1);
				memset(p, 1, (size_t)i * 8 + 1);
				free(p);
			}
			pthread_t ct; /* the child can start threads of its own too */
			pthread_create(&ct, NULL, churn, (void *)7);
			atomic_store(&stop, 1);
			pthread_join(ct, NULL);
			exit(0); /* run the exit handlers: the shim's report too */
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "child %d of 200 failed: status %#x%s\n", n, st,
				WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? " (deadlocked)" : "");
			return 1;
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("200 forks ok\n");
	return 0;
}
