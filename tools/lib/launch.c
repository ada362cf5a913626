/*
 * launch.c - what running a program under the shim needs: libgfpshim.so
 * found wherever the tools are, the program as execvp finds it, and whether
 * LD_PRELOAD can reach it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gfp_build.h"
#include "launch.h"
#include "text.h"
#include "tool.h"

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* How many directories up from the configured bindir, then down which path,
 * the configured libdir is (/usr/local/bin and /usr/local/lib/x86_64-linux-gnu:
 * 1, "lib/x86_64-linux-gnu"): where an installed tree keeps the library
 * relative to the tools, wherever --destdir or a move put the tree. */
static size_t libdir_from_bindir(const char **down)
{
	const char *bin = GFP_BINDIR, *lib = GFP_LIBDIR;
	size_t common = 0, i = 0;
	for (; bin[i] && bin[i] == lib[i]; i++)
		if (bin[i] == '/')
			common = i + 1;
	if (!bin[i] && (!lib[i] || lib[i] == '/')) {
		*down = lib + i + (lib[i] == '/');
		return 0;
	}
	size_t up = 1;
	for (const char *p = bin + common; *p; p++)
		up += *p == '/';
	*down = lib + common;
	return up;
}

/* The i-th directory the library may be in, for i from 0; false past the
 * last, "" for one that does not apply. The tool's own path is the real one
 * (/proc/self/exe has its symlinks resolved), so /usr/local/bin/gfp-run
 * linked to /opt/gfpshim/bin/gfp-run looks in /opt/gfpshim/lib, and
 * dropping a trailing component is the same as "..". */
static bool library_dir(size_t i, char *out, size_t n)
{
	const char *down = "";
	size_t up = libdir_from_bindir(&down);
	/* The build tree's build/tools/../preload, beside the tool, the
	 * installed layout (../lib/<multiarch>), ../lib. */
	const struct {
		size_t up;
		const char *down;
	} rel[] = {{1, "preload"}, {0, ""}, {up, down}, {1, "lib"}};
	size_t nrel = sizeof(rel) / sizeof(rel[0]);
	out[0] = '\0';
	if (i == nrel) {
		snprintf(out, n, "%s", GFP_LIBDIR);
		return true;
	}
	if (i > nrel)
		return false;
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0 || exe[0] != '/')
		return true;
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	for (size_t k = 0; k < rel[i].up; k++) {
		char *slash = strrchr(exe, '/');
		if (!slash)
			return true;
		*slash = '\0';
	}
	int w = snprintf(out, n, "%s%s%s", exe, rel[i].down[0] ? "/" : "", rel[i].down);
	if (w < 0 || (size_t)w >= n)
		out[0] = '\0';
	return true;
}

/* Whether dir is one of the first i directories (a libdir of lib makes the
 * installed layout and ../lib one place). */
static bool library_dir_seen(size_t i, const char *dir)
{
	char earlier[PATH_MAX];
	for (size_t k = 0; k < i && library_dir(k, earlier, sizeof(earlier)); k++)
		if (strcmp(earlier, dir) == 0)
			return true;
	return false;
}

bool launch_find_library(char *out, size_t n)
{
	char dir[PATH_MAX];
	for (size_t i = 0; library_dir(i, dir, sizeof(dir)); i++) {
		int w = snprintf(out, n, "%s/%s", dir, LIB_NAME);
		if (dir[0] && w > 0 && (size_t)w < n && is_file(out))
			return true;
	}
	return false;
}

/* The n strings as shell words, separated by ", ": one line of a message
 * whatever bytes they hold. Freed by the caller. */
static char *shell_words(const char *const *s, size_t n)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	if (!f)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		text_shell_quote(f, s[i]);
	}
	if (fclose(f) != 0)
		die(EXIT_USAGE, "out of memory");
	return text;
}

void launch_library_missing(char *out, size_t n)
{
	char dirs[8][PATH_MAX];
	const char *named[8];
	size_t count = 0;
	for (size_t i = 0; count < 8 && library_dir(i, dirs[count], sizeof(dirs[count])); i++)
		if (dirs[count][0] && !library_dir_seen(i, dirs[count])) {
			named[count] = dirs[count];
			count++;
		}
	char *places = shell_words(named, count);
	snprintf(out, n,
	         "cannot find %s in %s (build it with 'meson compile -C build', install it with "
	         "'meson install', or pass --lib PATH)",
	         LIB_NAME, places);
	free(places);
}

/* PROG as execvp would find it, for the checks below. */
bool launch_resolve(const char *prog, char *out, size_t n)
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
bool launch_is_static_elf(const char *path)
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

/* ld.so splits LD_PRELOAD at spaces and colons and LD_LIBRARY_PATH at colons
 * and semicolons, with no escape: a library whose path has a space is
 * preloaded by its name, from its directory put first in LD_LIBRARY_PATH. */
bool launch_can_preload(const char *lib, char *why, size_t n)
{
	const char *slash = strrchr(lib, '/');
	bool ok = !strchr(lib, ':');
	if (ok && strchr(lib, ' ')) {
		ok = slash && !strchr(slash, ' ');
		for (const char *p = lib; ok && p < slash; p++)
			ok = *p != ';';
	}
	if (!ok) {
		char *word = shell_words(&lib, 1);
		snprintf(why, n,
		         "LD_PRELOAD cannot name %s (ld.so splits it at spaces and colons), nor "
		         "LD_LIBRARY_PATH its directory: pass --lib with a path (or a symlink) "
		         "without them",
		         word);
		free(word);
	}
	return ok;
}

void launch_set_preload(const char *lib)
{
	const char *slash = strrchr(lib, '/');
	if (slash && strchr(lib, ' ')) {
		const char *old = getenv("LD_LIBRARY_PATH");
		char dirs[2 * PATH_MAX];
		snprintf(dirs, sizeof(dirs), "%.*s%s%s", (int)(slash - lib), lib,
		         old && *old ? ":" : "", old && *old ? old : "");
		setenv("LD_LIBRARY_PATH", dirs, 1);
		lib = slash + 1;
	}
	const char *old = getenv("LD_PRELOAD");
	char preload[2 * PATH_MAX];
	if (old && *old)
		snprintf(preload, sizeof(preload), "%s:%s", lib, old);
	else
		snprintf(preload, sizeof(preload), "%s", lib);
	setenv("LD_PRELOAD", preload, 1);
}
