/*
 * frame.c - recorded frames made whole (frame.h): finding each module's
 * file once, and a frame's text and JSON. It warns and notes on stderr,
 * once per module; it never prints a frame anywhere it was not asked to.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "text.h"
#include "frame.h"

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ------------------------------------------------------------------------
 * Directories searched by name
 * ---------------------------------------------------------------------- */

static char **dirs;
static size_t ndirs;
static const char *hint;

/* What frame_module found for a (name, path, build-id), until the
 * directories change. */
struct found {
	char *name, *path, *build_id;
	struct sym_module *m;
};
static struct found *found;
static size_t nfound;

/* Modules already warned or noted about: once per module, not per frame
 * or per file. */
static char **told;
static size_t ntold;

void frame_set_hint(const char *h)
{
	hint = h;
}

void frame_dir_add(const char *dir)
{
	for (size_t i = 0; i < ndirs; i++)
		if (strcmp(dirs[i], dir) == 0)
			return;
	dirs = xrealloc(dirs, (ndirs + 1) * sizeof(*dirs));
	dirs[ndirs++] = xstrdup(dir);
}

/* The directory of PROG as it would be run (a bare name goes through PATH). */
static void add_program_dir(const char *prog)
{
	char path[PATH_MAX];
	if (!prog || !*prog || !tool_resolve(prog, path, sizeof(path)))
		return;
	char *slash = strrchr(path, '/');
	if (slash == path)
		frame_dir_add("/");
	else if (slash) {
		*slash = '\0';
		frame_dir_add(path);
	}
}

void frame_dirs_default(const char *prog)
{
	static const char *const defaults[] = {".", "/lib/x86_64-linux-gnu",
	                                       "/usr/lib/x86_64-linux-gnu", "/usr/bin", "/bin"};
	add_program_dir(prog);
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		frame_dir_add(defaults[i]);
	/* The shim's own frames. */
	char lib[PATH_MAX], real[PATH_MAX];
	if (tool_find_library(lib, sizeof(lib)) && realpath(lib, real)) {
		char *slash = strrchr(real, '/');
		if (slash && slash != real) {
			*slash = '\0';
			frame_dir_add(real);
		}
	}
}

void frame_dirs_clear(void)
{
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	dirs = NULL;
	ndirs = 0;
	for (size_t i = 0; i < nfound; i++) {
		free(found[i].name);
		free(found[i].path);
		free(found[i].build_id);
	}
	free(found);
	found = NULL;
	nfound = 0;
}

void frame_close_all(void)
{
	frame_dirs_clear();
	for (size_t i = 0; i < ntold; i++)
		free(told[i]);
	free(told);
	told = NULL;
	ntold = 0;
	sym_close_all();
}

/* ------------------------------------------------------------------------
 * Finding a module's file
 * ---------------------------------------------------------------------- */

/* First time for name: true, and it is remembered. */
static bool first_time(const char *name)
{
	for (size_t i = 0; i < ntold; i++)
		if (strcmp(told[i], name) == 0)
			return false;
	told = xrealloc(told, (ntold + 1) * sizeof(*told));
	told[ntold++] = xstrdup(name);
	return true;
}

/* The file at path, if it is the build recorded; *changed when it is not. */
static struct sym_module *candidate(const char *path, const char *name, const char *build_id,
                                    bool *changed)
{
	struct sym_module *m = sym_open(path, name);
	if (m && build_id && strcmp(sym_build_id(m), build_id) != 0) {
		*changed = true;
		return NULL;
	}
	return m;
}

static void note_not_found(const char *name, const char *path, const char *build_id)
{
	if (!hint || !first_time(name))
		return;
	char why[8192] = "";
	size_t len = 0;
	if (path)
		len += (size_t)snprintf(why + len, sizeof(why) - len, "not at %s; ", path);
	if (build_id && len < sizeof(why))
		len += (size_t)snprintf(why + len, sizeof(why) - len, "no file of build-id %s; ",
		                        build_id);
	if (len < sizeof(why))
		len += (size_t)snprintf(why + len, sizeof(why) - len, "looked in");
	for (size_t i = 0; i < ndirs && len < sizeof(why); i++)
		len += (size_t)snprintf(why + len, sizeof(why) - len, " %s", dirs[i]);
	tool_note("%s not found (%s); %s", name, why, hint);
}

static struct sym_module *find(const char *name, const char *path, const char *build_id)
{
	bool changed = false;
	struct sym_module *m = NULL;
	/* The same machine: the file the process loaded, if it is still
	 * that build. */
	if (path && is_file(path))
		m = candidate(path, name, build_id, &changed);
	if (!m && build_id)
		m = sym_open_build_id(build_id, name);
	/* A recorded basename; anything else is not a name to look up. */
	bool plain = !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
	for (size_t i = 0; !m && plain && i < ndirs; i++) {
		char p[PATH_MAX];
		int w = snprintf(p, sizeof(p), "%s/%s", dirs[i], name);
		if (w > 0 && (size_t)w < sizeof(p) && is_file(p))
			m = candidate(p, name, build_id, &changed);
	}
	if (!m && changed && first_time(name))
		tool_warning("%s: file changed since the run (build-id %s), frames keep their "
		             "recorded names",
		             name, build_id);
	else if (!m && !changed)
		note_not_found(name, path, build_id);
	return m;
}

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

struct sym_module *frame_module(const char *name, const char *path, const char *build_id)
{
	if (!name || !*name || strcmp(name, "?") == 0)
		return NULL;
	for (size_t i = 0; i < nfound; i++)
		if (same(found[i].name, name) && same(found[i].path, path) &&
		    same(found[i].build_id, build_id))
			return found[i].m;
	struct sym_module *m = find(name, path, build_id);
	found = xrealloc(found, (nfound + 1) * sizeof(*found));
	found[nfound++] = (struct found){xstrdup(name), xstrdup(path), xstrdup(build_id), m};
	return m;
}

/* ------------------------------------------------------------------------
 * A frame: what its module's file says, as text and as JSON
 * ---------------------------------------------------------------------- */

void frame_resolve(const struct rec_frame *rec, bool return_address, struct frame_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->rec = *rec;
	fi->return_address = return_address;
	char *end = NULL;
	errno = 0;
	unsigned long long off = rec->offset ? strtoull(rec->offset, &end, 0) : 0;
	struct sym_module *m = NULL;
	if (rec->offset && end != rec->offset && !*end && errno == 0)
		m = frame_module(rec->module, rec->path, rec->build_id);
	fi->path = rec->path ? rec->path : m ? sym_path(m) : NULL;
	fi->build_id = rec->build_id           ? rec->build_id
	               : m && *sym_build_id(m) ? sym_build_id(m)
	                                       : NULL;
	size_t len = 0;
	if (m && sym_locate(m, off, return_address, &fi->loc)) {
		fi->located = true;
		snprintf(fi->function, sizeof(fi->function), "%s",
		         fi->loc.at.function ? fi->loc.at.function : "");
		sym_loc_text(&fi->loc, fi->desc, sizeof(fi->desc), &len);
		return;
	}
	char name[256] = "";
	size_t nlen = 0;
	if (m && sym_name(m, off, return_address, name, sizeof(name), &nlen))
		snprintf(fi->function, sizeof(fi->function), "%.*s", (int)strcspn(name, "+"), name);
	snprintf(fi->desc, sizeof(fi->desc), "%s",
	         rec->symbol && *rec->symbol ? rec->symbol : name);
}

void frame_info_free(struct frame_info *fi)
{
	free(fi->loc.inlined_into);
	fi->loc.inlined_into = NULL;
	fi->loc.ninlined = 0;
}

void frame_print(FILE *f, const struct frame_info *fi)
{
	if (fi->desc[0])
		fprintf(f, "    %s (%s+%s)\n", fi->desc, fi->rec.module, fi->rec.offset);
	else
		fprintf(f, "    %s+%s\n", fi->rec.module, fi->rec.offset);
}

static void str_or_null(FILE *f, const char *key, const char *s)
{
	fprintf(f, "\"%s\":", key);
	if (s && *s)
		text_json_str(f, s);
	else
		fputs("null", f);
}

static void place_json(FILE *f, const struct sym_place *p)
{
	str_or_null(f, "function", p->function);
	fputc(',', f);
	str_or_null(f, "file", p->file);
	if (p->line > 0)
		fprintf(f, ",\"line\":%d", p->line);
	else
		fputs(",\"line\":null", f);
}

void frame_json(FILE *f, const struct frame_info *fi)
{
	fputc('{', f);
	str_or_null(f, "module", fi->rec.module);
	fputc(',', f);
	str_or_null(f, "path", fi->path);
	fputc(',', f);
	str_or_null(f, "build_id", fi->build_id);
	fputc(',', f);
	str_or_null(f, "offset", fi->rec.offset);
	fputc(',', f);
	struct sym_place at = fi->located ? fi->loc.at : (struct sym_place){NULL, NULL, 0};
	at.function = fi->function;
	place_json(f, &at);
	fputs(",\"inlined_into\":[", f);
	for (size_t i = 0; i < fi->loc.ninlined; i++) {
		fputs(i ? ",{" : "{", f);
		place_json(f, &fi->loc.inlined_into[i]);
		fputc('}', f);
	}
	fputs("],", f);
	str_or_null(f, "symbol", fi->rec.symbol);
	fputc('}', f);
}

/* A {"function","file","line"} object into p; false without file and line. */
static bool place_read(const struct jval *o, struct sym_place *p)
{
	double line = 0;
	p->function = json_str(o, "function");
	p->file = json_str(o, "file");
	p->line = json_num(o, "line", &line) && line > 0 && line < 1e9 ? (int)line : 0;
	return p->file && p->line > 0;
}

bool frame_read_json(const struct jval *o, bool return_address, struct frame_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->return_address = return_address;
	if (!rec_frame_of(o, NULL, &fi->rec))
		return false;
	fi->path = fi->rec.path;
	fi->build_id = fi->rec.build_id;
	const char *fn = json_str(o, "function");
	snprintf(fi->function, sizeof(fi->function), "%s", fn ? fn : "");
	if (!place_read(o, &fi->loc.at))
		return false;
	const struct jval *inl = json_get(o, "inlined_into");
	size_t n = inl && inl->type == J_ARR ? inl->n : 0;
	fi->loc.inlined_into = xrealloc(NULL, (n ? n : 1) * sizeof(*fi->loc.inlined_into));
	for (size_t i = 0; i < n; i++)
		if (place_read(&inl->v[i], &fi->loc.inlined_into[fi->loc.ninlined]))
			fi->loc.ninlined++;
	fi->located = true;
	size_t len = 0;
	sym_loc_text(&fi->loc, fi->desc, sizeof(fi->desc), &len);
	return true;
}
