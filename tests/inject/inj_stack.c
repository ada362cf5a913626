/*
 * inj_stack - allocations from known functions, for the stack filters
 * (fail.sym, fail.lib, fail.reject.sym, fail.reject.lib, fail.depth).
 *
 * The functions are non-static and noinline, and do work after their call,
 * so each keeps its frame and its name in the ELF symbol table. Each runs
 * once, in this order, and the program prints one line:
 *   alpha=R beta=R inner=R lib=R dup=R
 * alpha and beta call malloc; inner is stack_inner_alloc, called only by
 * stack_outer; lib is injlib_alloc in libinjlib.so; dup is strdup called
 * from stack_dup (so the first frame is libc's). R is '.', 'X' or 'E'.
 */
#include "inj_common.h"

void *injlib_alloc(size_t size);
void *stack_alpha_alloc(size_t size);
void *stack_beta_alloc(size_t size);
void *stack_inner_alloc(size_t size);
void *stack_outer(size_t size);
char *stack_dup(const char *s);

static void *volatile sink;
static int last_errno;

__attribute__((noinline)) void *stack_alpha_alloc(size_t size)
{
	void *p = malloc(size);

	last_errno = errno;
	sink = p;
	return p;
}

__attribute__((noinline)) void *stack_beta_alloc(size_t size)
{
	void *p = malloc(size);

	last_errno = errno;
	sink = p;
	return p;
}

__attribute__((noinline)) void *stack_inner_alloc(size_t size)
{
	void *p = malloc(size);

	last_errno = errno;
	sink = p;
	return p;
}

__attribute__((noinline)) void *stack_outer(size_t size)
{
	void *p = stack_inner_alloc(size);

	sink = p;
	return p;
}

__attribute__((noinline)) char *stack_dup(const char *s)
{
	char *p = strdup(s);

	last_errno = errno;
	sink = p;
	return p;
}

static char run(void *(*fn)(size_t), size_t size)
{
	errno = 0;
	void *p = fn(size);
	char c = inj_result(p, p == NULL && errno == 0 ? last_errno : errno);

	free(p);
	return c;
}

int main(void)
{
	char a = run(stack_alpha_alloc, 100);
	char b = run(stack_beta_alloc, 100);
	char o = run(stack_outer, 100);
	char l = run(injlib_alloc, 100);
	errno = 0;
	char *d = stack_dup("a string for strdup");
	char dc = inj_result(d, errno);

	free(d);
	inj_out(1, "alpha=%c beta=%c inner=%c lib=%c dup=%c\n", a, b, o, l, dc);
	return 0;
}
