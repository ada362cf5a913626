/* Flag names (src/flags.c): every name parses to its bits and prints back
 * as itself, in any case, with hex for what has no name; one base context
 * at most; the unknown word is pointed at. */
#include <string.h>

#include "check.h"
#include "policy.h"

static const char *const bases[] = {"KERNEL", "NOFS", "NOIO", "ATOMIC", "NOWAIT"};
static const char *const modifiers[] = {"NORETRY", "RETRY_MAYFAIL", "NOFAIL",     "NOWARN",
                                        "HIGH",    "MEMALLOC",      "NOMEMALLOC", "ZERO"};

static gfp_t parsed(const char *s)
{
	gfp_t f = 0;
	const char *bad = NULL;
	size_t badlen = 0;
	CHECK(gfp_flags_parse(s, strlen(s), &f, &bad, &badlen) == 0);
	return f;
}

int main(void)
{
	char buf[128];
	/* Each base prints as its own name (NOWAIT: as ATOMIC's bits but HIGH,
	 * which it is, so its name is its own). */
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		gfp_flags_name(parsed(bases[i]), buf, sizeof(buf));
		CHECK_STR(buf, bases[i]);
	}
	/* Each modifier alone means KERNEL | it, and prints so; the same in
	 * lower case. */
	for (size_t i = 0; i < sizeof(modifiers) / sizeof(modifiers[0]); i++) {
		char want[64], lower[64];
		gfp_t f = parsed(modifiers[i]);
		CHECK(f != GFP_KERNEL && (f & GFP_KERNEL) == GFP_KERNEL);
		gfp_flags_name(f, buf, sizeof(buf));
		strcpy(want, "KERNEL|");
		strcat(want, modifiers[i]);
		CHECK_STR(buf, want);
		size_t n = strlen(modifiers[i]);
		for (size_t j = 0; j <= n; j++)
			lower[j] = (char)(modifiers[i][j] >= 'A' && modifiers[i][j] <= 'Z'
			                      ? modifiers[i][j] | 0x20
			                      : modifiers[i][j]);
		CHECK(parsed(lower) == f);
	}
	/* Every base with every modifier: the name parses back to the bits. */
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++)
		for (size_t j = 0; j < sizeof(modifiers) / sizeof(modifiers[0]); j++) {
			char text[64];
			strcpy(text, bases[i]);
			strcat(text, "|");
			strcat(text, modifiers[j]);
			gfp_t f = parsed(text);
			gfp_flags_name(f, buf, sizeof(buf));
			CHECK(parsed(buf) == f);
		}

	gfp_t f = 0;
	const char *bad = NULL;
	size_t badlen = 0;
	const char *s = "NOFS|NOPE|NOFAIL";
	CHECK(gfp_flags_parse(s, strlen(s), &f, &bad, &badlen) == -1);
	CHECK(bad == s + 5 && badlen == 4);
	s = "NOFS|NOIO";
	CHECK(gfp_flags_parse(s, strlen(s), &f, &bad, &badlen) == -2);
	s = "KERNEL|ATOMIC";
	CHECK(gfp_flags_parse(s, strlen(s), &f, &bad, &badlen) == -2);
	s = "";
	CHECK(gfp_flags_parse(s, 0, &f, &bad, &badlen) != 0);
	/* Only the first len bytes count. */
	s = "NOFS|garbage";
	CHECK(gfp_flags_parse(s, 4, &f, &bad, &badlen) == 0 && f == GFP_NOFS);

	/* A name that does not fit is cut, NUL-terminated. */
	gfp_flags_name(GFP_NOIO | GFP_NOFAIL | GFP_NOWARN, buf, 8);
	CHECK(strlen(buf) < 8);
	return CHECK_DONE();
}
