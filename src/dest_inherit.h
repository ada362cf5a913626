/*
 * dest_inherit.h - dest_inherit.c: GFP_INHERITED, the destinations a parent
 * opened, as its children see them.
 */
#ifndef GFP_DEST_INHERIT_H
#define GFP_DEST_INHERIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

struct gfp_dest;

/* What a parent said of one destination. */
struct gfp_dest_inherited {
	bool id; /* fd:N: the file it held */
	dev_t dev;
	ino_t ino;
	pid_t run_pid; /* a report's path: the run's first process */
	unsigned long long run_start;
};

/* FNV-1a of VAR=value: a child tells a value its parent opened from one
 * it set itself. */
uint64_t gfp_dest_inherit_hash(const char *var, const char *value);
/* Whether GFP_INHERITED names var with this value's hash; what it said in in. */
bool gfp_dest_inherit_find(const char *var, uint64_t hash, struct gfp_dest_inherited *in);
/* d is named in the GFP_INHERITED this process's children get. */
void gfp_dest_inherit_name(struct gfp_dest *d);
/* An inherited destination this process cannot open (fd, or path when not
 * NULL): the first write says so, the children still inherit it. 0. */
int gfp_dest_inherit_lose(struct gfp_dest *d, int fd, const char *path, int err,
                          const struct gfp_dest_inherited *in);

/* GFP_INHERITED's value for this process's children into v (cap bytes);
 * false when it names nothing. */
bool gfp_dest_inherit_value(char *v, size_t cap);
/* Sets GFP_INHERITED to v, and the report's path made absolute: setenv
 * allocates (dest_export.c raises the guard around it). */
void gfp_dest_inherit_export(const char *v);

#pragma GCC visibility pop

#endif /* GFP_DEST_INHERIT_H */
