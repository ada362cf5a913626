/*
 * faultprog - programs that catch their own fatal signals, for gfp-sweep's
 * classification (faults.sh). Each mode makes the same checked allocation
 * (a failure is handled: a message and status 1), then one that writes
 * through an unchecked malloc (a failure faults), and prints "done".
 *   faultprog abort      a SIGSEGV handler (sigaction, SA_SIGINFO) prints and aborts
 *   faultprog signal     the same handler set by signal()
 *   faultprog exit       the same, but the handler exits with status 3
 *   faultprog jump0      the handler siglongjmps back; the program goes on, exit 0
 *   faultprog jump1      the same, then reports the lost allocation, exit 1
 *   faultprog reraise    an SA_RESETHAND handler prints and raises SIGSEGV again
 *   faultprog threads    four threads allocate while one of them faults; abort
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile sig_atomic_t jumped;
static const char *mode;

static void say(const char *s)
{
	ssize_t w = write(2, s, strlen(s));
	(void)w;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	say("faultprog: caught a segmentation fault\n");
	if (strcmp(mode, "exit") == 0)
		_exit(3);
	if (strncmp(mode, "jump", 4) == 0) {
		jumped = 1;
		siglongjmp(back, 1);
	}
	if (strcmp(mode, "reraise") == 0) {
		raise(sig);
		return;
	}
	abort();
}

static void on_segv_plain(int sig)
{
	on_segv(sig, NULL, NULL);
}

__attribute__((noinline)) static void checked(void)
{
	char *p = malloc(48);
	if (!p) {
		say("faultprog: out of memory\n");
		exit(1);
	}
	strcpy(p, "checked");
	puts(p);
	free(p);
}

__attribute__((noinline)) static void unchecked(void)
{
	char *volatile p = malloc(64);
	strcpy(p, "unchecked"); /* the bug: no check */
	puts(p);
	free(p);
}

static volatile int stop;

static void *allocate_on(void *arg)
{
	(void)arg;
	while (!stop) {
		void *p = malloc(32);
		if (p)
			free(p);
	}
	return NULL;
}

static void *faulting_thread(void *arg)
{
	(void)arg;
	unchecked();
	return NULL;
}

static void threads(void)
{
	pthread_t t[4];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, allocate_on, NULL);
	pthread_create(&t[3], NULL, faulting_thread, NULL);
	pthread_join(t[3], NULL);
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	mode = argc > 1 ? argv[1] : "abort";
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	if (strcmp(mode, "reraise") == 0)
		sa.sa_flags |= SA_RESETHAND;
	if (strcmp(mode, "signal") == 0)
		signal(SIGSEGV, on_segv_plain);
	else
		sigaction(SIGSEGV, &sa, NULL);
	setvbuf(stdout, NULL, _IONBF, 0);

	checked();
	if (strcmp(mode, "threads") == 0) {
		threads();
	} else if (sigsetjmp(back, 1) == 0) {
		unchecked();
	} else if (strcmp(mode, "jump1") == 0) {
		say("faultprog: an allocation failed\n");
		return 1;
	}
	puts("done");
	return 0;
}
