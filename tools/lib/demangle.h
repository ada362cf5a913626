/*
 * demangle.h - function names as people read them: C++'s demangled, long
 * ones cut the way the console shows them; what gfp-report and gfp-sweep
 * print, spelled one way in both.
 */
#ifndef GFP_TOOLS_DEMANGLE_H
#define GFP_TOOLS_DEMANGLE_H

#include <stddef.h>

/* A C++ (Itanium ABI) name demangled with libstdc++'s __cxa_demangle, as
 * ASan and valgrind print it: "ns::Class::method(int)"; a template
 * function's with its return type. name itself when it is not mangled (C's
 * names) or the demangler refuses it; NULL for NULL. Lives until
 * demangle_free. */
const char *demangle_name(const char *name);
/* The longest name the console shows whole, and the longest it shows. */
#define DEMANGLE_SHORT_MAX     100
#define DEMANGLE_SHORT_LONGEST 160
/* name (demangled first) as the console shows it: whole up to
 * DEMANGLE_SHORT_MAX bytes; longer, its template argument lists cut to "<...>"
 * ("std::vector<...>::_M_realloc_insert<...>(__gnu_cxx::__normal_iterator
 * <...>, int&&)"), then if still over DEMANGLE_SHORT_LONGEST its parameters to
 * "(...)", then its end to "...". The reports that keep whole names (JSON)
 * take demangle_name's. Appended to out[0..n) at *len, as text_append
 * appends. */
void demangle_short(const char *name, char *out, size_t n, size_t *len);
/* A recorded symbol, "name+0xoff" or "name", with its name as
 * demangle_short gives it. */
void demangle_symbol(const char *symbol, char *out, size_t n, size_t *len);
/* Forgets every name demangled (sym_close_all calls it). */
void demangle_free(void);

#endif
