/* limit=cgroup's parts that need no cgroup: the key's word, how the effective
 * policy prints it, what gfp-ctl refuses, and which mountinfo lines hold
 * the process's cgroup (bind mounts of a subtree, escaped paths, v1
 * hierarchies without the memory controller). The cgroup itself is tested
 * for real in tests/cgroup. */
#include <string.h>

#include "check.h"
#include "cgroup.h"
#include "cgroup_find.h"
#include "meaning.h"

static bool dir(const char *line, bool v2, const char *path, const char *want)
{
	char out[256] = "";
	bool ok = cgroup_find_mount_dir(line, strlen(line), v2, path, out, sizeof(out));
	if (!want)
		return !ok;
	if (!ok || strcmp(out, want) != 0)
		fprintf(stderr, "'%s' in '%s': got %s '%s'\n", path, line, ok ? "" : "no dir", out);
	return ok && strcmp(out, want) == 0;
}

int main(void)
{
	struct gfp_policy p;
	struct gfp_cfg_err err = {0};
	config_defaults(&p);
	CHECK(config_parse(&p, "t", "limit=cgroup", 12, false, NULL, &err) == 0);
	CHECK(p.limit == GFP_SIZE_WORD && p.set[GFP_K_limit]);
	char text[64];
	struct gfp_buf b = {text, sizeof(text), 0};
	config_format_value(&gfp_keys[GFP_K_limit], &p, &b);
	CHECK_STR(text, "cgroup");
	size_t drop;
	CHECK(config_contradiction(&p, &drop) == NULL);
	CHECK(config_parse(&p, "t", "limit=cgroups", 13, false, NULL, &err) == 1);
	CHECK(strstr(err.msg, "bad value 'cgroups' for key 'limit'") &&
	      strstr(err.msg, ", or cgroup)"));
	CHECK(config_parse(&p, "t", "limit=64M", 9, false, NULL, &err) == 0 && p.limit == 64 << 20);
	/* kswapd needs a budget; kswapd.psi needs kswapd. */
	config_defaults(&p);
	CHECK(config_parse(&p, "t", "kswapd=1", 8, false, NULL, &err) == 0);
	CHECK(config_contradiction(&p, &drop) && drop == GFP_K_kswapd);
	CHECK(config_parse(&p, "t", "limit=cgroup", 12, false, NULL, &err) == 0);
	CHECK(config_contradiction(&p, &drop) == NULL);
	CHECK(config_parse(&p, "t", "kswapd=0;kswapd.psi=1", 21, false, NULL, &err) == 0);
	CHECK(config_contradiction(&p, &drop) && drop == GFP_K_kswapd_psi);

	/* v1: the memory hierarchy, the root mounted, or a subtree bind-mounted
	 * (a container without a cgroup namespace). */
	const char *v1 = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup "
	                 "rw,memory";
	CHECK(dir(v1, false, "/a/b", "/sys/fs/cgroup/memory/a/b"));
	CHECK(dir(v1, false, "/", "/sys/fs/cgroup/memory"));
	CHECK(dir(v1, true, "/a/b", NULL));
	const char *cpu = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu";
	CHECK(dir(cpu, false, "/a", NULL));
	const char *memsw = "35 31 0:32 / /m rw - cgroup cgroup rw,memoryx";
	CHECK(dir(memsw, false, "/a", NULL));
	const char *sub = "40 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup "
	                  "rw,cpuset,memory";
	CHECK(dir(sub, false, "/docker/abc", "/sys/fs/cgroup/memory"));
	CHECK(dir(sub, false, "/docker/abc/x", "/sys/fs/cgroup/memory/x"));
	CHECK(dir(sub, false, "/docker/abcd", NULL));
	CHECK(dir(sub, false, "/other", NULL));
	/* v2, a mount point with a space (\040), no optional fields. */
	const char *v2 = "41 31 0:38 / /run/my\\040cg rw - cgroup2 cgroup2 rw";
	CHECK(dir(v2, true, "/user.slice/x", "/run/my cg/user.slice/x"));
	CHECK(dir(v2, true, "/", "/run/my cg"));
	CHECK(dir(v2, false, "/user.slice/x", NULL));
	CHECK(dir("41 31 0:38 / /x", true, "/a", NULL)); /* cut short */
	return CHECK_DONE();
}
