/*
 * sp_case - one allocation request under memory pressure, timed.
 *
 *   sp_case --flags KERNEL|NOFAIL --size 4096 --source budget|enomem|none
 *           [--free-ms N | --free-on-canary N] [--free-count N] [--repeat N]
 *           [--headroom MB]
 *           [--plain] [--notifier] [--shrink] [--sites 1|2]
 *
 * budget: fills the budget (GFP_POLICY limit=) with 4096-byte blocks taking
 *         the reserve too; enomem: lowers RLIMIT_AS a few MB above the
 *         address space and fills it with blocks of the request's size.
 * The freer thread frees blocks --free-ms after the request started (0: never),
 * or once the request has printed --free-on-canary canaries to GFP_LOG (it
 * looped that many times canary.retries rounds: whatever the machine's
 * speed; a request that returned before frees nothing before it returned);
 * --shrink gives them back by realloc to 1 byte instead of free;
 * --notifier registers an OOM notifier that frees them instead; with
 * --sites 2 odd iterations call from a second call site.
 * Prints one line per request:
 *   iter=I result=ok|null errno=E elapsed_ms=T freed=0|1 latency_ms=L pid=P fill=N notifier_calls=C
 *   transient=M
 * freed=1 means the freer had started freeing when the request returned;
 * latency_ms is the time from that free to the return; transient counts the
 * fill's failures that a later call undid (see sp_fill_until).
 */
#include <sys/resource.h>
#include <fcntl.h>

#include "sp_common.h"

static int sp_errno;
static volatile int sp_last_site; /* keeps the two call sites distinct (no ICF) */
static int notifier_calls;
static int notifier_count;

/* The call site under test: canaries and failure reports must name it. */
__attribute__((noinline)) void *sp_request_under_pressure(size_t size, gfp_t flags, int plain)
{
	void *p = plain ? malloc(size) : gfp_malloc(size, flags);

	sp_errno = errno; /* after the call: no tail call, the frame stays */
	sp_last_site = 1;
	return p;
}

/* A second call site, for "once per call site" warnings. */
__attribute__((noinline)) void *sp_request_other_site(size_t size, gfp_t flags, int plain)
{
	void *p = plain ? malloc(size) : gfp_malloc(size, flags);

	sp_errno = errno;
	sp_last_site = 2;
	return p;
}

static size_t notifier(void *arg)
{
	size_t bytes = 0;
	int n = notifier_count < sp_nblocks ? notifier_count : sp_nblocks;

	(void)arg;
	notifier_calls++;
	for (int i = sp_nblocks - n; i < sp_nblocks; i++) {
		bytes += malloc_usable_size(sp_blocks[i]);
		free(sp_blocks[i]);
	}
	sp_nblocks -= n;
	return bytes;
}

static long vm_size_kb(void)
{
	char buf[8192];
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		sp_die("cannot read /proc/self/status\n");
	buf[n] = 0;
	char *v = strstr(buf, "VmSize:");
	if (v == NULL)
		sp_die("no VmSize in /proc/self/status\n");
	return strtol(v + 7, NULL, 10);
}

int main(int argc, char **argv)
{
	gfp_t flags = GFP_KERNEL;
	size_t size = 4096;
	const char *source = "budget";
	int free_ms = 0, free_count = -1, repeat = 1, headroom_mb = 16, plain = 0, notify = 0;
	int free_canaries = 0;
	int sites = 1, shrink = 0;
	struct sp_freer freer;
	struct rlimit as_before;
	void *big = NULL;
	int fill = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--plain")) {
			plain = 1;
			continue;
		}
		if (!strcmp(a, "--notifier")) {
			notify = 1;
			continue;
		}
		if (!strcmp(a, "--shrink")) {
			shrink = 1;
			continue;
		}
		if (v == NULL)
			sp_die("%s needs a value\n", a);
		i++;
		if (!strcmp(a, "--flags"))
			flags = sp_parse_flags(v);
		else if (!strcmp(a, "--size"))
			size = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--source"))
			source = v;
		else if (!strcmp(a, "--free-ms"))
			free_ms = atoi(v);
		else if (!strcmp(a, "--free-on-canary"))
			free_canaries = atoi(v);
		else if (!strcmp(a, "--free-count"))
			free_count = atoi(v);
		else if (!strcmp(a, "--repeat"))
			repeat = atoi(v);
		else if (!strcmp(a, "--sites"))
			sites = atoi(v);
		else if (!strcmp(a, "--headroom"))
			headroom_mb = atoi(v);
		else
			sp_die("unknown option %s\n", a);
	}
	int enomem = !strcmp(source, "enomem");
	size_t fill_size = enomem ? size : 4096;
	gfp_t fill_flags = enomem ? GFP_KERNEL | GFP_NORETRY | GFP_NOWARN : SP_FILL_ALL;

	if (free_count < 0)
		free_count = enomem ? (size < 262144 ? 262144 / size : 1) : 128;
	notifier_count = free_count;
	if (!gfp_active())
		sp_die("the shim is not loaded\n");
	sp_freer_start(&freer);
	freer.shrink = shrink;
	if (notify && gfp_oom_notifier_register(notifier, NULL))
		sp_die("gfp_oom_notifier_register failed\n");
	if (enomem) {
		struct rlimit rl;

		big = malloc(2 << 20);
		if (big == NULL)
			sp_die("no 2 MB block\n");
		memset(big, 1, 2 << 20);
		/* Only the soft limit: it goes back up once the outcome is known. */
		if (getrlimit(RLIMIT_AS, &as_before))
			sp_die("getrlimit: %s\n", strerror(errno));
		rl = as_before;
		rl.rlim_cur = (vm_size_kb() + headroom_mb * 1024L) * 1024;
		if (setrlimit(RLIMIT_AS, &rl))
			sp_die("setrlimit: %s\n", strerror(errno));
	}

	for (int it = 0; it < repeat; it++) {
		if (strcmp(source, "none"))
			fill += sp_fill_until(fill_size, fill_flags, enomem ? 4 : 1);
		if (free_canaries > 0)
			sp_freer_arm_canaries(&freer, free_canaries, free_count,
			                      it == 0 ? big : NULL);
		else if (free_ms > 0)
			sp_freer_arm(&freer, free_ms, free_count, it == 0 ? big : NULL);
		double t0 = sp_now_ms();
		void *p = sites == 2 && it % 2 ? sp_request_other_site(size, flags, plain)
		                               : sp_request_under_pressure(size, flags, plain);
		double t1 = sp_now_ms();
		int armed = free_ms > 0 || free_canaries > 0;
		int freed = armed && atomic_load(&freer.freed);

		/* The request is answered: what jemalloc does afterwards with no
		 * address space left (the freer's late frees, exit) is not the
		 * shim's decision, and jemalloc can crash on it. */
		if (enomem && it == repeat - 1 && setrlimit(RLIMIT_AS, &as_before))
			sp_die("setrlimit: %s\n", strerror(errno));

		sp_out(1,
		       "iter=%d result=%s errno=%d elapsed_ms=%.1f freed=%d latency_ms=%.1f pid=%d "
		       "fill=%d notifier_calls=%d transient=%d\n",
		       it, p ? "ok" : "null", p ? 0 : sp_errno, t1 - t0, freed,
		       freed ? t1 - freer.t_free : -1.0, (int)getpid(), fill, notifier_calls,
		       sp_fill_transient);
		if (p != NULL)
			memset(p, 0, size);
		if (armed)
			sp_freer_wait(&freer);
		/* p stays allocated: the next iteration starts from a full budget. */
	}
	sp_freer_stop(&freer);
	return 0;
}
