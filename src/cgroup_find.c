/*
 * cgroup_find.c - where the process's memory cgroup is: its path in
 * /proc/self/cgroup's text, and the directory /proc/self/mountinfo mounts
 * it at (cgroup v2, or v1's memory hierarchy). Start-up only; allocates
 * nothing, errno kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_find.h"

/* mountinfo is read a block at a time. */
#define FIND_FILE (4096 * 4)

/* Field i (0-based, space-separated) of a line: its start and length. */
static bool field(const char *line, size_t len, unsigned i, const char **f, size_t *fl)
{
	size_t p = 0;
	for (unsigned k = 0; k < i; k++) {
		const char *sp = memchr(line + p, ' ', len - p);
		if (!sp)
			return false;
		p = (size_t)(sp - line) + 1;
	}
	const char *sp = memchr(line + p, ' ', len - p);
	*f = line + p;
	*fl = sp ? (size_t)(sp - (line + p)) : len - p;
	return true;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static size_t unescape(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3') {
			out[o++] =
			    (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return o;
}

static bool has_word(const char *list, size_t n, const char *word)
{
	size_t wl = strlen(word);
	for (size_t i = 0; i < n;) {
		const char *comma = memchr(list + i, ',', n - i);
		size_t end = comma ? (size_t)(comma - list) : n;
		if (end - i == wl && memcmp(list + i, word, wl) == 0)
			return true;
		i = end + 1;
	}
	return false;
}

bool cgroup_find_mount_dir(const char *line, size_t len, bool v2, const char *path, char *out,
                           size_t cap)
{
	/* id parent major:minor root mountpoint options [optional...] - fstype
	 * source superoptions */
	const char *root, *mnt, *f;
	size_t rl, ml, fl;
	if (!field(line, len, 3, &root, &rl) || !field(line, len, 4, &mnt, &ml))
		return false;
	unsigned i = 6;
	while (field(line, len, i, &f, &fl) && !(fl == 1 && *f == '-'))
		i++;
	const char *type, *super;
	size_t tl, sl;
	if (!field(line, len, i + 1, &type, &tl) || !field(line, len, i + 3, &super, &sl))
		return false;
	if (v2 ? !(tl == 7 && memcmp(type, "cgroup2", 7) == 0)
	       : !(tl == 6 && memcmp(type, "cgroup", 6) == 0 && has_word(super, sl, "memory")))
		return false;
	char r[CGROUP_FIND_PATH];
	size_t n = unescape(r, sizeof(r), root, rl);
	if (n == 1 && r[0] == '/')
		n = 0; /* the hierarchy's root: every path is under it */
	size_t pl = strlen(path);
	if (pl < n || memcmp(path, r, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return false; /* the process's cgroup is not under this mount */
	size_t o = unescape(out, cap, mnt, ml);
	const char *rest = path + n;
	if (strcmp(rest, "/") == 0)
		rest = "";
	if (o + strlen(rest) + 1 > cap)
		return false;
	memcpy(out + o, rest, strlen(rest) + 1);
	return true;
}

bool cgroup_find_path(const char *text, bool v2, char *out, size_t cap)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *c1 = strchr(l, ':'), *nl = strchr(l, '\n');
		const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		size_t end = nl ? (size_t)(nl - l) : strlen(l);
		if (!c2 || (size_t)(c2 - l) >= end)
			continue;
		bool match = v2 ? c2 == c1 + 1 && strncmp(l, "0:", 2) == 0
		                : has_word(c1 + 1, (size_t)(c2 - c1 - 1), "memory");
		size_t pl = end - (size_t)(c2 + 1 - l);
		if (!match || pl + 1 > cap || c2[1] != '/')
			continue;
		memcpy(out, c2 + 1, pl);
		out[pl] = '\0';
		return true;
	}
	return false;
}

bool cgroup_find_mount(bool v2, const char *path, char *out, size_t cap)
{
	static char buf[FIND_FILE];
	int saved = errno;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	bool found = false;
	size_t have = 0;
	while (fd >= 0 && !found) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t start = 0;
		for (char *nl; !found && (nl = memchr(buf + start, '\n', have - start));) {
			size_t ll = (size_t)(nl - (buf + start));
			found = cgroup_find_mount_dir(buf + start, ll, v2, path, out, cap);
			start += ll + 1;
		}
		if (start == 0 && have == sizeof(buf))
			have = 0; /* a line longer than the buffer: no mount of ours */
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	if (fd >= 0)
		close(fd);
	errno = saved;
	return found;
}
