/*
 * cgroup_find.h - cgroup_find.c: where the process's memory cgroup is.
 */
#ifndef GFP_CGROUP_FIND_H
#define GFP_CGROUP_FIND_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* The longest cgroup directory followed. */
#define CGROUP_FIND_PATH 512

/* One line of /proc/self/mountinfo (without its newline): the directory of
 * cgroup path `path` when the line mounts the hierarchy it is in (fstype
 * cgroup2 when v2, else cgroup with the memory controller); false
 * otherwise or when out (cap bytes) is too small. Pure: the unit test
 * calls it. */
bool cgroup_find_mount_dir(const char *line, size_t len, bool v2, const char *path, char *out,
                           size_t cap);
/* The process's cgroup path in hierarchy v2 ("0::/x") or v1's memory one
 * ("4:memory:/x"), from the text of /proc/self/cgroup, into out. Pure. */
bool cgroup_find_path(const char *text, bool v2, char *out, size_t cap);
/* The directory of path in the hierarchy (v2 or v1 memory) that holds it,
 * from /proc/self/mountinfo read a block at a time, into out. */
bool cgroup_find_mount(bool v2, const char *path, char *out, size_t cap);

#pragma GCC visibility pop

#endif /* GFP_CGROUP_FIND_H */
