/*
 * glob.c - the shell patterns of fail.sym, fail.lib, fail.reject.*,
 * fail.thread and GFP_RULES' sym:, lib: and thread: matchers.
 *
 * glob_match() answers what fnmatch(pattern, string, 0) answers in the C
 * locale, byte by byte: '*' and '?' (a '/' and a leading '.' are ordinary
 * bytes), '\' quotes the next byte, and a bracket [...] takes '!' or '^' to
 * negate, ranges a-z, a leading ']' as a member, the ASCII classes
 * [:alpha:] and the one-byte forms [.c.] and [=c=]. An unclosed '[' is an
 * ordinary byte. It must never allocate, take a lock or look at the locale:
 * it runs inside malloc. (glibc's fnmatch converts both strings to wide
 * characters in a UTF-8 locale, which allocates, and an allocation there
 * ran the same filter again until the stack overflowed.) Non-ASCII bytes
 * only ever match themselves, '?', '*' or a range that spans them.
 *
 * glibc 2.36's answers to malformed patterns are kept (tests/unit/glob.c
 * compares with fnmatch): a trailing '\' never matches, nor a bracket with
 * an unknown class name or a collating symbol longer than one byte.
 */
#include <stdbool.h>
#include <stddef.h>

#include "glob.h"

/* glibc gives up on a class name this long. */
#define CLASS_MAX 256

enum { B_MISS, B_HIT, B_LITERAL, B_FAIL };

static bool in_class(const char *name, size_t len, unsigned char c, bool *known)
{
	static const struct {
		const char *name;
		size_t len;
	} names[] = {{"alnum", 5}, {"alpha", 5}, {"blank", 5}, {"cntrl", 5},
	             {"digit", 5}, {"graph", 5}, {"lower", 5}, {"print", 5},
	             {"punct", 5}, {"space", 5}, {"upper", 5}, {"xdigit", 6}};
	bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
	bool digit = c >= '0' && c <= '9', graph = c > ' ' && c < 0x7f;
	bool is[] = {upper || lower || digit,
	             upper || lower,
	             c == ' ' || c == '\t',
	             c < ' ' || c == 0x7f,
	             digit,
	             graph,
	             lower,
	             graph || c == ' ',
	             graph && !(upper || lower || digit),
	             c == ' ' || (c >= '\t' && c <= '\r'),
	             upper,
	             digit || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].len != len)
			continue;
		size_t k = 0;
		while (k < len && names[i].name[k] == name[k])
			k++;
		if (k == len) {
			*known = true;
			return is[i];
		}
	}
	*known = false;
	return false;
}

/* A collating symbol's body after "[.", up to ".]": its length, or -1 when
 * it never closes; *end is past the "]". */
static long symbol(const char *p, const char **end)
{
	long len = 0;
	for (;; p++, len++) {
		if (!*p)
			return -1;
		if (p[0] == '.' && p[1] == ']')
			break;
	}
	*end = p + 2;
	return len;
}

/* The rest of a bracket that already matched, with the same view of its
 * members as the scan: past the closing ']', or NULL when it never closes
 * (then its '[' is an ordinary byte after all). */
static const char *bracket_rest(const char *p)
{
	for (;;) {
		unsigned char c = (unsigned char)*p++;
		if (c == ']')
			return p;
		if (!c)
			return NULL;
		if (c == '\\') {
			if (!*p)
				return NULL;
			p++;
		} else if (c == '[' && *p == ':') {
			const char *q = p;
			for (int len = 1;; len++) {
				c = (unsigned char)*++q;
				if (len == CLASS_MAX)
					return NULL;
				if (q[0] == ':' && q[1] == ']') {
					p = q + 2;
					break;
				}
				if (c < 'a' || c >= 'z')
					break; /* not a class: '[' was a member, go on at ':' */
			}
		} else if (c == '[' && *p == '=') {
			if (!p[1] || p[2] != '=' || p[3] != ']')
				return NULL;
			p += 4;
		} else if (c == '[' && *p == '.') {
			if (symbol(p + 1, &p) < 0)
				return NULL;
		}
	}
}

/* The bracket at p (past its '[') against byte fn. *next is past the
 * bracket when it matched (B_HIT). */
static int bracket(const char *p, unsigned char fn, const char **next)
{
	bool negate = *p == '!' || *p == '^';
	p += negate;
	unsigned char c = (unsigned char)*p++;
	for (;;) {
		unsigned char lo;
		bool range;
		if (c == '\\') {
			if (!*p)
				return B_FAIL;
			c = (unsigned char)*p++;
			goto member;
		} else if (c == '[' && *p == ':') {
			const char *name = p + 1, *q = name;
			while (!(q[0] == ':' && q[1] == ']')) {
				if (q - name == CLASS_MAX)
					return B_FAIL;
				if ((unsigned char)*q < 'a' || (unsigned char)*q >= 'z')
					goto member; /* not a class name: '[' is a member */
				q++;
			}
			bool known;
			bool hit = in_class(name, (size_t)(q - name), fn, &known);
			if (!known)
				return B_FAIL;
			p = q + 2;
			if (hit)
				goto matched;
			c = (unsigned char)*p++;
		} else if (c == '[' && *p == '=') {
			if (!p[1] || p[2] != '=' || p[3] != ']')
				goto member; /* "[=" that is not [=c=]: '[' is a member */
			unsigned char eq = (unsigned char)p[1];
			p += 4;
			if (eq == fn)
				goto matched;
			c = (unsigned char)*p++;
		} else if (!c) {
			return B_LITERAL;
		} else {
			if (c == '[' && *p == '.') {
				const char *start = p + 1;
				if (symbol(start, &p) != 1)
					return B_FAIL; /* the C locale names no longer symbols */
				range = *p == '-' && p[1];
				lo = (unsigned char)*start;
			} else {
			member:
				range = *p == '-' && p[1] && p[1] != ']';
				lo = c;
			}
			if (!range && lo == fn)
				goto matched;
			c = (unsigned char)*p++;
			if (c == '-' && *p != ']') {
				unsigned char hi = (unsigned char)*p++;
				if (hi == '[' && *p == '.') {
					const char *start = p + 1;
					if (symbol(start, &p) != 1)
						return B_FAIL;
					hi = (unsigned char)*start;
				} else {
					if (hi == '\\')
						hi = (unsigned char)*p++;
					if (!hi)
						return B_FAIL;
				}
				if (lo <= fn && fn <= hi)
					goto matched;
				c = (unsigned char)*p++;
			}
		}
		if (c == ']')
			break;
	}
	*next = p;
	return negate ? B_HIT : B_MISS;
matched:
	if (negate)
		return B_MISS;
	*next = bracket_rest(p);
	return *next ? B_HIT : B_LITERAL;
}

/* One element of the pattern at *p (not '*') against the byte *n (not the
 * end): on a match, *p moves past the element. */
static bool match_one(const char **p, unsigned char fn)
{
	const char *q = *p;
	switch (*q) {
	case '?':
		*p = q + 1;
		return true;
	case '\\':
		if (!q[1] || (unsigned char)q[1] != fn)
			return false; /* a trailing '\' never matches */
		*p = q + 2;
		return true;
	case '[':
		switch (bracket(q + 1, fn, p)) {
		case B_HIT:
			return true;
		case B_LITERAL:
			if (fn != '[')
				return false;
			*p = q + 1;
			return true;
		default:
			return false;
		}
	default:
		if ((unsigned char)*q != fn)
			return false;
		*p = q + 1;
		return true;
	}
}

/* Whether `string` matches the shell pattern `pattern`, as fnmatch(3) with
 * no flags in the C locale. Never allocates. Any context may call it.
 *
 * Without FNM_PATHNAME a '*' may take any bytes, so only the last '*' seen
 * needs to be tried again: on a mismatch it takes one byte more. */
bool glob_match(const char *pattern, const char *string)
{
	const char *p = pattern, *n = string;
	const char *star_p = NULL, *star_n = NULL;
	for (;;) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			if (!*p)
				return true;
			star_p = p;
			star_n = n;
			continue;
		}
		if (!*p) {
			if (!*n)
				return true;
		} else if (*n && match_one(&p, (unsigned char)*n)) {
			n++;
			continue;
		}
		if (!star_p || !*star_n)
			return false;
		p = star_p;
		n = ++star_n;
	}
}
