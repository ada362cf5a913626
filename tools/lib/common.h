/*
 * common.h - what the tools share: finding libgfpshim.so and the program.
 */
#ifndef GFP_TOOLS_COMMON_H
#define GFP_TOOLS_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#define LIB_NAME "libgfpshim.so"

/* Next to the tool (build tree or a relocated install), then the prefix. */
bool tool_find_library(char *out, size_t n);
/* PROG as execvp would find it. */
bool tool_resolve(const char *prog, char *out, size_t n);
/* LD_PRELOAD cannot reach a static executable. */
bool tool_is_static_elf(const char *path);
/* Prepends the library to LD_PRELOAD in this process's environment. */
void tool_set_preload(const char *lib);

/* One bug is often reached from many failure points: prints the crash sites
 * that several crash groups share, each once, with their groups and runs.
 * top[g] is group g's crash site (NULL or "" when it did not crash), runs[g]
 * its runs; print_site(g, ctx) prints group g's crash site. */
void tool_crash_sites_digest(size_t n, const char *const *top, const double *runs,
                             void (*print_site)(size_t g, void *ctx), void *ctx);

#endif
