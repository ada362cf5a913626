/*
 * symbolize.h - source lines for frames, from a module's debug information
 * (elfutils' libdw): what gfp-report and gfp-sweep print beside
 * module+offset, spelled one way in both.
 */
#ifndef GFP_TOOLS_SYMBOLIZE_H
#define GFP_TOOLS_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>

struct sym_module;

/* The module file at path, recorded under `name`, opened once per path;
 * NULL (with one warning) when libdw cannot read it. */
struct sym_module *sym_open(const char *path, const char *name);

/* A frame in m: `off` from the module's start, as records hold it. A return
 * address points after its call, possibly into the next line's code, so it
 * is looked up one byte back; the top of a crash is the faulting pc itself.
 * Each appends to out[0..n) at *len and returns false when it has nothing. */

/* "func file:line", and for code inlined into it "inner file:line < outer
 * file:line", as addr2line -i lists it. */
bool sym_chain(struct sym_module *m, unsigned long long off, bool return_address, char *out,
               size_t n, size_t *len);
/* allocinfo's tag: "file:line [module] func:name". */
bool sym_tag(struct sym_module *m, unsigned long long off, bool return_address, const char *module,
             char *out, size_t n, size_t *len);
/* "symbol+0xoff" from the symbol table (of the call for a return address). */
bool sym_name(struct sym_module *m, unsigned long long off, bool return_address, char *out,
              size_t n, size_t *len);

void sym_close_all(void);

#endif
