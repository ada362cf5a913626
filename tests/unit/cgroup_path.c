/* The process's cgroup path in /proc/self/cgroup's text
 * (src/cgroup_find.c: cgroup_find_path): v2's "0::" line, v1's memory
 * controller among others on one line, paths with colons, and what does
 * not fit. */
#include <string.h>

#include "check.h"
#include "cgroup_find.h"

static const char *path(const char *text, bool v2, size_t cap)
{
	static char out[256];
	strcpy(out, "(untouched)");
	return cgroup_find_path(text, v2, out, cap) ? out : NULL;
}

int main(void)
{
	const char *v2 = "0::/user.slice/user-1000.slice/session-2.scope\n";
	CHECK_STR(path(v2, true, 256), "/user.slice/user-1000.slice/session-2.scope");
	CHECK(path(v2, false, 256) == NULL);

	/* A hybrid host: v1 controllers, the memory one with another on its
	 * line, and the v2 line last. */
	const char *hybrid = "12:cpu,cpuacct:/a\n"
	                     "4:blkio,memory:/docker/abc\n"
	                     "1:name=systemd:/init.scope\n"
	                     "0::/init.scope\n";
	CHECK_STR(path(hybrid, false, 256), "/docker/abc");
	CHECK_STR(path(hybrid, true, 256), "/init.scope");

	/* "memory" must be a whole controller name: "memory_foo" is not it. */
	CHECK(path("5:memory_foo:/x\n", false, 256) == NULL);
	/* A v1 named hierarchy with an empty controller list is not v2's. */
	CHECK(path("3::x\n", true, 256) == NULL);
	/* The path runs to the end of the line, colons and all; no newline at
	 * the end of the text is fine. */
	CHECK_STR(path("0::/a:b/c", true, 256), "/a:b/c");
	/* The root. */
	CHECK_STR(path("0::/\n", true, 256), "/");
	/* A path that does not fit (its NUL included) is none. */
	CHECK(path("0::/abcdef\n", true, 7) == NULL);
	CHECK_STR(path("0::/abcdef\n", true, 8), "/abcdef");
	/* Nothing, or no line of the hierarchy. */
	CHECK(path("", true, 256) == NULL);
	CHECK(path("garbage without colons\n", true, 256) == NULL);
	return CHECK_DONE();
}
