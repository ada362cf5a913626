/*
 * frames.c - frames named by function and source line: finding a recorded
 * module by its basename (--path, the program's directory, the usual
 * places) and printing frames from records and from gfp-sweep's text.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "record_reader.h"
#include "symbolize.h"
#include "report.h"

/* ------------------------------------------------------------------------
 * Finding modules for symbolize.c: a recorded basename is looked for in the
 * directories below.
 * ---------------------------------------------------------------------- */

/* Where to look for a module by its basename, in order. */
static const char **dirs;
static size_t ndirs;
static const char **user_dirs;
static size_t nuser_dirs;

void add_user_dir(const char *dir)
{
	user_dirs = xrealloc(user_dirs, (nuser_dirs + 1) * sizeof(*user_dirs));
	user_dirs[nuser_dirs++] = dir;
}

/* Names already reported as not found: one note per module, not per frame. */
static char **noted;
static size_t nnoted;

static void add_dir(const char *d)
{
	for (size_t i = 0; i < ndirs; i++)
		if (strcmp(dirs[i], d) == 0)
			return;
	dirs = xrealloc(dirs, (ndirs + 1) * sizeof(*dirs));
	dirs[ndirs++] = xstrdup(d);
}

static void clear_dirs(void)
{
	for (size_t i = 0; i < ndirs; i++)
		free((char *)dirs[i]);
	free(dirs);
	dirs = NULL;
	ndirs = 0;
}

/* The directory of PROG as it would be run (a bare name goes through PATH). */
static void add_program_dir(const char *prog)
{
	char path[PATH_MAX];
	if (!prog || !*prog || !tool_resolve(prog, path, sizeof(path)))
		return;
	char *slash = strrchr(path, '/');
	if (slash == path)
		add_dir("/");
	else if (slash) {
		*slash = '\0';
		add_dir(path);
	}
}

/* --path first (the user knows best), then the file's programs, then the
 * usual places; the directory of libgfpshim.so too, for the shim's frames. */
void set_dirs(const char *prog)
{
	static const char *const defaults[] = {".", "/lib/x86_64-linux-gnu",
	                                       "/usr/lib/x86_64-linux-gnu", "/usr/bin", "/bin"};
	clear_dirs();
	for (size_t i = 0; i < nuser_dirs; i++)
		add_dir(user_dirs[i]);
	add_program_dir(prog);
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		add_dir(defaults[i]);
	char found[PATH_MAX], lib[PATH_MAX];
	if (tool_find_library(found, sizeof(found)) && realpath(found, lib)) {
		char *slash = strrchr(lib, '/');
		if (slash && slash != lib) {
			*slash = '\0';
			add_dir(lib);
		}
	}
}

struct sym_module *find_module(const char *name)
{
	/* A recorded basename; anything else is not a module we can look up. */
	if (!*name || strchr(name, '/') || strcmp(name, "?") == 0 || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return NULL;
	for (size_t i = 0; i < ndirs; i++) {
		char path[PATH_MAX];
		struct stat st;
		int w = snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		if (w > 0 && (size_t)w < sizeof(path) && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return sym_open(path, name);
	}
	for (size_t i = 0; i < nnoted; i++)
		if (strcmp(noted[i], name) == 0)
			return NULL;
	noted = xrealloc(noted, (nnoted + 1) * sizeof(*noted));
	noted[nnoted++] = xstrdup(name);
	char looked[4096] = "";
	size_t len = 0;
	for (size_t i = 0; i < ndirs && len < sizeof(looked); i++)
		len += (size_t)snprintf(looked + len, sizeof(looked) - len, " %s", dirs[i]);
	tool_note("%s not found (looked in%s); --path DIR names its directory", name, looked);
	return NULL;
}

/* One frame as "    DESC (module+offset)" or "    module+offset". Return
 * addresses point after the call, possibly to the next line's code, so those
 * are looked up one byte back; the top of a crash is the faulting pc itself. */
void print_frame(const char *module, const char *offset, const char *symbol, bool return_address)
{
	char buf[1024];
	size_t len = 0;
	buf[0] = '\0';
	char *end = NULL;
	errno = 0;
	unsigned long long off = strtoull(offset, &end, 0);
	struct sym_module *m = NULL;
	if (end != offset && !*end && errno == 0)
		m = find_module(module);
	if (m && !sym_chain(m, off, return_address, buf, sizeof(buf), &len) && !(symbol && *symbol))
		sym_name(m, off, return_address, buf, sizeof(buf), &len);
	if (!len && symbol && *symbol)
		len = (size_t)snprintf(buf, sizeof(buf), "%s", symbol);
	if (len)
		printf("    %s (%s+%s)\n", buf, module, offset);
	else
		printf("    %s+%s\n", module, offset);
}

/* Frames as records.c writes them: [{"module","offset","symbol"}, ...]. */
void print_frames_json(const struct jval *rec, bool top_is_pc)
{
	for (size_t i = 0; i < rec_nframes(rec); i++) {
		struct rec_frame fr;
		if (!rec_frame(rec, i, &fr)) {
			printf("    (a frame without module and offset)\n");
			continue;
		}
		print_frame(fr.module, fr.offset, fr.symbol, !(top_is_pc && i == 0));
	}
}

void each_frame_text(const char *frames, frame_text_fn *fn, void *ctx)
{
	bool first = true;
	for (const char *line = frames; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line = nl ? nl + 1 : line + len;
		char *s = buf + strspn(buf, " \t");
		size_t sl = strlen(s);
		char *open = strrchr(s, '(');
		/* The last '+' splits, for modules such as libstdc++.so.6. */
		char *plus = open ? strrchr(open, '+') : NULL;
		if (!sl || s[sl - 1] != ')' || !plus) {
			if (*s && !fn(ctx, s, NULL, NULL, first))
				return;
			continue;
		}
		s[sl - 1] = '\0';
		*plus = '\0';
		*open = '\0';
		char *sym_end = open;
		while (sym_end > s && sym_end[-1] == ' ')
			*--sym_end = '\0';
		if (!fn(ctx, s, open + 1, plus + 1, first))
			return;
		first = false;
	}
}

static bool print_frame_text(void *ctx, const char *sym, const char *mod, const char *off,
                             bool first)
{
	bool top_is_pc = *(const bool *)ctx;
	if (mod)
		print_frame(mod, off, sym, !(top_is_pc && first));
	else
		printf("    %s\n", sym);
	return true;
}

void print_frames_text(const char *frames, bool top_is_pc)
{
	each_frame_text(frames, print_frame_text, &top_is_pc);
}

void modules_free(void)
{
	sym_close_all();
	for (size_t i = 0; i < nnoted; i++)
		free(noted[i]);
	free(noted);
	clear_dirs();
	free(user_dirs);
}
