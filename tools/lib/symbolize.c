/*
 * symbolize.c - source lines for frames with libdwfl: one Dwfl per module
 * file, reported at its own link-time addresses, so that a recorded offset
 * from the module's start (dladdr's dli_fbase) becomes an address by adding
 * the module's low end. A module known only by its build-id is reported at
 * 0 and libdwfl finds its file: the same arithmetic.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "demangle.h"
#include "symbolize.h"
#include "text.h"
#include "tool.h"

struct sym_module {
	char *key;  /* the path, or "build-id:HEX" */
	Dwfl *dwfl; /* NULL: the file is not an ELF libdwfl could read */
	Dwfl_Module *mod;
	Dwarf_Addr start, end;
	char build_id[129]; /* "" until asked */
	bool build_id_known;
};

static struct sym_module **modules;
static size_t nmodules;
/* Paths made here for sym_loc (full_path), freed with the modules. */
static char **paths;
static size_t npaths;
/* ------------------------------------------------------------------------
 * Where separate debug information is looked for
 * ---------------------------------------------------------------------- */

static const char default_debug_dir[] = "/usr/lib/debug";
static char **debug_dirs; /* the user's, in order */
static size_t ndebug_dirs;
/* libdwfl's search path: the module's own directory, its .debug/, the
 * user's trees, /usr/lib/debug (libdwfl's default without the user's). */
static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_callbacks = {
    /* For a module reported by build-id alone: .build-id/xx/rest in the
     * path's trees, then debuginfod. */
    .find_elf = dwfl_build_id_find_elf,
    /* The module's own .debug_info, then .gnu_debuglink and build-id files
     * under the debug directories (Debian's -dbg and -dbgsym packages),
     * then debuginfod when DEBUGINFOD_URLS is set. */
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

void sym_debug_dir_add(const char *dir)
{
	char **grown = realloc(debug_dirs, (ndebug_dirs + 1) * sizeof(*debug_dirs));
	if (!grown)
		die(EXIT_USAGE, "out of memory");
	debug_dirs = grown;
	/* libdwfl skips relative directories in its path. */
	char *real = realpath(dir, NULL);
	debug_dirs[ndebug_dirs++] = real ? real : xstrdup(dir);
	size_t n = sizeof(":.debug:") + sizeof(default_debug_dir);
	for (size_t i = 0; i < ndebug_dirs; i++)
		n += strlen(debug_dirs[i]) + 1;
	free(debuginfo_path);
	debuginfo_path = xcalloc(1, n);
	strcpy(debuginfo_path, ":.debug:");
	for (size_t i = 0; i < ndebug_dirs; i++)
		strcat(strcat(debuginfo_path, debug_dirs[i]), ":");
	strcat(debuginfo_path, default_debug_dir);
}

/* ------------------------------------------------------------------------
 * Opening modules, each once
 * ---------------------------------------------------------------------- */

/* The module of key opened before (NULL if it could not be), true; or
 * false and a new slot for it in *m. */
static bool cached(const char *key, struct sym_module **m)
{
	for (size_t i = 0; i < nmodules; i++)
		if (strcmp(modules[i]->key, key) == 0) {
			*m = modules[i]->dwfl ? modules[i] : NULL;
			return true;
		}
	struct sym_module **grown = realloc(modules, (nmodules + 1) * sizeof(*modules));
	if (!grown)
		die(EXIT_USAGE, "out of memory");
	modules = grown;
	*m = modules[nmodules++] = xcalloc(1, sizeof(**m));
	(*m)->key = xstrdup(key);
	return false;
}

struct sym_module *sym_open(const char *path, const char *name)
{
	struct sym_module *m;
	if (cached(path, &m))
		return m;
	m->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!m->dwfl)
		return NULL;
	dwfl_report_begin(m->dwfl);
	/* Base 0 with add_p_vaddr: a DSO or PIE sits at its link-time
	 * addresses, like an ET_EXEC, and start is its first PT_LOAD. */
	m->mod = dwfl_report_elf(m->dwfl, name, path, -1, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		tool_warning("%s: not an ELF file libdw can read (%s); its frames keep their "
		             "recorded names",
		             path, dwfl_errmsg(-1));
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		return NULL;
	}
	dwfl_module_info(m->mod, NULL, &m->start, &m->end, NULL, NULL, NULL, NULL);
	return m;
}

const char *sym_build_id(const struct sym_module *cm)
{
	struct sym_module *m = (struct sym_module *)cm; /* a cache, not a change */
	if (!m->build_id_known) {
		const unsigned char *bits = NULL;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
		for (int i = 0; i < n && (size_t)i < (sizeof(m->build_id) - 1) / 2; i++)
			sprintf(m->build_id + 2 * i, "%02x", bits[i]);
		m->build_id_known = true;
	}
	return m->build_id;
}

const char *sym_path(const struct sym_module *m)
{
	return strncmp(m->key, "build-id:", 9) != 0 ? m->key : NULL;
}

/* hex as bytes in id[0..64); its length, 0 when it is no build-id. */
static size_t build_id_bytes(const char *hex, unsigned char *id)
{
	size_t n = strlen(hex);
	if (n < 2 || n % 2 || n > 128 || strspn(hex, "0123456789abcdef") != n)
		return 0;
	for (size_t i = 0; i < n / 2; i++)
		sscanf(hex + 2 * i, "%2hhx", &id[i]);
	return n / 2;
}

/* A separate debug file under a tree: .build-id/xx/rest.debug, the way
 * Debian's -dbgsym packages install it. libdwfl looks for it only once it
 * has the module's own file, so it is looked for here. */
static struct sym_module *open_debug_file(const char *hex, const char *name)
{
	for (size_t i = 0; i <= ndebug_dirs; i++) {
		const char *dir = i < ndebug_dirs ? debug_dirs[i] : default_debug_dir;
		char path[4096];
		struct stat st;
		int w =
		    snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
		if (w <= 0 || (size_t)w >= sizeof(path) || stat(path, &st) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		struct sym_module *m = sym_open(path, name);
		if (m && strcmp(sym_build_id(m), hex) == 0)
			return m;
	}
	return NULL;
}

struct sym_module *sym_open_build_id(const char *hex, const char *name)
{
	unsigned char id[64];
	size_t idlen = build_id_bytes(hex, id);
	if (!idlen)
		return NULL;
	struct sym_module *m = open_debug_file(hex, name);
	if (m)
		return m;
	char key[sizeof("build-id:") + 128];
	snprintf(key, sizeof(key), "build-id:%s", hex);
	if (cached(key, &m))
		return m;
	m->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!m->dwfl)
		return NULL;
	/* A module at 0 with the build-id: dwfl_build_id_find_elf opens
	 * .build-id/xx/rest under the debug path, else asks debuginfod (which
	 * does nothing unless DEBUGINFOD_URLS is set). Its bias becomes 0
	 * minus the file's first PT_LOAD, so offsets are addresses. The end is
	 * unknown until then: past any offset. */
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_module(m->dwfl, name, 0, (Dwarf_Addr)1 << 47);
	bool ok = m->mod && dwfl_module_report_build_id(m->mod, id, idlen, 0) == 0;
	dwfl_report_end(m->dwfl, NULL, NULL);
	Dwarf_Addr bias;
	if (!ok || !dwfl_module_getelf(m->mod, &bias)) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		return NULL;
	}
	m->start = 0;
	m->end = (Dwarf_Addr)1 << 47;
	snprintf(m->build_id, sizeof(m->build_id), "%s", hex);
	m->build_id_known = true;
	return m;
}

void sym_close_all(void)
{
	for (size_t i = 0; i < nmodules; i++) {
		if (modules[i]->dwfl)
			dwfl_end(modules[i]->dwfl);
		free(modules[i]->key);
		free(modules[i]);
	}
	free(modules);
	modules = NULL;
	nmodules = 0;
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	paths = NULL;
	npaths = 0;
	demangle_free();
}

bool sym_library_file(const char *file)
{
	/* The C and C++ libraries' headers, the compiler's own (its
	 * intrinsics, libstdc++ and libc++ wherever they are installed). */
	static const char *const dirs[] = {"/usr/include/", "/usr/local/include/", "/usr/lib/gcc/",
	                                   "/usr/lib/llvm-"};
	if (!file)
		return false;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strncmp(file, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return strstr(file, "/include/c++/") != NULL;
}

/* ------------------------------------------------------------------------
 * Looking an offset up
 * ---------------------------------------------------------------------- */

static bool address(const struct sym_module *m, unsigned long long off, bool return_address,
                    Dwarf_Addr *addr)
{
	*addr = m->start + off - (return_address && off > 0);
	return *addr < m->end;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* dir/file with "." and "dir/.." taken out, as the compiler meant it. */
static char *join(const char *dir, const char *file)
{
	size_t n = strlen(dir) + strlen(file) + 2;
	char *in = xcalloc(1, n), *out = xcalloc(1, n + 1);
	snprintf(in, n, "%s/%s", dir, file);
	size_t len = 0;
	for (char *save = NULL, *p = strtok_r(in, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
		if (strcmp(p, "..") == 0) {
			while (len && out[len - 1] != '/')
				len--;
			len -= len > 0;
		} else if (strcmp(p, ".") != 0) {
			len += (size_t)sprintf(out + len, "/%s", p);
		}
		out[len] = '\0';
	}
	free(in);
	return out;
}

/* file as a path from the root: the debug information names files relative
 * to the compilation's directory (gcc's "../src/a.c"). */
static const char *full_path(Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute at;
	const char *dir = file && file[0] != '/' && cu
	                      ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at))
	                      : NULL;
	if (!dir || dir[0] != '/')
		return file;
	char *full = join(dir, file);
	for (size_t i = 0; i < npaths; i++)
		if (strcmp(paths[i], full) == 0) {
			free(full);
			return paths[i];
		}
	char **grown = realloc(paths, (npaths + 1) * sizeof(*paths));
	if (!grown)
		die(EXIT_USAGE, "out of memory");
	paths = grown;
	return paths[npaths++] = full;
}

/* Where a frame is in the source: its address, line, compile unit and the
 * scopes around it, innermost first (dies is the caller's to free, and may
 * be empty). */
struct scope {
	Dwarf_Addr addr;
	int line, n;
	Dwarf_Die *cu, *dies;
};

/* The frame's source file, NULL when the line table has none for it. */
static const char *frame_scopes(const struct sym_module *m, unsigned long long off,
                                bool return_address, struct scope *sc)
{
	if (!address(m, off, return_address, &sc->addr))
		return NULL;
	Dwfl_Line *line = dwfl_module_getsrc(m->mod, sc->addr);
	sc->line = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &sc->line, NULL, NULL, NULL) : NULL;
	if (!file || sc->line <= 0)
		return NULL;
	Dwarf_Addr bias = 0;
	sc->cu = dwfl_module_addrdie(m->mod, sc->addr, &bias);
	sc->dies = NULL;
	sc->n = sc->cu ? dwarf_getscopes(sc->cu, sc->addr - bias, &sc->dies) : 0;
	/* By address, the function an inlined copy sits in can be missing (a
	 * main split into .text.startup); the DIE tree above the innermost
	 * scope always has it, as elfutils' addr2line -i does. */
	if (sc->n > 0) {
		Dwarf_Die inner = sc->dies[0], *tree = NULL;
		int ntree = dwarf_getscopes_die(&inner, &tree);
		if (ntree > 0) {
			free(sc->dies);
			sc->dies = tree;
			sc->n = ntree;
		}
	}
	return file;
}

/* A function's name as people read it: its linkage name demangled
 * ("ns::Class::method(int)", as ASan and valgrind print it), through the
 * declaration an inlined copy or an out-of-line definition points to; else
 * the name the source gave it (C's, which has no other). */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &at));
	if (!linkage)
		linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at));
	const char *plain = demangle_name(linkage);
	return plain && plain != linkage ? plain : dwarf_diename(die);
}

/* The inner function at the address's line, each caller at the line its
 * inlined copy was called from. */
bool sym_locate(struct sym_module *m, unsigned long long off, bool return_address,
                struct sym_loc *out)
{
	struct scope sc;
	const char *file = frame_scopes(m, off, return_address, &sc);
	memset(out, 0, sizeof(*out));
	if (!file)
		return false;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (sc.cu && dwarf_getsrcfiles(sc.cu, &files, &nfiles) != 0)
		files = NULL;
	size_t named = 0;
	for (int i = 0; i < sc.n; i++) {
		int tag = dwarf_tag(&sc.dies[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		struct sym_place p = {die_name(&sc.dies[i]), full_path(sc.cu, file), sc.line};
		if (named++ == 0) {
			out->at = p;
		} else {
			struct sym_place *grown = realloc(
			    out->inlined_into, (out->ninlined + 1) * sizeof(*out->inlined_into));
			if (!grown)
				die(EXIT_USAGE, "out of memory");
			out->inlined_into = grown;
			out->inlined_into[out->ninlined++] = p;
		}
		if (tag == DW_TAG_subprogram)
			break;
		Dwarf_Attribute at;
		Dwarf_Word fi = 0, cl = 0;
		if (dwarf_formudata(dwarf_attr(&sc.dies[i], DW_AT_call_file, &at), &fi) != 0 ||
		    dwarf_formudata(dwarf_attr(&sc.dies[i], DW_AT_call_line, &at), &cl) != 0)
			break;
		file = files && fi < nfiles ? dwarf_filesrc(files, fi, NULL, NULL) : NULL;
		sc.line = (int)cl;
	}
	free(sc.dies);
	/* A line table without a DIE for the function (assembly). */
	if (!named)
		out->at = (struct sym_place){demangle_name(dwfl_module_addrname(m->mod, sc.addr)),
		                             full_path(sc.cu, file), sc.line};
	return true;
}

void sym_loc_text(const struct sym_loc *loc, char *out, size_t n, size_t *len)
{
	for (size_t i = 0; i <= loc->ninlined; i++) {
		const struct sym_place *p = i ? &loc->inlined_into[i - 1] : &loc->at;
		text_append(out, n, len, "%s", i ? " < " : "");
		demangle_short(p->function ? p->function : "??", out, n, len);
		text_append(out, n, len, " %s:%d", p->file ? base_name(p->file) : "??", p->line);
	}
}

bool sym_tag(struct sym_module *m, unsigned long long off, bool return_address, const char *module,
             char *out, size_t n, size_t *len)
{
	struct sym_loc loc;
	if (!sym_locate(m, off, return_address, &loc))
		return false;
	text_append(out, n, len, "%s:%d [%s] func:%s", base_name(loc.at.file), loc.at.line, module,
	            loc.at.function ? loc.at.function : "?");
	free(loc.inlined_into);
	return true;
}

const char *sym_symbol(struct sym_module *m, unsigned long long off, bool return_address,
                       unsigned long long *in_fn)
{
	Dwarf_Addr addr;
	GElf_Off fn_off = 0;
	GElf_Sym sym;
	const char *fn = address(m, off, return_address, &addr)
	                     ? dwfl_module_addrinfo(m->mod, addr, &fn_off, &sym, NULL, NULL, NULL)
	                     : NULL;
	/* The offset of the return address itself, as the record has it. */
	*in_fn = (unsigned long long)fn_off + (return_address && off > 0);
	return demangle_name(fn);
}

/* The greatest function start <= pc in the binary search table of
 * .eh_frame_hdr (PT_GNU_EH_FRAME): sorted (start, FDE) pairs, as
 * gcc and lld write them (DW_EH_PE_datarel | DW_EH_PE_sdata4). */
static bool hdr_start(Elf *elf, GElf_Addr pc, GElf_Addr *start)
{
	size_t nph = 0;
	if (elf_getphdrnum(elf, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		Elf_Data *d =
		    elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		const unsigned char *h = d ? d->d_buf : NULL;
		/* version 1; the count udata4, the table datarel|sdata4 */
		if (!h || d->d_size < 12 || h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
			return false;
		uint32_t count;
		memcpy(&count, h + 8, 4);
		if (count == 0 || 12 + (size_t)count * 8 > d->d_size)
			return false;
		size_t lo = 0, hi = count; /* entries [lo, hi) may start after pc */
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			int32_t v;
			memcpy(&v, h + 12 + mid * 8, 4);
			if (ph.p_vaddr + (GElf_Addr)(int64_t)v <= pc)
				lo = mid;
			else
				hi = mid;
		}
		int32_t v;
		memcpy(&v, h + 12 + lo * 8, 4);
		*start = ph.p_vaddr + (GElf_Addr)(int64_t)v;
		return *start <= pc;
	}
	return false;
}

bool sym_cfi_function(struct Dwfl_Module *m, unsigned long long addr, unsigned long long *start)
{
	/* An FDE covers addr (the CFI says so) and the search table gives the
	 * start of the one that does: a row of the CFI is only a part of it. */
	Dwarf_Addr bias = 0, ebias = 0;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(m, &bias);
	Elf *elf = dwfl_module_getelf(m, &ebias);
	Dwarf_Frame *fr = NULL;
	GElf_Addr at;
	if (!cfi || !elf || addr < bias || addr < ebias ||
	    dwarf_cfi_addrframe(cfi, addr - bias, &fr) != 0)
		return false;
	free(fr);
	if (!hdr_start(elf, addr - ebias, &at))
		return false;
	*start = at + ebias;
	return true;
}

bool sym_function_start(struct sym_module *m, unsigned long long off, bool return_address,
                        unsigned long long *start)
{
	Dwarf_Addr addr;
	unsigned long long at;
	if (!m->mod || !address(m, off, return_address, &addr) ||
	    !sym_cfi_function(m->mod, addr, &at) || at < m->start)
		return false;
	*start = at - m->start;
	return true;
}

bool sym_name(struct sym_module *m, unsigned long long off, bool return_address, char *out,
              size_t n, size_t *len)
{
	unsigned long long in_fn;
	const char *fn = sym_symbol(m, off, return_address, &in_fn);
	if (!fn)
		return false;
	demangle_short(fn, out, n, len);
	text_append(out, n, len, "+%#llx", in_fn);
	return true;
}
