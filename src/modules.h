/*
 * modules.h - modules.c: the loaded objects frames name, with what a tool
 * needs to find their files again on another day or machine: full path and
 * build-id.
 */
#ifndef GFP_MODULES_H
#define GFP_MODULES_H

#include <stdint.h>

#include "policy.h"

#pragma GCC visibility push(hidden)

struct gfp_module {
	char name[64];     /* as frames name it: site_module's file name */
	char path[256];    /* full path; "" when it has no file (the vDSO) */
	char build_id[41]; /* lower-case hex; "" when it has none */
};

/* The module that holds ip, as a 1-based index into a table that only
 * grows (a module unloaded since keeps its entry); 0 when no module holds ip
 * or the table is busy or full. Allocation-free and lock-free, so that
 * records written from a signal handler may call it. */
unsigned modules_of(uintptr_t ip);
const struct gfp_module *modules_get(unsigned idx);
/* {"name":…,"path":…,"build_id":…}: one table entry as JSON. */
void modules_json(struct gfp_buf *b, unsigned idx);

#pragma GCC visibility pop

#endif /* GFP_MODULES_H */
