/*
 * tool.h - what every tool does the same way: its messages, --version, the
 * usage errors of its options, and memory that is there or an exit.
 */
#ifndef GFP_TOOLS_TOOL_H
#define GFP_TOOLS_TOOL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

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
/* realloc, calloc and strdup that die(EXIT_USAGE) when memory runs out. */
void *xrealloc(void *p, size_t n);
void *xcalloc(size_t n, size_t size);
char *xstrdup(const char *s); /* NULL for NULL */

#endif
