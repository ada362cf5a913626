/*
 * tool.c - what every tool does the same way: its messages, --version, the
 * usage errors of its options, and memory that is there or an exit.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "gfp_build.h"
#include "text.h"

/* ------------------------------------------------------------------------
 * Messages
 * ---------------------------------------------------------------------- */

/* What a message quotes (a path, a key of a file anyone may have written)
 * may hold an ESC: it is spelled \xNN, as gfp-report's output spells it. */
void tool_vmsg(const char *level, const char *fmt, va_list ap)
{
	char *text = NULL;
	int n = vasprintf(&text, fmt, ap);
	flockfile(stderr);
	fprintf(stderr, "%s: %s: ", program_invocation_short_name, level);
	if (n >= 0)
		text_visible_put(stderr, text, (size_t)n);
	else /* out of memory: the words without what they quote */
		fputs(fmt, stderr);
	fputc('\n', stderr);
	funlockfile(stderr);
	free(text);
}

#define MSG_FN(fn, level)                                                                          \
	void fn(const char *fmt, ...)                                                              \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		tool_vmsg(level, fmt, ap);                                                         \
		va_end(ap);                                                                        \
	}
MSG_FN(tool_error, "error")
MSG_FN(tool_warning, "warning")
MSG_FN(tool_note, "note")

void die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tool_vmsg("error", fmt, ap);
	va_end(ap);
	exit(status);
}

int tool_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tool_vmsg("error", fmt, ap);
	va_end(ap);
	fprintf(stderr, "try '%s --help'\n", program_invocation_short_name);
	return EXIT_USAGE;
}

int tool_bad_option(int c, char *const *argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	bool is_long = strncmp(arg, "--", 2) == 0;
	if (!is_long && optopt > ' ' && optopt < 127)
		return c == ':' ? tool_usage_error("option '-%c' needs an argument", optopt)
		                : tool_usage_error("unknown option '-%c'", optopt);
	if (c == ':')
		return tool_usage_error("option '%s' needs an argument", arg);
	/* A known long option given a value it does not take: --help=x. */
	const char *eq = strchr(arg, '=');
	if (optopt && eq)
		return tool_usage_error("option '%.*s' takes no argument", (int)(eq - arg), arg);
	return tool_usage_error("unknown option '%s'", arg);
}

int tool_version(void)
{
	printf("%s (gfpshim) %s\n", program_invocation_short_name, GFP_VERSION);
	return 0;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(EXIT_USAGE, "out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p)
		die(EXIT_USAGE, "out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	return memcpy(xrealloc(NULL, n), s, n);
}
