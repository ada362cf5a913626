/*
 * sigsegvprog - a program that catches its faults with GNU libsigsegv
 * (sigsegv_install_handler) and then aborts, as programs that use it to
 * report a crash do; its one allocation is written to without a check.
 */
#include <sigsegv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on_fault(void *addr, int serious)
{
	(void)addr, (void)serious;
	fputs("sigsegvprog: caught a fault, aborting\n", stderr);
	abort();
}

__attribute__((noinline)) static void unchecked(void)
{
	char *volatile p = malloc(64);
	strcpy(p, "unchecked");
	puts(p);
	free(p);
}

int main(void)
{
	if (sigsegv_install_handler(on_fault) != 0)
		return 2;
	unchecked();
	return 0;
}
