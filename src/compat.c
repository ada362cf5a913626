/*
 * compat.c - glibc malloc settings that stop working under jemalloc.
 *
 * A user who set MALLOC_PERTURB_ to catch use of uninitialised memory would
 * otherwise believe it is in effect. Warn once, and name jemalloc's own
 * setting where one exists (jemalloc reads MALLOC_CONF).
 */
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "log.h"
#include "compat.h"

struct glibc_var {
	const char *name;
	const char *instead;
};

static const struct glibc_var vars[] = {
    {"MALLOC_PERTURB_", "MALLOC_CONF=junk:true"},
    {"MALLOC_CHECK_", "none in jemalloc; build with -fsanitize=address instead"},
    {"MALLOC_TOP_PAD_", "none needed"},
    {"MALLOC_TRIM_THRESHOLD_", "MALLOC_CONF=dirty_decay_ms:N"},
    {"MALLOC_MMAP_THRESHOLD_", "none (jemalloc maps large sizes by itself)"},
    {"MALLOC_MMAP_MAX_", "none"},
    {"MALLOC_ARENA_MAX", "MALLOC_CONF=narenas:N"},
    {"MALLOC_ARENA_TEST", "MALLOC_CONF=narenas:N"},
};

void compat_warn_glibc_env(void)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i].name);
		/* MALLOC_PERTURB_=0 is glibc's "off" (meson's test runner sets it). */
		if (!v || (i == 0 && strcmp(v, "0") == 0))
			continue;
		gfp_log(GFP_LOG_WARNING,
		        "%s is set but has no effect: allocations go to jemalloc (use %s; "
		        "glibc_warn=0 silences this)",
		        vars[i].name, vars[i].instead);
	}

	const char *t = getenv("GLIBC_TUNABLES");
	/* GLIBC_TUNABLES=glibc.malloc.check=3:glibc.cpu.x=y - list the malloc ones. */
	for (const char *p = t; p && (p = strstr(p, "glibc.malloc.")) != NULL;) {
		size_t n = strcspn(p, ":=");
		char q[256];
		gfp_log(GFP_LOG_WARNING,
		        "GLIBC_TUNABLES sets %s, which has no effect: allocations go to jemalloc "
		        "(see MALLOC_CONF; glibc_warn=0 silences this)",
		        gfp_quote(q, sizeof(q), p, n));
		p += n;
	}
}
