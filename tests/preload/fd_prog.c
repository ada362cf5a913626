/*
 * fd_prog - what a program sees of its own descriptors, and whether anyone
 * else read from or wrote to the files it opened.
 *
 *   fd_prog OPS [ARG...]
 *
 * OPS, one letter each, in order (some take the next ARG):
 *   l  list every open descriptor below RLIMIT_NOFILE, as CPython's
 *      fd_status.py does: "fd N CLOEXEC DEV INO" lines, then "end"
 *   s  allocate through libc (strdup, getline, qsort's buffer): the caller
 *      the shim sees is libc, so call-site statistics unwind
 *   o  open 8 descriptors, print "opened N..." and close them
 *   c  close every descriptor from 3 up (close_range), as daemons and
 *      CPython's children do
 *   F  (ARG: a file, ARG: a count) open the file ARG times for reading and
 *      writing, each with its own offset; the numbers are kept for v
 *   f  (ARG: a file) the same until the table is full (EMFILE)
 *   m  malloc(2 MiB), which must fail (an injection; else exit 2)
 *   t  4 threads, each 5 times m
 *   u  setgid and setuid 65534 (root only), as a server's worker does
 *   v  every descriptor of F and f is at offset 0 (nobody read from or
 *      wrote through it), else exit 6
 *   w  (ARG: a file, ARG: a string) allocate until the file holds the
 *      string (a thread of the shim's said it is ready), else exit 9 after
 *      60 s
 *   p  print "ok"
 * Exit status 0 when every op went as described.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int own[65536];
static int nown;

static int inject(void)
{
	void *p = malloc(2u << 20);
	if (p) {
		free(p);
		return -1;
	}
	return 0;
}

static void *injector(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++)
		if (inject() != 0)
			return (void *)1;
	return NULL;
}

static void list(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		exit(7);
	rlim_t top = rl.rlim_cur < 65536 ? rl.rlim_cur : 65536;
	for (int fd = 0; fd < (int)top; fd++) {
		int flags = fcntl(fd, F_GETFD);
		struct stat st;
		if (flags < 0 || fstat(fd, &st) != 0)
			continue;
		printf("fd %d %d %llu %llu\n", fd, (flags & FD_CLOEXEC) != 0,
		       (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	}
	printf("end\n");
	fflush(stdout);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void through_libc(void)
{
	char *words[16];
	for (int i = 0; i < 16; i++) {
		char w[16];
		snprintf(w, sizeof(w), "w%d", (i * 7) % 16);
		words[i] = strdup(w);
	}
	qsort(words, 16, sizeof(words[0]), cmp);
	for (int i = 0; i < 16; i++)
		free(words[i]);
	FILE *f = fopen("/proc/self/stat", "r");
	char *line = NULL;
	size_t n = 0;
	if (f && getline(&line, &n, f) < 0)
		exit(8);
	free(line);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int arg = 2;
	for (const char *op = argv[1]; *op; op++) {
		switch (*op) {
		case 'l':
			list();
			break;
		case 's':
			through_libc();
			break;
		case 'o': {
			int fds[8];
			printf("opened");
			for (int i = 0; i < 8; i++) {
				fds[i] = open("/dev/null", O_RDONLY);
				printf(" %d", fds[i]);
			}
			printf("\n");
			fflush(stdout);
			for (int i = 0; i < 8; i++)
				close(fds[i]);
			break;
		}
		case 'c':
			if (close_range(3, ~0U, 0) != 0)
				return 3;
			break;
		case 'F':
		case 'f': {
			if (arg >= argc || (*op == 'F' && arg + 1 >= argc))
				return 2;
			const char *path = argv[arg++];
			int want = *op == 'F' ? atoi(argv[arg++]) : 65536;
			while (nown < want && nown < 65536) {
				int fd = open(path, O_RDWR);
				if (fd < 0) {
					if (errno == EMFILE && *op == 'f')
						break;
					return 3;
				}
				own[nown++] = fd;
			}
			break;
		}
		case 'm':
			if (inject() != 0)
				return 2;
			break;
		case 't': {
			pthread_t t[4];
			for (int i = 0; i < 4; i++)
				if (pthread_create(&t[i], NULL, injector, NULL) != 0)
					return 4;
			for (int i = 0; i < 4; i++) {
				void *r;
				pthread_join(t[i], &r);
				if (r)
					return 2;
			}
			break;
		}
		case 'u':
			if (setgid(65534) != 0 || setuid(65534) != 0)
				return 4;
			break;
		case 'v':
			for (int i = 0; i < nown; i++) {
				off_t at = lseek(own[i], 0, SEEK_CUR);
				if (at != 0) {
					printf("fd %d: offset %lld\n", own[i], (long long)at);
					return 6;
				}
			}
			break;
		case 'w': {
			if (arg + 1 >= argc)
				return 2;
			const char *path = argv[arg++], *want = argv[arg++];
			for (int tries = 0;; tries++) {
				char buf[65536] = "";
				int fd = open(path, O_RDONLY);
				if (fd >= 0) {
					ssize_t n = read(fd, buf, sizeof(buf) - 1);
					buf[n > 0 ? n : 0] = '\0';
					close(fd);
				}
				if (strstr(buf, want))
					break;
				if (tries == 6000)
					return 9;
				/* (the budget looks at its watermarks when a
				 * thread takes a new share: kept, not freed) */
				if (!malloc(64u << 10))
					return 9;
				usleep(10000);
			}
			break;
		}
		case 'p':
			printf("ok\n");
			fflush(stdout);
			break;
		default:
			return 5;
		}
	}
	return 0;
}
