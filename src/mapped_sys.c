/*
 * mapped_sys.c - the memory calls past the shim's wrappers: the next
 * definitions, which preload/mapcalls.c's constructor finds (mapped_sys.h).
 */
#include "mapped_sys.h"

struct mapped_next mapped_sys_next;
