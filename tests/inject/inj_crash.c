/*
 * inj_crash - a program that trusts malloc: it writes through the pointer
 * crash_alloc returned without a check, so an injected failure becomes a
 * SIGSEGV in crash_use.
 *   inj_crash [segv|abort|handler]
 * abort: checks the pointer and calls abort() on NULL (SIGABRT).
 * handler: installs its own SIGSEGV handler first (in main, before any
 * injection); it prints "program handler ran" and returns, so the access
 * faults again with the default action.
 * Prints "survived" when the allocation succeeded.
 */
#include <signal.h>

#include "inj_common.h"

void *crash_alloc(size_t size);
void crash_use(char *p);

static void *volatile sink;

__attribute__((noinline)) void *crash_alloc(size_t size)
{
	void *p = malloc(size);

	sink = p;
	return p;
}

static volatile int uses;

/* The faulting store is not the first instruction: the crash frame shows
 * crash_use+0x<non-zero>. */
__attribute__((noinline)) void crash_use(char *p)
{
	uses++;
	sink = p;
	((volatile char *)p)[16] = 1;
	uses++;
}

static void on_segv(int sig)
{
	static const char msg[] = "program handler ran\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	signal(SIGSEGV, SIG_DFL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "segv";

	if (strcmp(mode, "handler") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_segv;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSEGV, &sa, NULL) != 0)
			inj_die("inj_crash: sigaction failed");
	}
	char *p = crash_alloc(64);

	if (strcmp(mode, "abort") == 0 && p == NULL)
		abort();
	crash_use(p);
	free(p);
	inj_out(1, "survived\n");
	return 0;
}
