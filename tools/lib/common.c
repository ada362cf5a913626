/*
 * common.c - what the tools share: their messages, --version, and finding
 * libgfpshim.so and the program.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
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

char *xstrdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	return memcpy(xrealloc(NULL, n), s, n);
}

/* ------------------------------------------------------------------------
 * The library and the program
 * ---------------------------------------------------------------------- */

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Next to the tool (build tree or a relocated install), then the prefix. */
bool tool_find_library(char *out, size_t n)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			const char *rel[] = {"/../preload/" LIB_NAME, "/" LIB_NAME};
			for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				int w = snprintf(out, n, "%s%s", exe, rel[i]);
				if (w > 0 && (size_t)w < n && is_file(out))
					return true;
			}
		}
	}
	snprintf(out, n, "%s/%s", GFP_LIBDIR, LIB_NAME);
	return is_file(out);
}

/* PROG as execvp would find it, for the checks below. */
bool tool_resolve(const char *prog, char *out, size_t n)
{
	if (strchr(prog, '/')) {
		snprintf(out, n, "%s", prog);
		return access(out, F_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		snprintf(out, n, "%.*s/%s", (int)len, len ? path : ".", prog);
		if (is_file(out) && access(out, X_OK) == 0)
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

/* LD_PRELOAD cannot reach a static executable: say so instead of running a
 * program that silently ignores its policy. */
/* Whether the dynamic section at [off, off+size) sets DF_1_PIE. */
static bool dynamic_says_pie(int fd, off_t off, uint64_t size)
{
	for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= size; at += sizeof(Elf64_Dyn)) {
		Elf64_Dyn d;
		if (pread(fd, &d, sizeof(d), off + (off_t)at) != (ssize_t)sizeof(d) ||
		    d.d_tag == DT_NULL)
			return false;
		if (d.d_tag == DT_FLAGS_1)
			return (d.d_un.d_val & DF_1_PIE) != 0;
	}
	return false;
}

/* A program ld.so never runs: no PT_INTERP, and either no dynamic section
 * (-static) or one that marks a position-independent executable
 * (-static-pie, which relocates itself). ld.so itself and shared libraries
 * also lack PT_INTERP but are not PIE, so they are not called static. */
bool tool_is_static_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	Elf64_Ehdr eh;
	bool elf = false, interp = false, pie = false, dynamic = false;
	if (read(fd, &eh, sizeof(eh)) == (ssize_t)sizeof(eh) &&
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64) {
		elf = true;
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof(ph),
			          (off_t)(eh.e_phoff + (off_t)i * eh.e_phentsize)) !=
			    (ssize_t)sizeof(ph))
				break;
			interp |= ph.p_type == PT_INTERP;
			if (ph.p_type == PT_DYNAMIC) {
				dynamic = true;
				pie = dynamic_says_pie(fd, (off_t)ph.p_offset, ph.p_filesz);
			}
		}
	}
	close(fd);
	return elf && !interp && (!dynamic || pie);
}

void tool_set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char preload[2 * PATH_MAX];
	if (old && *old)
		snprintf(preload, sizeof(preload), "%s:%s", lib, old);
	else
		snprintf(preload, sizeof(preload), "%s", lib);
	setenv("LD_PRELOAD", preload, 1);
}

void tool_crash_sites_digest(size_t n, const char *const *top, const double *runs,
                             void (*print_site)(size_t g, void *ctx), void *ctx)
{
	bool header = false;
	for (size_t g = 0; g < n; g++) {
		if (!top[g] || !*top[g])
			continue;
		size_t groups = 0;
		double total = 0;
		bool seen = false;
		for (size_t h = 0; h < n && !seen; h++) {
			if (!top[h] || strcmp(top[h], top[g]) != 0)
				continue;
			seen = h < g; /* printed at its first group */
			groups++;
			total += runs[h];
		}
		if (seen || groups < 2)
			continue;
		if (!header)
			printf("\ncrash sites that several groups share (one bug, many failure "
			       "points):\n");
		header = true;
		printf("  %zu groups, %.0f runs, first [%zu]:\n", groups, total, g + 1);
		print_site(g, ctx);
	}
}
