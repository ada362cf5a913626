/* glob_match against fnmatch(3) with no flags in the C locale: named cases
 * for each feature, then many random patterns and strings over an alphabet
 * rich in the bytes that mean something in a pattern. And glob_match must
 * not allocate, whatever the locale: it runs inside malloc. */
#include <fnmatch.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "internal.h"

static int mismatches;

static void same(const char *pat, const char *s)
{
	bool want = fnmatch(pat, s, 0) == 0, got = glob_match(pat, s);
	if (want != got && mismatches++ < 20)
		fprintf(stderr, "glob_match('%s', '%s') = %d, fnmatch says %d\n", pat, s, got,
		        want);
}

/* What the shim's users write, and what each feature means. */
static const char *const patterns[] = {
    "png_*",
    "*strdup*",
    "stack_?eta_alloc",
    "libc.so*",
    "libxml2.so*",
    "nomatch*",
    "worker-[0-9]",
    "worker-[!0-9]",
    "worker-[^0-9]",
    "[a-c]*",
    "[]a]",
    "[!]a]",
    "[a-]",
    "[-a]",
    "[a\\]]",
    "\\*",
    "a\\",
    "\\",
    "*\\",
    "a*b*c",
    "*a*a*a*b",
    "?*?",
    "*?",
    "[",
    "[a",
    "[!a",
    "[]",
    "[!]",
    "[[]",
    "[[:alpha:]]*",
    "[[:digit:][:upper:]]",
    "[![:space:]]",
    "[[:foo:]]",
    "x[[:foo:]]",
    "[[:alpha]",
    "[[:Alpha:]]",
    "[[.a.]]",
    "[[.ab.]]",
    "[[=a=]]",
    "[[=a]",
    "[[.a.]-c]",
    "[a-[.c.]]",
    "[z-a]",
    "[\\a-\\c]",
    "[a-\\]",
    "[--0]",
    "[a-]]",
    "*[",
    "**x**",
    "[ab",
    "[[:alpha:]-z]",
    "[[=a=]-z]",
    "\xc3\xa9*",
    "[\x80-\xff]*",
    "*\xc3",
    "[[:xdigit:]]",
    "[[:punct:]]",
    "[[:cntrl:]]",
    "[[:graph:]]",
    "[[:print:]]",
    "[[:blank:]]",
    "[[:lower:]]",
    "[[:alnum:]]",
    "[[:::]]",
    "[[::]]",
    "[[:a:]",
    "[a[:b]",
    "[a-b-c]",
    "[.]",
    "[[.].]]",
    "[[",
    "[[ab",
    "[[.a.]-]",
    "[[.a.]-a]",
    "[[:z:]]",
    "[[=a=]",
    "[a[=b=]",
    "[a\\",
    "[a[=b",
    "[a[.b",
    "[a[=bc=]",
    "[a[.bc.]",
    "[a[:alpha",
    "[a[:zz:]",
};
static const char *const strings[] = {
    "",
    "a",
    "b",
    "c",
    "z",
    "-",
    "]",
    "[",
    "\\",
    "*",
    "?",
    "!",
    "^",
    ".",
    ":",
    "=",
    "0",
    "5",
    " ",
    "\t",
    "A",
    "x",
    "ab",
    "abc",
    "aab",
    "aaab",
    "aXaYaZb",
    "png_read",
    "libpng.so",
    "libc.so.6",
    "libxml2.so.2",
    "main",
    "stack_beta_alloc",
    "__strdup",
    "worker-3",
    "worker-x",
    "[a",
    "[!a",
    "[]",
    "a\\",
    "\xc3\xa9t\xc3\xa9",
    "\xc3",
    "\x80",
    "\x7f",
    "\x01",
    "_",
    "@",
    "[ab",
};

/* Random patterns of these pieces. */
static const char *const pieces[] = {
    "a",       "b",      "z",      "-",     "]",   "[",  "!",    "^",         "\\",
    "*",       "?",      ":",      ".",     "=",   "0",  "\xc3", "[:alpha:]", "[:digit:]",
    "[:foo:]", "[=a=]",  "[.a.]",  "[.-.]", "a-z", "[!", "[^",   "[]",        "[:z:]",
    "[:az:]",  "[.a.]-", "-[.z.]", "[=z=]", "\\]", "[:",
};
static const char bytes[] = "abz-][!^\\*?:.=0 \xc3\x80";

static uint64_t rng = 0x243f6a8885a308d3ULL;
static unsigned next(unsigned bound)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % bound);
}

/* glob_match must not allocate: this test's malloc counts, glibc's serves
 * (exported: the build hides symbols by default). Not under AddressSanitizer,
 * whose runtime owns malloc and must initialise before any call to it. */
static bool counting;
static size_t allocs;
#if defined(__SANITIZE_ADDRESS__)
#define COUNTS_ALLOCATIONS 0
#else
#define COUNTS_ALLOCATIONS 1
#define EXPORT             __attribute__((visibility("default")))
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

EXPORT void *malloc(size_t n)
{
	allocs += counting;
	return __libc_malloc(n);
}

EXPORT void *calloc(size_t n, size_t size)
{
	allocs += counting;
	return __libc_calloc(n, size);
}

EXPORT void *realloc(void *p, size_t n)
{
	allocs += counting;
	return __libc_realloc(p, n);
}
#endif

int main(void)
{
	unsetenv("POSIXLY_CORRECT"); /* which makes fnmatch refuse '^' */
	setlocale(LC_ALL, "C");

	CHECK(glob_match("png_*", "png_read"));
	CHECK(!glob_match("png_*", "libpng_read"));
	CHECK(glob_match("*", ""));
	CHECK(glob_match("a*/b", "a/x/b")); /* no FNM_PATHNAME */
	CHECK(glob_match("*", ".hidden"));  /* no FNM_PERIOD */
	CHECK(glob_match("worker-[!0-9]", "worker-x"));
	CHECK(glob_match("worker-[^0-9]", "worker-x"));
	CHECK(!glob_match("worker-[^0-9]", "worker-7"));
	CHECK(glob_match("[]a]", "]"));
	CHECK(glob_match("\\*", "*"));
	CHECK(!glob_match("\\*", "x"));
	CHECK(!glob_match("a\\", "a\\")); /* a trailing '\' never matches */
	CHECK(glob_match("[a", "[a"));    /* an unclosed '[' is a byte */
	CHECK(glob_match("[[:digit:]]x", "7x"));
	CHECK(!glob_match("[[:foo:]]", "f"));
	CHECK(glob_match("caf\xc3\xa9*", "caf\xc3\xa9_au_lait"));
	CHECK(glob_match("caf?\xa9", "caf\xc3\xa9")); /* bytes, not characters */

	/* Every pattern against the strings, and against every pattern as a
	 * string (an unclosed '[' is an ordinary byte). */
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++)
			same(patterns[i], strings[k]);
		for (size_t k = 0; k < sizeof(patterns) / sizeof(patterns[0]); k++)
			same(patterns[i], patterns[k]);
	}
	CHECK(mismatches == 0);

	int runs = 0;
	for (int r = 0; r < 400000; r++) {
		char pat[64] = "", s[16];
		size_t len = 0;
		for (unsigned k = 0, np = 1 + next(6); k < np; k++) {
			const char *piece = pieces[next(sizeof(pieces) / sizeof(pieces[0]))];
			size_t pl = strlen(piece);
			if (len + pl >= sizeof(pat))
				break;
			memcpy(pat + len, piece, pl + 1);
			len += pl;
		}
		unsigned ns = next(6);
		for (unsigned k = 0; k < ns; k++)
			s[k] = bytes[next(sizeof(bytes) - 1)];
		s[ns] = '\0';
		same(pat, s);
		runs++;
	}
	fprintf(stderr, "%d random pairs\n", runs);
	CHECK(mismatches == 0);

	/* In a UTF-8 locale glibc's fnmatch allocates (the control: the
	 * counter works); glob_match must not. */
	char pat[2000] = "nomatch*[[:alpha:]]?[!a-z]\xc3\xa9", name[2000] = "worker-thread-name";
	/* glibc converts on the stack while that is small, and allocates
	 * beyond: make the control long enough. (A short one allocates too,
	 * once per locale, in mbsrtowcs's converter set-up.) */
	memset(pat + strlen(pat), '*', 1500);
	memset(name + strlen(name), 'x', 1500);
	CHECK(setlocale(LC_ALL, "C.UTF-8") != NULL);
	if (!COUNTS_ALLOCATIONS) {
		fprintf(stderr, "allocations not counted under AddressSanitizer\n");
		return CHECK_DONE();
	}
	counting = true;
	bool hit = fnmatch(pat, name, 0) == 0;
	size_t by_fnmatch = allocs;
	allocs = 0;
	for (int i = 0; i < 1000; i++)
		hit |= glob_match(pat, name);
	counting = false;
	fprintf(stderr, "allocations: fnmatch %zu, glob_match %zu\n", by_fnmatch, allocs);
	CHECK(!hit);
	CHECK(by_fnmatch > 0);
	CHECK(allocs == 0);
	return CHECK_DONE();
}
