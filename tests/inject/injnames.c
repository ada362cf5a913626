/*
 * libinjnames.so - a function the dynamic symbol table does not name, right
 * after a large one it does, for frame names (doc/injection.md, Call sites).
 *
 * Built twice: libinjnames.so is linked with --strip-all, so .symtab is gone
 * and only the exported names_* functions have names (.dynsym);
 * libinjnames_full.so keeps .symtab, which names hidden_alloc too. Built with
 * -fno-toplevel-reorder, the functions lie in the order of this file:
 * hidden_alloc starts past the end of names_exported_big, which holds 8 KiB
 * of padding, so "nearest earlier symbol" calls hidden_alloc's frame
 * names_exported_big+0x20xx, an address that symbol does not contain.
 */
#include <stdlib.h>

#define EXPORT __attribute__((noinline, visibility("default")))

EXPORT void *names_call_hidden(size_t size);
EXPORT void names_exported_big(void);

void *volatile injnames_sink;

static void *hidden_alloc(size_t size);

/* Calls the static function, and works after the call: no tail call. */
EXPORT void *names_call_hidden(size_t size)
{
	void *p = hidden_alloc(size);

	injnames_sink = p;
	return p;
}

/* Never called; 8 KiB long. */
EXPORT void names_exported_big(void)
{
	__asm__ volatile(".skip 8192, 0x90");
}

__attribute__((noinline)) static void *hidden_alloc(size_t size)
{
	void *p = malloc(size);

	injnames_sink = p;
	return p;
}
