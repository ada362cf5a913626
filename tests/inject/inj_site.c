/*
 * inj_site - four call sites, each hit ROUNDS times (argument, default 5) in
 * the order a b d e a b d e ...: site_a mallocs 111 bytes, site_b 222,
 * dup_one and dup_two strdup 10 and 20 characters (libc's malloc is the
 * entry, from two places). One line per site: "a RESULTS", "b ...",
 * "d ...", "e ...", then "data=ADDRESS" (of a static variable of the
 * program) so a test can see ASLR at work.
 */
#include "inj_common.h"

void *site_a(void);
void *site_b(void);
void *dup_one(void);
void *dup_two(void);

static void *volatile sink;
static int anchor; /* its address shows where the program was loaded */

__attribute__((noinline)) void *site_a(void)
{
	void *p = malloc(111);

	sink = p;
	return p;
}

__attribute__((noinline)) void *site_b(void)
{
	void *p = malloc(222);

	sink = p;
	return p;
}

__attribute__((noinline)) void *dup_one(void)
{
	char *p = strdup("0123456789");

	sink = p;
	return p;
}

__attribute__((noinline)) void *dup_two(void)
{
	char *p = strdup("01234567890123456789");

	sink = p;
	return p;
}

#define MAX_ROUNDS 100

int main(int argc, char **argv)
{
	static char res[4][MAX_ROUNDS];
	void *(*const fn[4])(void) = { site_a, site_b, dup_one, dup_two };
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 5;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		inj_die("usage: inj_site [ROUNDS]");
	for (long r = 0; r < rounds; r++)
		for (int s = 0; s < 4; s++) {
			errno = 0;
			void *p = fn[s]();

			res[s][r] = inj_result(p, errno);
			free(p);
		}
	inj_out(1, "a %.*s\nb %.*s\nd %.*s\ne %.*s\ndata=%p\n", (int)rounds, res[0],
		(int)rounds, res[1], (int)rounds, res[2], (int)rounds, res[3], (void *)&anchor);
	return 0;
}
