/*
 * entries.c - the names of the entry points (entries.def), as records,
 * injection reports and the report's totals print them (types.h declares
 * them).
 *
 * A leaf: data only.
 */
#include "types.h"

const char *const gfp_entry_name[GFP_ENTRY_COUNT] = {
#define ENTRY(id, name, kind) name,
#include "entries.def"
#undef ENTRY
};
