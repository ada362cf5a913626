/*
 * inj_seq - a known sequence of allocation requests, one result per request.
 *
 *   inj_seq [-t THREADS] [-n NAME] [-M MAINOPS] OPS...
 *
 * OPS is a list of tokens (in one argument or several, separated by blanks),
 * each a letter and a size, optionally repeated with a count: "3*m100 n64".
 *   mN malloc        cN calloc(1, N)       rN realloc(NULL, N)
 *   aN aligned_alloc(64, N)   pN posix_memalign(64, N)   AN memalign(64, N)
 *   sN strdup of an N-character string (libc allocates for the program)
 *   gN malloc(16) then realloc to N: two requests, two results
 *   zN malloc(N) then realloc(p, 0), which frees: one request, one result
 *   kN gfp_malloc(N, KERNEL)    nN gfp_malloc(N, KERNEL|NOFAIL)
 *   wN gfp_malloc(N, NOWAIT)    tN gfp_malloc(N, ATOMIC)
 *   yN gfp_malloc(N, KERNEL|NORETRY)
 *   RN malloc(100) from N nested calls of a function with a long name (records
 *      must stay within 4096 bytes however deep the stack)
 *   FN fopen("/dev/null") and fclose      PN asprintf of an N-character text
 *   LN getline from a stream opened before main (its FILE buffer is static):
 *      libc allocates for the program; 'X' when the call failed with ENOMEM
 *   DN dlopen("libm.so.6") and dlclose: ld.so allocates, not the program;
 *      '.' when it loaded, 'X' when dlopen failed (N is ignored)
 * Every block is freed at once (frees are never eligible for injection).
 *
 * Without -t the main thread runs OPS and prints "main RESULTS". With -t the
 * main thread runs MAINOPS (-M, printed as "main RESULTS" first), then
 * creates the threads one after the other (retrying a failed
 * pthread_create, so the order is always the same); each names itself
 * NAME<i> (-n) and waits at a barrier until all exist, then runs OPS; their
 * results follow as "t<i> RESULTS" in creation order.
 * RESULTS has one character per request: '.' served, 'X' NULL with ENOMEM,
 * 'E' NULL with another errno.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>

#include "gfpshim.h"
#include "inj_common.h"

#define MAX_THREADS 8
#define MAX_RESULTS 8192

struct thread_res {
	char res[MAX_RESULTS];
	size_t n;
};

static struct thread_res results[MAX_THREADS + 1];
static char text[MAX_RESULTS + 1];
static char *const *ops_argv;
static int ops_argc;
static const char *thread_name = "inj";
static pthread_barrier_t start_line;
/* Read at run time: the compiler folds realloc(NULL, n) into malloc(n). */
static void *volatile no_block;

static void add(struct thread_res *r, char c)
{
	if (r->n >= MAX_RESULTS)
		inj_die("inj_seq: too many requests");
	r->res[r->n++] = c;
}

void *deep_recursion_with_a_rather_long_function_name_to_fill_the_record(size_t depth);

__attribute__((noinline)) void *
deep_recursion_with_a_rather_long_function_name_to_fill_the_record(size_t depth)
{
	void *p = depth == 0 ? malloc(100)
			     : deep_recursion_with_a_rather_long_function_name_to_fill_the_record(depth - 1);

	inj_keep(p);
	return p;
}

/* getline's stream: opened before main, so its own requests are not the
 * program's (the start-up gate), with a static buffer. */
static char lines[] = "first line\nsecond line\nthird line\n";
static char line_buf[256];
static FILE *line_stream;

__attribute__((constructor)) static void open_line_stream(void)
{
	line_stream = fmemopen(lines, sizeof(lines) - 1, "r");
	if (line_stream == NULL || setvbuf(line_stream, line_buf, _IOFBF, sizeof(line_buf)) != 0)
		inj_die("inj_seq: fmemopen failed");
}

static char libc_op(char op, size_t size)
{
	char *s = NULL;
	size_t n = 0;
	int ok;

	errno = 0;
	switch (op) {
	case 'F': {
		FILE *f = fopen("/dev/null", "r");

		ok = f != NULL;
		if (f != NULL)
			fclose(f);
		break;
	}
	case 'P':
		if (size > MAX_RESULTS)
			inj_die("inj_seq: asprintf size too large");
		memset(text, 'q', size);
		text[size] = '\0';
		ok = asprintf(&s, "<%s>", text) >= 0;
		break;
	default: /* 'L' */
		rewind(line_stream);
		ok = getline(&s, &n, line_stream) > 0;
		break;
	}
	int err = errno;

	free(s);
	return ok ? '.' : err == ENOMEM ? 'X' : 'E';
}

static void one(struct thread_res *r, char op, size_t size)
{
	void *p = NULL;
	int err, rc;

	errno = 0;
	switch (op) {
	case 'm': p = malloc(size); break;
	case 'c': p = calloc(1, size); break;
	case 'r': p = realloc(no_block, size); break;
	case 'a': p = aligned_alloc(64, size); break;
	case 'A': p = memalign(64, size); break;
	case 'p':
		rc = posix_memalign(&p, 64, size);
		add(r, rc == 0 ? '.' : rc == ENOMEM ? 'X' : 'E');
		free(p);
		return;
	case 's':
		if (size > MAX_RESULTS)
			inj_die("inj_seq: strdup size too large");
		memset(text, 'q', size);
		text[size] = '\0';
		p = strdup(text);
		break;
	case 'g': {
		void *q = malloc(16);

		add(r, inj_result(q, errno));
		if (q == NULL)
			return;
		errno = 0;
		p = realloc(q, size);
		err = errno;
		add(r, inj_result(p, err));
		free(p != NULL ? p : q);
		return;
	}
	case 'z':
		p = malloc(size);
		add(r, inj_result(p, errno));
		if (p != NULL && realloc(p, 0) != NULL)
			inj_die("inj_seq: realloc(p, 0) returned a block");
		return;
	case 'k': p = gfp_malloc(size, GFP_KERNEL); break;
	case 'n': p = gfp_malloc(size, GFP_KERNEL | GFP_NOFAIL); break;
	case 'w': p = gfp_malloc(size, GFP_NOWAIT); break;
	case 't': p = gfp_malloc(size, GFP_ATOMIC); break;
	case 'y': p = gfp_malloc(size, GFP_KERNEL | GFP_NORETRY); break;
	case 'R': p = deep_recursion_with_a_rather_long_function_name_to_fill_the_record(size); break;
	case 'F':
	case 'P':
	case 'L':
		add(r, libc_op(op, size));
		return;
	case 'D':
		p = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		add(r, p != NULL ? '.' : 'X');
		if (p != NULL)
			dlclose(p);
		return;
	default:
		inj_out(2, "inj_seq: unknown operation '%c'\n", op);
		_exit(2);
	}
	err = errno;
	inj_keep(p);
	add(r, inj_result(p, err));
	free(p);
}

/* Runs the tokens of argv[0..argc) (each may hold several, blank-separated). */
static void run_ops(struct thread_res *r, char *const *argv, int argc)
{
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];

		while (*s) {
			char *end;
			unsigned long count = 1, size;

			if (*s == ' ' || *s == ',') {
				s++;
				continue;
			}
			if (*s >= '0' && *s <= '9') {
				count = strtoul(s, &end, 10);
				if (*end != '*')
					inj_die("inj_seq: a count needs '*': 3*m100");
				s = end + 1;
			}
			char op = *s++;
			size = strtoul(s, &end, 10);
			if (end == s)
				inj_die("inj_seq: an operation needs a size: m100");
			s = end;
			for (unsigned long k = 0; k < count; k++)
				one(r, op, size);
		}
	}
}

static void *worker(void *arg)
{
	long i = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "%s%ld", thread_name, i);
	if (pthread_setname_np(pthread_self(), name) != 0)
		inj_die("inj_seq: pthread_setname_np failed");
	pthread_barrier_wait(&start_line);
	run_ops(&results[i + 1], ops_argv, ops_argc);
	return NULL;
}

static void print(const char *tag, const struct thread_res *r)
{
	inj_out(1, "%s %.*s\n", tag, (int)r->n, r->res);
}

int main(int argc, char **argv)
{
	long nthreads = 0;
	const char *mainops = NULL;
	int i = 1;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "-t") == 0)
			nthreads = strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "-n") == 0)
			thread_name = argv[i + 1];
		else if (strcmp(argv[i], "-M") == 0)
			mainops = argv[i + 1];
		else
			break;
	}
	if (i >= argc || nthreads < 0 || nthreads > MAX_THREADS)
		inj_die("usage: inj_seq [-t THREADS] [-n NAME] [-M MAINOPS] OPS...");
	ops_argv = argv + i;
	ops_argc = argc - i;

	if (nthreads == 0) {
		run_ops(&results[0], ops_argv, ops_argc);
		print("main", &results[0]);
		return 0;
	}

	if (mainops != NULL) {
		char *const m[] = { (char *)mainops };

		run_ops(&results[0], m, 1);
		print("main", &results[0]);
	}
	pthread_t tid[MAX_THREADS];

	pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
	for (long t = 0; t < nthreads; t++) {
		int tries = 0, rc;

		while ((rc = pthread_create(&tid[t], NULL, worker, (void *)t)) != 0)
			if (rc != EAGAIN || ++tries > 1000)
				inj_die("inj_seq: pthread_create failed");
	}
	for (long t = 0; t < nthreads; t++) {
		char tag[16];

		pthread_join(tid[t], NULL);
		snprintf(tag, sizeof(tag), "t%ld", t);
		print(tag, &results[t + 1]);
	}
	return 0;
}
