/*
 * dest_export.c - GFP_INHERITED handed to the children, once the
 * configuration was read: the one part of the destinations that needs the
 * thread's guard (setenv allocates), apart, so that dest*.c and log.c
 * depend on nothing of the engine's. Nothing calls into this file: the
 * shim links the engine whole.
 */
#include <stdbool.h>

#include "thread.h"
#include "dest_inherit.h"

/* After the configuration was read (gfpshim_ctor runs at 101), outside
 * malloc: setenv allocates. */
__attribute__((constructor(102))) static void dest_export(void)
{
	char v[512];
	if (!gfp_dest_inherit_value(v, sizeof(v)))
		return;
	gfp_tls.guard++; /* the shim's own allocations: never failed, never counted */
	gfp_dest_inherit_export(v);
	gfp_tls.guard--;
}
