/*
 * errno_syscalls - does free() keep errno when jemalloc's own system calls
 * fail inside it, and does a failed posix_memalign leave errno alone?
 *
 * A seccomp filter makes every madvise fail with EPERM and every mmap of
 * 256 MiB or more fail with ENOMEM. With MALLOC_CONF=dirty_decay_ms:0 each
 * free of a large block purges at once (madvise), so jemalloc 5.3's free
 * sets errno; posix_memalign of 512 MiB fails in mmap. Prints one line:
 *
 *   free=kept|changed huge=kept|changed thread=kept|changed posix_memalign=kept|changed
 *   own=set|lost
 *
 * (free of 4 MiB blocks, of 16 MiB ones - jemalloc's huge arena - and of
 * 4 MiB blocks in a second thread, bound to an arena made for it; own: the
 * program's own failing madvise and mmap still set errno, EPERM and ENOMEM,
 * though the shim wraps them for jemalloc's sake).
 *
 * tests/preload/errno_syscalls.sh runs it under plain jemalloc (which
 * changes errno: the test can fail) and under the shim (which must not).
 * Exit 77 where seccomp filters cannot be installed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define SENTINEL 12345

/* Called through volatile pointers: GCC knows that free and posix_memalign
 * leave errno alone and would not read it again after them. */
static void (*volatile p_free)(void *) = free;
static int (*volatile p_posix_memalign)(void **, size_t, size_t) = posix_memalign;
#define BIG_MMAP (256ul << 20)

static int install_filter(void)
{
#if defined(__x86_64__)
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 5),
	    /* mmap's length: its high half first (any bit there is >= 4 GiB). */
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
	    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (unsigned)BIG_MMAP, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOMEM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
#else
	return -1;
#endif
}

/* Whether a free of a `size` block, dirtied, changed errno in 64 tries. */
static void *frees_change_errno(void *size)
{
	size_t n = (size_t)size;
	int changed = 0;
	for (int i = 0; i < 64; i++) {
		char *p = malloc(n);
		if (!p)
			exit(1);
		p[0] = p[n - 1] = 1; /* dirty pages for the purge */
		errno = SENTINEL;
		p_free(p);
		changed |= errno != SENTINEL;
	}
	return (void *)(uintptr_t)changed;
}

int main(void)
{
	/* Warm up first: jemalloc and the shim initialise, stdio gets its buffer. */
	void *warm = malloc(1 << 20);
	free(warm);
	printf("%s", "");
	if (install_filter() != 0) {
		printf("skip: no seccomp filter here\n");
		return 77;
	}

	int free_changed = frees_change_errno((void *)(4ul << 20)) != NULL;
	int huge_changed = frees_change_errno((void *)(16ul << 20)) != NULL;
	/* A second thread is bound to an arena of its own, made for it. */
	pthread_t t;
	void *thread_changed;
	if (pthread_create(&t, NULL, frees_change_errno, (void *)(4ul << 20)) != 0 ||
	    pthread_join(t, &thread_changed) != 0)
		return 1;

	void *q = (void *)&free_changed;
	errno = SENTINEL;
	int rc = p_posix_memalign(&q, 64, 2 * BIG_MMAP);
	int memalign_changed = errno != SENTINEL;
	if (rc == 0) {
		printf("posix_memalign of %lu bytes succeeded: the filter did not work\n",
		       2 * BIG_MMAP);
		return 1;
	}
	if (q != (void *)&free_changed) {
		printf("posix_memalign wrote *memptr on failure\n");
		return 1;
	}

	errno = SENTINEL;
	static char page[4096] __attribute__((aligned(4096)));
	int own_madvise = madvise(page, sizeof(page), MADV_DONTNEED) == -1 && errno == EPERM;
	errno = SENTINEL;
	int own_mmap = mmap(NULL, BIG_MMAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	                    0) == MAP_FAILED &&
	               errno == ENOMEM;
	printf("free=%s huge=%s thread=%s posix_memalign=%s own=%s\n",
	       free_changed ? "changed" : "kept", huge_changed ? "changed" : "kept",
	       thread_changed ? "changed" : "kept", memalign_changed ? "changed" : "kept",
	       own_madvise && own_mmap ? "set" : "lost");
	return 0;
}
