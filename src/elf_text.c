/*
 * elf_text.c - the text of a loaded object: the range its executable
 * segments span, from its program headers. For site.c (the shim, ld.so,
 * libc) and backend.c (jemalloc).
 *
 * A leaf: it calls nothing of the shim's, and never allocates.
 */
#include <link.h>
#include <stdint.h>

#include "elf_text.h"

struct gfp_range elf_text_of(const struct dl_phdr_info *info)
{
	struct gfp_range r = {UINTPTR_MAX, 0};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		r.start = start < r.start ? start : r.start;
		r.end = end > r.end ? end : r.end;
	}
	return r.end ? r : (struct gfp_range){0, 0};
}
