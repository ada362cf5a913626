/*
 * elf_text.h - elf_text.c: the text of a loaded object.
 */
#ifndef GFP_ELF_TEXT_H
#define GFP_ELF_TEXT_H

#include "types.h"

#pragma GCC visibility push(hidden)

/* An object's executable segments, as one range; 0, 0 if it has none. */
struct dl_phdr_info;
struct gfp_range elf_text_of(const struct dl_phdr_info *info);

#pragma GCC visibility pop

#endif /* GFP_ELF_TEXT_H */
