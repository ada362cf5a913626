/*
 * libfoo.h - the library under test of gfp-report's and gfp-sweep's frame
 * tests: a frame in a shared library, named by function and line like the
 * program's own.
 */
#ifndef GFP_TEST_LIBFOO_H
#define GFP_TEST_LIBFOO_H

/* A copy of s on the heap; NULL when malloc fails. */
/* Exported: the project builds with -fvisibility=hidden. */
__attribute__((visibility("default"))) char *dup_name(const char *s);

#endif
