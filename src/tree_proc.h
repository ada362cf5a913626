/*
 * tree_proc.h - tree_proc.c: what /proc says of a process.
 */
#ifndef GFP_TREE_PROC_H
#define GFP_TREE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

struct tree_ns;

/* The state letter and start time of pid (stat's fields 3 and 22); false
 * when there is no such process. */
bool tree_proc_stat(pid_t pid, char *state, uint64_t *start);
/* Its comm into out; false when it cannot be read. */
bool tree_proc_comm(pid_t pid, char out[16]);
/* The namespace the file at path (/proc/self/ns/pid) is: its device and
 * inode, 0 when it cannot be read. */
void tree_proc_ns_of(const char *path, struct tree_ns *ns);
bool tree_proc_ns_eq(const struct tree_ns *a, const struct tree_ns *b);
void tree_proc_ns_set(struct tree_ns *to, const struct tree_ns *from);
/* Whether /proc is this process's PID namespace's. */
bool tree_proc_is_mine(void);
/* The oom_score_adj of process pid (0: this one), 0 when it cannot be read. */
int tree_proc_adj(pid_t pid);

#pragma GCC visibility pop

#endif /* GFP_TREE_PROC_H */
