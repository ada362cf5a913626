/*
 * elf_text.h - elf_text.c: what the shim reads of a loaded object's ELF
 * image: its text, and the addresses in its dynamic section.
 */
#ifndef GFP_ELF_TEXT_H
#define GFP_ELF_TEXT_H

#include <link.h>

#include "types.h"

#pragma GCC visibility push(hidden)

/* An object's executable segments, as one range; 0, 0 if it has none. */
struct dl_phdr_info;
struct gfp_range elf_text_of(const struct dl_phdr_info *info);

/* The address an entry of map's dynamic section holds (DT_STRTAB, ...):
 * ld.so relocates these in place where the section is writable, as on
 * x86-64, and leaves offsets where it is not (the vDSO's); an offset is
 * below the base. */
static inline ElfW(Addr) elf_dyn_addr(const struct link_map *map, ElfW(Addr) d_ptr)
{
	return d_ptr < map->l_addr ? d_ptr + map->l_addr : d_ptr;
}

#pragma GCC visibility pop

#endif /* GFP_ELF_TEXT_H */
