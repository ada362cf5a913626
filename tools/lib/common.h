/*
 * common.h - what the tools share: their messages, --version, and finding
 * libgfpshim.so and the program.
 */
#ifndef GFP_TOOLS_COMMON_H
#define GFP_TOOLS_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define LIB_NAME "libgfpshim.so"

/* Usage errors, unreadable input, and a malloc that failed. */
#define EXIT_USAGE 2

/* ------------------------------------------------------------------------
 * Messages: every line a tool writes to stderr about itself reads
 * "TOOL: LEVEL: message" (LEVEL error, warning or note), as the shim's own
 * read "gfpshim: error: ...". TOOL is the name the tool was run by.
 * ---------------------------------------------------------------------- */
void tool_vmsg(const char *level, const char *fmt, va_list ap);
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The error, then exit(status). */
void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* A usage error: the error, then "try 'TOOL --help'"; returns EXIT_USAGE. */
int tool_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What getopt_long's '?' or ':' means, as a usage error (opterr = 0, and the
 * option string starts with ':' after any '+'); returns EXIT_USAGE. */
int tool_bad_option(int c, char *const *argv);
/* --version: "TOOL (gfpshim) VERSION" on stdout; returns 0. */
int tool_version(void);
/* realloc and strdup that die(EXIT_USAGE) when memory runs out. */
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s); /* NULL for NULL */

/* libgfpshim.so: in the build tree beside the tool, beside it, in an
 * installed tree's libdir relative to the tool's real path (wherever the tree
 * was moved), then in the configured libdir. */
bool tool_find_library(char *out, size_t n);
/* The one-line error for when tool_find_library finds nothing: every
 * directory it looked in, and the fix. */
void tool_library_missing(char *out, size_t n);
/* PROG as execvp would find it. */
bool tool_resolve(const char *prog, char *out, size_t n);
/* LD_PRELOAD cannot reach a static executable. */
bool tool_is_static_elf(const char *path);
/* Whether tool_set_preload can make ld.so load lib; else false and why. */
bool tool_can_preload(const char *lib, char *why, size_t n);
/* Prepends the library to LD_PRELOAD in this process's environment (by its
 * name, its directory first in LD_LIBRARY_PATH, when its path has a space). */
void tool_set_preload(const char *lib);

/* One bug is often reached from many failure points: prints the crash sites
 * that several crash groups share, each once, with their groups and runs.
 * top[g] is group g's crash site (NULL or "" when it did not crash), runs[g]
 * its runs; print_site(g, ctx) prints group g's crash site. */
void tool_crash_sites_digest(size_t n, const char *const *top, const double *runs,
                             void (*print_site)(size_t g, void *ctx), void *ctx);

#endif
