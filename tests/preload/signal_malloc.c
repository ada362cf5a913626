/*
 * A signal handler that allocates, while the main thread allocates too (with
 * the signal blocked around its own calls: jemalloc itself is not
 * async-signal-safe). The shim's per-thread state must come out exact: the
 * report must count every allocation of both.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void *(*volatile vmalloc)(size_t) = malloc;
static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	(void)sig;
	for (int i = 0; i < 10; i++) {
		char *p = vmalloc(64);
		p[0] = 1;
		free(p);
	}
	handled++;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 200}, {0, 200}};
	setitimer(ITIMER_REAL, &it, NULL);

	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	long mine = 0;
	volatile unsigned spin = 0;
	while (handled < 500) {
		sigprocmask(SIG_BLOCK, &block, NULL);
		free(vmalloc(100));
		mine++;
		sigprocmask(SIG_UNBLOCK, &block, NULL);
		for (int i = 0; i < 2000; i++)
			spin += (unsigned)i;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	/* The shell side compares this with the report's malloc count. */
	printf("%ld\n", mine + 10L * handled);
	return 0;
}
