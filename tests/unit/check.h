/* check.h - the unit tests' only machinery: named checks that print what
 * differed and make the test exit 1. */
#ifndef GFP_CHECK_H
#define GFP_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (strcmp(a_, b_) != 0) {                                                         \
			fprintf(stderr, "%s:%d: '%s' != '%s'\n", __FILE__, __LINE__, a_, b_);     \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_DONE() (check_failures ? (fprintf(stderr, "%d checks failed\n", check_failures), 1) : 0)

#endif
