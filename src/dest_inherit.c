/*
 * dest_inherit.c - GFP_INHERITED: what a process tells its children of the
 * destinations it opened.
 *
 * A child inherits the variables, not the descriptors (close-on-exec). The
 * process that opens a destination first names it in GFP_INHERITED (a hash
 * of the value; for fd:N the file's device and inode): a descendant started
 * with the same value that cannot open it (it changed its uid, or closed
 * fd:N, as CPython's subprocess does) runs on without it and says so once,
 * at its first write, rather than exiting 125 before main. A value nobody
 * opened yet is checked as strictly as ever. A report's path also names the
 * run's first process (dest_report.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "dest.h"
#include "dest_inherit.h"

/* The variable the first process names its destinations in. */
#define INHERIT_VAR "GFP_INHERITED"

uint64_t gfp_dest_inherit_hash(const char *var, const char *value)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const char *s = var; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	h = (h ^ '=') * 0x100000001b3ULL;
	for (const char *s = value; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static unsigned long long parse_ull(const char **p)
{
	unsigned long long v = 0;
	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = v * 10 + (unsigned long long)(**p - '0');
	return v;
}

/* Entries VAR:HASH[:DEV:INO][@PID:START], comma-separated. */
bool gfp_dest_inherit_find(const char *var, uint64_t hash, struct gfp_dest_inherited *in)
{
	const char *s = secure_getenv(INHERIT_VAR);
	char want[64];
	int n = gfp_snprintf(want, sizeof(want), "%s:%016llx", var, (unsigned long long)hash);
	for (; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
		if (strncmp(s, want, (size_t)n) != 0 ||
		    (s[n] && s[n] != ',' && s[n] != ':' && s[n] != '@'))
			continue;
		const char *p = s + n;
		in->id = *p == ':';
		if (in->id) {
			p++;
			in->dev = (dev_t)parse_ull(&p);
			p += *p == ':';
			in->ino = (ino_t)parse_ull(&p);
		}
		if (*p == '@') {
			p++;
			in->run_pid = (pid_t)parse_ull(&p);
			p += *p == ':';
			in->run_start = parse_ull(&p);
		}
		return true;
	}
	return false;
}

/* The destinations this process names to its children. */
static struct gfp_dest *named[4];
static unsigned nnamed;

void gfp_dest_inherit_name(struct gfp_dest *d)
{
	for (unsigned i = 0; i < nnamed; i++)
		if (named[i] == d)
			return;
	if (nnamed < sizeof(named) / sizeof(named[0]))
		named[nnamed++] = d;
}

/* The first write says so (dest.c: dest_failed). */
int gfp_dest_inherit_lose(struct gfp_dest *d, int fd, const char *path, int err,
                          const struct gfp_dest_inherited *in)
{
	d->lost = err ? err : EIO;
	d->own = path != NULL;
	if (path)
		memcpy(d->path, path, strlen(path) + 1);
	d->pinned = in->id;
	d->dev = in->dev;
	d->ino = in->ino;
	__atomic_store_n(&d->fd, path ? -1 : fd, __ATOMIC_RELEASE);
	gfp_dest_inherit_name(d);
	return 0;
}

bool gfp_dest_inherit_value(char *v, size_t cap)
{
	if (!nnamed)
		return false;
	struct gfp_buf b = {v, cap, 0};
	for (unsigned i = 0; i < nnamed; i++) {
		gfp_buf_printf(&b, "%s%s:%016llx", i ? "," : "", named[i]->var,
		               (unsigned long long)named[i]->hash);
		if (named[i]->pinned)
			gfp_buf_printf(&b, ":%llu:%llu", (unsigned long long)named[i]->dev,
			               (unsigned long long)named[i]->ino);
		if (named[i]->run_pid)
			gfp_buf_printf(&b, "@%d:%llu", (int)named[i]->run_pid, named[i]->run_start);
	}
	return true;
}

void gfp_dest_inherit_export(const char *v)
{
	for (unsigned i = 0; i < nnamed; i++)
		if (named[i]->export_path)
			setenv(named[i]->var, named[i]->path, 1);
	const char *now = getenv(INHERIT_VAR);
	if (!now || strcmp(now, v) != 0)
		setenv(INHERIT_VAR, v, 1);
}
