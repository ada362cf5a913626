/*
 * first_unwind - the shim sets libunwind up at its first backtrace: that
 * first backtrace from several threads at once, from a signal handler, or
 * from a child forked before any, must name the right call site. Under
 * stats=sites a strdup's site is its caller's (an unwind past libc), so
 * each case strdups DUPS strings from a function of its own and keeps them;
 * the report's row of that function must have them all. Nothing allocates
 * through libc before the case (output goes out with write).
 *
 *   first_unwind threads|signal|fork
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define DUPS     100
#define THREADS  4

static char *kept[THREADS + 1][DUPS];

NOINLINE void dup_in_thread(char **into)
{
	for (int i = 0; i < DUPS; i++)
		into[i] = strdup("a string of twenty-three");
	__asm__ volatile("" ::: "memory");
}

NOINLINE void dup_in_handler(char **into)
{
	for (int i = 0; i < DUPS; i++)
		into[i] = strdup("a string of twenty-three");
	__asm__ volatile("" ::: "memory");
}

NOINLINE void dup_in_child(char **into)
{
	for (int i = 0; i < DUPS; i++)
		into[i] = strdup("a string of twenty-three");
	__asm__ volatile("" ::: "memory");
}

static pthread_barrier_t start;

static void *thread(void *arg)
{
	pthread_barrier_wait(&start);
	dup_in_thread(kept[(long)arg]);
	return NULL;
}

static void handler(int sig)
{
	(void)sig;
	dup_in_handler(kept[THREADS]);
}

static void say(const char *s)
{
	if (write(STDOUT_FILENO, s, strlen(s)) < 0)
		_exit(1);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "threads")) {
		pthread_t t[THREADS];
		pthread_barrier_init(&start, NULL, THREADS);
		for (long i = 0; i < THREADS; i++)
			if (pthread_create(&t[i], NULL, thread, (void *)i) != 0)
				return 1;
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(argv[1], "signal")) {
		signal(SIGUSR1, handler);
		raise(SIGUSR1);
	} else if (!strcmp(argv[1], "fork")) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			dup_in_child(kept[0]);
			say("child done\n");
			exit(0);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
		dup_in_thread(kept[0]);
	} else {
		return 2;
	}
	say("done\n");
	return 0;
}
