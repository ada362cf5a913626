/*
 * symbolize.c - source lines for frames with libdwfl: one Dwfl per module
 * file, reported at its own link-time addresses, so that a recorded offset
 * from the module's start (dladdr's dli_fbase) becomes an address by adding
 * the module's low end.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "symbolize.h"

struct sym_module {
	char *path;
	Dwfl *dwfl; /* NULL: the file is not an ELF libdwfl could read */
	Dwfl_Module *mod;
	Dwarf_Addr start, end;
};

static struct sym_module **modules;
static size_t nmodules;

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    /* The module's own .debug_info, then .gnu_debuglink and build-id files
     * under /usr/lib/debug (Debian's -dbg and -dbgsym packages). */
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p)
		die(EXIT_USAGE, "out of memory");
	return p;
}

struct sym_module *sym_open(const char *path, const char *name)
{
	for (size_t i = 0; i < nmodules; i++)
		if (strcmp(modules[i]->path, path) == 0)
			return modules[i]->dwfl ? modules[i] : NULL;
	struct sym_module **grown = realloc(modules, (nmodules + 1) * sizeof(*modules));
	if (!grown)
		return NULL;
	modules = grown;
	struct sym_module *m = modules[nmodules++] = xcalloc(1, sizeof(*m));
	m->path = strdup(path);
	m->dwfl = m->path ? dwfl_begin(&dwfl_callbacks) : NULL;
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

void sym_close_all(void)
{
	for (size_t i = 0; i < nmodules; i++) {
		if (modules[i]->dwfl)
			dwfl_end(modules[i]->dwfl);
		free(modules[i]->path);
		free(modules[i]);
	}
	free(modules);
	modules = NULL;
	nmodules = 0;
}

static bool address(const struct sym_module *m, unsigned long long off, bool return_address,
                    Dwarf_Addr *addr)
{
	*addr = m->start + off - (return_address && off > 0);
	return *addr < m->end;
}

static void add(char *out, size_t n, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *out, size_t n, size_t *len, const char *fmt, ...)
{
	if (*len >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(out + *len, n - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len = (size_t)w < n - *len ? *len + (size_t)w : n - 1;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
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

/* The inner function at the address's line, each caller at the line its
 * inlined copy was called from. */
bool sym_chain(struct sym_module *m, unsigned long long off, bool return_address, char *out,
               size_t n, size_t *len)
{
	struct scope sc;
	const char *file = frame_scopes(m, off, return_address, &sc);
	if (!file)
		return false;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (sc.cu && dwarf_getsrcfiles(sc.cu, &files, &nfiles) != 0)
		files = NULL;
	bool named = false;
	for (int i = 0; i < sc.n; i++) {
		int tag = dwarf_tag(&sc.dies[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		const char *fn = dwarf_diename(&sc.dies[i]);
		add(out, n, len, "%s%s %s:%d", named ? " < " : "", fn ? fn : "??", base_name(file),
		    sc.line);
		named = true;
		if (tag == DW_TAG_subprogram)
			break;
		Dwarf_Attribute at;
		Dwarf_Word fi = 0, cl = 0;
		if (dwarf_formudata(dwarf_attr(&sc.dies[i], DW_AT_call_file, &at), &fi) != 0 ||
		    dwarf_formudata(dwarf_attr(&sc.dies[i], DW_AT_call_line, &at), &cl) != 0)
			break;
		file = files && fi < nfiles ? dwarf_filesrc(files, fi, NULL, NULL) : NULL;
		if (!file)
			file = "??";
		sc.line = (int)cl;
	}
	free(sc.dies);
	if (!named) {
		/* A line table without a DIE for the function (assembly). */
		const char *fn = dwfl_module_addrname(m->mod, sc.addr);
		add(out, n, len, "%s %s:%d", fn ? fn : "??", base_name(file), sc.line);
	}
	return true;
}

bool sym_tag(struct sym_module *m, unsigned long long off, bool return_address, const char *module,
             char *out, size_t n, size_t *len)
{
	struct scope sc;
	const char *file = frame_scopes(m, off, return_address, &sc);
	if (!file)
		return false;
	const char *fn = NULL;
	for (int i = 0; i < sc.n && !fn; i++) {
		int tag = dwarf_tag(&sc.dies[i]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
			fn = dwarf_diename(&sc.dies[i]);
	}
	if (!fn)
		fn = dwfl_module_addrname(m->mod, sc.addr);
	add(out, n, len, "%s:%d [%s] func:%s", base_name(file), sc.line, module, fn ? fn : "?");
	free(sc.dies);
	return true;
}

bool sym_name(struct sym_module *m, unsigned long long off, bool return_address, char *out,
              size_t n, size_t *len)
{
	Dwarf_Addr addr;
	GElf_Off fn_off = 0;
	GElf_Sym sym;
	const char *fn = address(m, off, return_address, &addr)
	                     ? dwfl_module_addrinfo(m->mod, addr, &fn_off, &sym, NULL, NULL, NULL)
	                     : NULL;
	if (!fn)
		return false;
	/* The offset of the return address itself, as the record has it. */
	add(out, n, len, "%s+%#llx", fn, (unsigned long long)fn_off + (return_address && off > 0));
	return true;
}
