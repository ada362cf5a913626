/*
 * sp_limits - a real ENOMEM meets the slow path under a budget also when the
 * process limits its address space only after it started. The budget routes
 * send a request its allowance covers straight to jemalloc, and look at the
 * answer only where jemalloc can fail such a request (preload/malloc.c):
 *
 *   sp_limits setrlimit   lowers RLIMIT_AS through glibc's setrlimit, which
 *                         the shim sees: the first failure already meets the
 *                         slow path
 *   sp_limits syscall     lowers it with the raw system call, which the shim
 *                         does not see: jemalloc's first failing mmap (of a
 *                         larger extent than the request needs, before the
 *                         request that fails) tells it
 *
 * With the limit at what is mapped now plus 64 MiB, it mallocs 4 KiB blocks
 * until one fails, and again until the next one fails (the slow path may
 * have found a few pages meanwhile). After each failure it counts the
 * events in GFP_RECORD. Prints "first=N records=R second=N records=R", the
 * blocks served before each failure and the records after it.
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "sp_common.h"

static char buf[1 << 16];

/* The lines of the record file so far (0 if there is none). */
static int records(void)
{
	const char *path = getenv("GFP_RECORD");
	int fd = path ? open(path, O_RDONLY) : -1, lines = 0;
	if (fd < 0)
		return 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

static unsigned long vm_size(void)
{
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		sp_die("cannot read /proc/self/status\n");
	buf[n] = '\0';
	const char *v = strstr(buf, "VmSize:");
	if (!v)
		sp_die("no VmSize in /proc/self/status\n");
	return strtoul(v + 7, NULL, 10) * 1024;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		sp_die("usage: sp_limits setrlimit|syscall\n");
	sp_warm(4096);
	struct rlimit r = {vm_size() + (64ul << 20), RLIM_INFINITY};
	int rc;
	if (!strcmp(argv[1], "setrlimit"))
		rc = setrlimit(RLIMIT_AS, &r);
	else if (!strcmp(argv[1], "syscall"))
		rc = (int)syscall(SYS_prlimit64, 0, RLIMIT_AS, &r, NULL);
	else
		sp_die("unknown mode %s\n", argv[1]);
	if (rc != 0)
		sp_die("setting RLIMIT_AS: %s\n", strerror(errno));
	int first = 0;
	while (sp_malloc_fn(4096) != NULL)
		if (++first > 1 << 20)
			sp_die("1M blocks of 4 KiB under a 64 MiB limit\n");
	int after_first = records(), second = 0;
	while (sp_malloc_fn(4096) != NULL)
		if (++second > 1 << 20)
			sp_die("1M blocks of 4 KiB after the limit was reached\n");
	sp_out(1, "first=%d records=%d second=%d records=%d\n", first, after_first, second,
	       records());
	return 0;
}
