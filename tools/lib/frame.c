/*
 * frame.c - recorded frames made whole (frame.h): finding each module's
 * file once, a frame's text, title and JSON, and the hint of how to get
 * names for modules without. It warns and notes on stderr, once per
 * module; it never prints a frame anywhere it was not asked to.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "demangle.h"
#include "tool.h"
#include "text.h"
#include "frame.h"

extern char **environ;

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

/* Modules whose frames had no name, in the order met; hinted once
 * frame_names_hint named them. */
struct nameless {
	char *name, *path;
	bool hinted;
};
static struct nameless *nameless;
static size_t nnameless;

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
	if (!prog || !*prog || !launch_resolve(prog, path, sizeof(path)))
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
	if (launch_find_library(lib, sizeof(lib)) && realpath(lib, real)) {
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
	for (size_t i = 0; i < nnameless; i++) {
		free(nameless[i].name);
		free(nameless[i].path);
	}
	free(nameless);
	nameless = NULL;
	nnameless = 0;
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
 * Modules whose frames have no name: one hint of how to get names
 * ---------------------------------------------------------------------- */

static void note_nameless(const char *name, const char *path)
{
	for (size_t i = 0; i < nnameless; i++)
		if (strcmp(nameless[i].name, name) == 0)
			return;
	nameless = xrealloc(nameless, (nnameless + 1) * sizeof(*nameless));
	nameless[nnameless++] = (struct nameless){xstrdup(name), xstrdup(path), false};
}

/* The names dpkg may know path by: as it is, its real path, and each with
 * or without /usr in front (a merged /usr lists files under either). */
static size_t path_forms(const char *path, char forms[4][PATH_MAX])
{
	char real[PATH_MAX];
	const char *both[2] = {path, realpath(path, real) ? real : NULL};
	size_t n = 0;
	for (size_t b = 0; b < 2; b++) {
		if (!both[b] || both[b][0] != '/')
			continue;
		char other[PATH_MAX];
		const char *rest = strncmp(both[b], "/usr/", 5) == 0 ? both[b] + 4 : both[b];
		bool merged = false;
		static const char *const tops[] = {"/bin/", "/sbin/", "/lib/", "/lib64/",
		                                   "/libx32/"};
		for (size_t t = 0; t < sizeof(tops) / sizeof(tops[0]); t++)
			merged |= strncmp(rest, tops[t], strlen(tops[t])) == 0;
		int w = rest != both[b] ? snprintf(other, sizeof(other), "%s", rest)
		                        : snprintf(other, sizeof(other), "/usr%s", rest);
		const char *cand[2] = {both[b],
		                       merged && w > 0 && (size_t)w < sizeof(other) ? other : NULL};
		for (size_t c = 0; c < 2; c++) {
			bool dup = !cand[c] || strlen(cand[c]) >= PATH_MAX || strchr(cand[c], '\n');
			for (size_t k = 0; !dup && k < n; k++)
				dup = strcmp(forms[k], cand[c]) == 0;
			if (!dup)
				snprintf(forms[n++], PATH_MAX, "%s", cand[c]);
		}
	}
	return n;
}

/* What `dpkg-query -S PATH...` prints ("pkg[:arch][, pkg2]: path" lines),
 * within 10 seconds; NULL when it cannot run. argv[0] and argv[1] are set
 * here, the paths follow. */
static char *dpkg_search(char **argv)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	argv[0] = "dpkg-query";
	argv[1] = "-S";
	pid_t pid;
	int e = posix_spawnp(&pid, "dpkg-query", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (e != 0) {
		close(fds[0]);
		return NULL;
	}
	char *out = NULL;
	size_t len = 0, cap = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left =
		    10000 - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd pfd = {fds[0], POLLIN, 0};
		int ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) { /* its time is up: names are not worth a hang */
			kill(pid, SIGKILL);
			break;
		}
		if (cap - len < 4096)
			out = xrealloc(out, cap = cap * 2 + 4096);
		ssize_t r = read(fds[0], out + len, cap - len - 1);
		if (r > 0)
			len += (size_t)r;
		else if (r == 0 || errno != EINTR)
			break;
	}
	close(fds[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (out)
		out[len] = '\0';
	return out;
}

/* The package that installed path, from what dpkg_search printed; false
 * when none did. */
static bool package_of(const char *listing, const char *path, char *pkg, size_t n)
{
	char forms[4][PATH_MAX];
	size_t nforms = path_forms(path, forms);
	for (const char *line = listing; line && *line;) {
		size_t ll = strcspn(line, "\n");
		const char *sep = memmem(line, ll, ": /", 3);
		for (size_t k = 0; sep && k < nforms; k++) {
			size_t pl = strlen(forms[k]);
			if ((size_t)(line + ll - (sep + 2)) == pl &&
			    memcmp(sep + 2, forms[k], pl) == 0 &&
			    strncmp(line, "diversion by ", 13) != 0) {
				snprintf(pkg, n, "%.*s", (int)strcspn(line, ":, "), line);
				return pkg[0] != '\0';
			}
		}
		line += ll + (line[ll] == '\n');
	}
	return false;
}

void frame_names_hint(FILE *f)
{
	enum { SHOWN = 6 };
	size_t todo[SHOWN], ntodo = 0, more = 0;
	for (size_t i = 0; i < nnameless; i++)
		if (!nameless[i].hinted) {
			if (ntodo < SHOWN)
				todo[ntodo++] = i;
			else
				more++;
			nameless[i].hinted = true;
		}
	if (!ntodo)
		return;
	/* One dpkg-query for them all: it reads its whole database each time. */
	static char forms[SHOWN * 4][PATH_MAX];
	char *argv[2 + SHOWN * 4 + 1];
	size_t nforms = 0;
	for (size_t i = 0; i < ntodo; i++) {
		char mine[4][PATH_MAX];
		size_t k = nameless[todo[i]].path ? path_forms(nameless[todo[i]].path, mine) : 0;
		for (size_t j = 0; j < k; j++) {
			memcpy(forms[nforms], mine[j], PATH_MAX);
			argv[2 + nforms] = forms[nforms];
			nforms++;
		}
	}
	argv[2 + nforms] = NULL;
	char *listing = nforms ? dpkg_search(argv) : NULL;
	fputs("names: no symbols for ", f);
	bool packaged = false;
	for (size_t i = 0; i < ntodo; i++) {
		const struct nameless *m = &nameless[todo[i]];
		char pkg[256];
		fputs(i ? ", " : "", f);
		text_visible_put(f, m->name, strlen(m->name));
		if (m->path && listing && package_of(listing, m->path, pkg, sizeof(pkg))) {
			fputs(" (apt-get install ", f);
			text_visible_put(f, pkg, strlen(pkg));
			fputs("-dbgsym)", f);
			packaged = true;
		} else {
			fputs(" (in no package: build it with -g, unstripped)", f);
		}
	}
	if (more)
		fprintf(f, " and %zu more", more);
	fputs(": their frames read module+offset; ", f);
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (urls && *urls)
		fputs("DEBUGINFOD_URLS is set, and its servers had none", f);
	else if (packaged)
		fputs("-dbgsym packages come from the debian-debug archive, or set "
		      "DEBUGINFOD_URLS=https://debuginfod.debian.net to fetch them by build-id",
		      f);
	else
		fputs("or set DEBUGINFOD_URLS to a debuginfod server that has them, to fetch them "
		      "by build-id",
		      f);
	fputc('\n', f);
	free(listing);
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
	fi->function = "";
	fi->has_start = m && sym_function_start(m, off, return_address, &fi->start);
	if (m && sym_locate(m, off, return_address, &fi->loc)) {
		fi->located = true;
		fi->function = fi->loc.at.function ? fi->loc.at.function : "";
		sym_loc_text(&fi->loc, fi->desc, sizeof(fi->desc), &len);
		return;
	}
	unsigned long long in_fn = 0;
	const char *fn = m ? sym_symbol(m, off, return_address, &in_fn) : NULL;
	if (fn)
		fi->function = fn;
	if (rec->symbol && *rec->symbol)
		demangle_symbol(rec->symbol, fi->desc, sizeof(fi->desc), &len);
	else if (fn)
		sym_name(m, off, return_address, fi->desc, sizeof(fi->desc), &len);
	else if (m)
		note_nameless(rec->module, fi->path);
}

/* ------------------------------------------------------------------------
 * Titles: the program's own source, not the library's headers
 * ---------------------------------------------------------------------- */

const struct sym_place *frame_title_place(const struct frame_info *fi)
{
	for (size_t i = 0; fi->located && i <= fi->loc.ninlined; i++) {
		const struct sym_place *p = i ? &fi->loc.inlined_into[i - 1] : &fi->loc.at;
		if (p->file && !sym_library_file(p->file))
			return p;
	}
	return NULL;
}

bool frame_title(const struct frame_info *fi, char *out, size_t n)
{
	const struct sym_place *own = frame_title_place(fi), *p = own;
	if (!p && fi->located) /* all library code: the function it is in */
		p = fi->loc.ninlined ? &fi->loc.inlined_into[fi->loc.ninlined - 1] : &fi->loc.at;
	size_t len = 0;
	out[0] = '\0';
	if (p) {
		const char *base = p->file ? strrchr(p->file, '/') : NULL;
		demangle_short(p->function ? p->function : "??", out, n, &len);
		snprintf(out + len, n - len, " %s:%d",
		         base      ? base + 1
		         : p->file ? p->file
		                   : "??",
		         p->line);
	} else if (fi->desc[0]) {
		snprintf(out, n, "%s (%s+%s)", fi->desc, fi->rec.module, fi->rec.offset);
	} else {
		snprintf(out, n, "%s+%s", fi->rec.module, fi->rec.offset);
	}
	return own != NULL;
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
	fi->function = "";
	if (!rec_frame_of(o, NULL, &fi->rec))
		return false;
	fi->path = fi->rec.path;
	fi->build_id = fi->rec.build_id;
	const char *fn = json_str(o, "function");
	fi->function = fn ? fn : "";
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
