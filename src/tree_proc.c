/*
 * tree_proc.c - what /proc says of a process, for the tree's members
 * (tree_member.c) and the OOM step (oom.c): its state and start time, its
 * name, its namespaces, its oom_score_adj, and whether this process's
 * /proc is its own PID namespace's. Reads into stack buffers: never
 * allocates.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "tree_structs.h"
#include "tree_proc.h"

/* Reads /proc/PID/<what> (pid 0: self) into buf; its length, or -1. */
static ssize_t tree_proc_read(pid_t pid, const char *what, char *buf, size_t n)
{
	char path[64];
	if (pid)
		gfp_snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	else
		gfp_snprintf(path, sizeof(path), "/proc/self/%s", what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	return r;
}

/* The state letter and start time of pid (stat's fields 3 and 22); false
 * when there is no such process. The comm may hold spaces and parentheses:
 * the fields start after its last ')'. */
bool tree_proc_stat(pid_t pid, char *state, uint64_t *start)
{
	char buf[1024];
	if (tree_proc_read(pid, "stat", buf, sizeof(buf)) <= 0)
		return false;
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	p += 2;
	*state = *p;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	*start = v;
	return true;
}

/* Its comm into out; false when it cannot be read. */
bool tree_proc_comm(pid_t pid, char out[16])
{
	char buf[32];
	ssize_t n = tree_proc_read(pid, "comm", buf, sizeof(buf));
	if (n <= 0)
		return false;
	memset(out, 0, 16);
	for (ssize_t i = 0; i < n && i < 15 && buf[i] != '\n'; i++)
		out[i] = buf[i];
	return true;
}

void tree_proc_ns_of(const char *path, struct tree_ns *ns)
{
	struct stat st;
	ns->dev = ns->ino = 0;
	if (stat(path, &st) == 0) {
		ns->dev = (uint64_t)st.st_dev;
		ns->ino = (uint64_t)st.st_ino;
	}
}

bool tree_proc_ns_eq(const struct tree_ns *a, const struct tree_ns *b)
{
	return __atomic_load_n(&a->ino, __ATOMIC_RELAXED) == b->ino &&
	       __atomic_load_n(&a->dev, __ATOMIC_RELAXED) == b->dev;
}

void tree_proc_ns_set(struct tree_ns *to, const struct tree_ns *from)
{
	__atomic_store_n(&to->dev, from->dev, __ATOMIC_RELAXED);
	__atomic_store_n(&to->ino, from->ino, __ATOMIC_RELAXED);
}

/* Whether /proc is this process's PID namespace's: its NSpid line lists
 * the pid in each namespace from /proc's down to the process's own. */
bool tree_proc_is_mine(void)
{
	char buf[4096];
	ssize_t n = tree_proc_read(0, "status", buf, sizeof(buf));
	if (n <= 0)
		return false;
	const char *p = strstr(buf, "\nNSpid:");
	if (!p) /* a kernel without PID namespaces, or a line past the buffer */
		return n < (ssize_t)sizeof(buf) - 1;
	int fields = 0;
	for (p += 7; *p && *p != '\n'; p++)
		if (*p >= '0' && *p <= '9' && (p[-1] == '\t' || p[-1] == ' ' || p[-1] == ':'))
			fields++;
	return fields == 1;
}

int tree_proc_adj(pid_t pid)
{
	char buf[32];
	if (tree_proc_read(pid, "oom_score_adj", buf, sizeof(buf)) <= 0)
		return 0;
	int sign = 1, v = 0;
	const char *p = buf;
	if (*p == '-')
		sign = -1, p++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return sign * v;
}
