/*
 * launch.h - what running a program under the shim needs: libgfpshim.so
 * found wherever the tools are, the program as execvp finds it, and whether
 * LD_PRELOAD can reach it.
 */
#ifndef GFP_TOOLS_LAUNCH_H
#define GFP_TOOLS_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#define LIB_NAME "libgfpshim.so"

/* libgfpshim.so: in the build tree beside the tool, beside it, in an
 * installed tree's libdir relative to the tool's real path (wherever the tree
 * was moved), then in the configured libdir. */
bool launch_find_library(char *out, size_t n);
/* The one-line error for when launch_find_library finds nothing: every
 * directory it looked in, and the fix. */
void launch_library_missing(char *out, size_t n);
/* PROG as execvp would find it. */
bool launch_resolve(const char *prog, char *out, size_t n);
/* LD_PRELOAD cannot reach a static executable. */
bool launch_is_static_elf(const char *path);
/* Whether launch_set_preload can make ld.so load lib; else false and why. */
bool launch_can_preload(const char *lib, char *why, size_t n);
/* Prepends the library to LD_PRELOAD in this process's environment (by its
 * name, its directory first in LD_LIBRARY_PATH, when its path has a space). */
void launch_set_preload(const char *lib);

#endif
