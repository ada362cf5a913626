/*
 * run_prog [wait FILE] [fork N] - one process of a run that several write
 * one GFP_REPORT from (report_run.sh): two threads allocate and free, then
 * with fork N as many children do the same (two threads each) and end by
 * exit(), and the process prints "pid P" for itself and each child (one
 * write each) and returns 0. With wait FILE it first waits (30 s at most)
 * until FILE exists: it ends after the process that writes FILE.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < 500; i++) {
		char *p = malloc(32 + (size_t)i);
		__asm__ volatile("" : : "r"(p) : "memory"); /* not elided with free */
		free(p);
	}
	return NULL;
}

static void threads(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0)
			exit(2);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static void say_pid(void)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "pid %d\n", (int)getpid());
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		exit(3);
}

int main(int argc, char **argv)
{
	int children = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "wait") == 0) {
			struct stat st;
			for (int tries = 0; tries < 3000 && stat(argv[i + 1], &st) != 0; tries++)
				nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
		} else if (strcmp(argv[i], "fork") == 0) {
			children = atoi(argv[i + 1]);
		}
	}
	threads();
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 4;
		if (pid == 0) {
			threads();
			say_pid();
			exit(0);
		}
	}
	for (int status; children > 0 && wait(&status) > 0;)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 5;
	say_pid();
	return 0;
}
