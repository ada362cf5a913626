/*
 * symbolize.h - source lines for frames, from a module's debug information
 * (elfutils' libdw), and function names as people read them (C++'s
 * demangled): what gfp-report and gfp-sweep print beside module+offset,
 * spelled one way in both (names as demangle.h spells them). Which file a
 * recorded module is (its path, its build-id, a search by name) is frame.c's
 * question.
 */
#ifndef GFP_TOOLS_SYMBOLIZE_H
#define GFP_TOOLS_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>

struct sym_module;

/* A tree laid out like /usr/lib/debug (.build-id/xx/rest[.debug], the
 * .gnu_debuglink files), searched before /usr/lib/debug, in the order
 * added; before the first module is opened. */
void sym_debug_dir_add(const char *dir);

/* The module file at path, recorded under `name`, opened once per path;
 * NULL (with one warning) when libdw cannot read it. */
struct sym_module *sym_open(const char *path, const char *name);
/* The module whose build-id is `hex` (lower-case): a file under a debug
 * directory's .build-id/ tree (a separate .debug file has the symbols and
 * lines too), else from a debuginfod server when the user set
 * DEBUGINFOD_URLS (through libdwfl); NULL when none has it. */
struct sym_module *sym_open_build_id(const char *hex, const char *name);
/* m's build-id in lower-case hex, "" when the file has none. */
const char *sym_build_id(const struct sym_module *m);
/* The file m was opened from; NULL for one libdwfl found by build-id. */
const char *sym_path(const struct sym_module *m);

/* A frame in m: `off` from the module's start, as records hold it. A return
 * address points after its call, possibly into the next line's code, so it
 * is looked up one byte back; the top of a crash is the faulting pc itself. */

/* A place in the source: the function and the line being executed in it.
 * function is the whole name, a C++ one demangled with its parameters
 * ("ns::Class::method(int)"); file is the path the debug information
 * names; NULL when unknown. */
struct sym_place {
	const char *function, *file;
	int line;
};
/* Where a frame is: `at` the innermost function (an inlined one's own name
 * and line), then the functions it was inlined into, each at the line of
 * the inlined call, outermost last. The strings live until sym_close_all;
 * inlined_into is the caller's to free. */
struct sym_loc {
	struct sym_place at;
	struct sym_place *inlined_into;
	size_t ninlined;
};
/* False when the module's line table does not know the address. */
bool sym_locate(struct sym_module *m, unsigned long long off, bool return_address,
                struct sym_loc *out);
/* loc as "func file:line", and for code inlined into it "inner file:line <
 * outer file:line", as addr2line -i lists it; functions as demangle_short
 * gives them, files by basename. Appends to out[0..n) at *len. */
void sym_loc_text(const struct sym_loc *loc, char *out, size_t n, size_t *len);
/* allocinfo's tag: "file:line [module] func:name"; false as sym_locate. */
bool sym_tag(struct sym_module *m, unsigned long long off, bool return_address, const char *module,
             char *out, size_t n, size_t *len);
/* The symbol table's function at the frame (the call's for a return
 * address), demangled, and the frame's offset in it in *in_fn; NULL when no
 * symbol covers it. */
const char *sym_symbol(struct sym_module *m, unsigned long long off, bool return_address,
                       unsigned long long *in_fn);
/* Where the function of the frame starts, as the module's call frame
 * information bounds it (the FDE that .eh_frame_hdr's table lists): an offset
 * from the module's start like off; false when no FDE covers the frame. A
 * stripped module's functions have no name but still have their FDE. */
bool sym_function_start(struct sym_module *m, unsigned long long off, bool return_address,
                        unsigned long long *start);
/* The same for a module of any Dwfl (a live process's): the start address
 * of the FDE that covers addr, an address of m's Dwfl. */
struct Dwfl_Module;
bool sym_cfi_function(struct Dwfl_Module *m, unsigned long long addr, unsigned long long *start);
/* The same as "symbol+0xoff", the name as demangle_short gives it,
 * appended like sym_loc_text; false when no symbol covers it. */
bool sym_name(struct sym_module *m, unsigned long long off, bool return_address, char *out,
              size_t n, size_t *len);

/* file (a path the debug information names) is a library's or the
 * compiler's header (/usr/include, libstdc++'s include/c++, gcc's and
 * clang's own): code inlined from it is not the program's own source. */
bool sym_library_file(const char *file);

void sym_close_all(void);

#endif
