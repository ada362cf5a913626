/*
 * demangle.c - function names as people read them: a C++ name demangled
 * (libstdc++'s __cxa_demangle, each name once), and a long one cut the way
 * the console shows it (demangle.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "text.h"
#include "tool.h"

/* The C++ ABI's demangler, libstdc++'s (<cxxabi.h> declares it for C++
 * only): GCC's own, the one eu-addr2line -C and the sanitizers use. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Names demangled, each once (a hash table, open addressing), freed with
 * the modules. */
struct demangled {
	char *mangled, *plain;
};
static struct demangled *names;
static size_t nnames, names_cap;

static size_t name_hash(const char *s)
{
	size_t h = 14695981039346656037ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The table at twice its entries, at least. */
static void names_grow(void)
{
	if (2 * (nnames + 1) <= names_cap)
		return;
	size_t cap = names_cap ? 2 * names_cap : 256;
	struct demangled *t = xcalloc(cap, sizeof(*t));
	for (size_t i = 0; i < names_cap; i++)
		if (names[i].mangled) {
			size_t j = name_hash(names[i].mangled) & (cap - 1);
			while (t[j].mangled)
				j = (j + 1) & (cap - 1);
			t[j] = names[i];
		}
	free(names);
	names = t;
	names_cap = cap;
}

const char *demangle_name(const char *name)
{
	/* The Itanium C++ ABI's prefix (GCC's and Clang's, Rust's older
	 * scheme too); a clone's suffix (".cold", ".isra.0") the demangler
	 * spells " [clone .cold]". */
	if (!name || strncmp(name, "_Z", 2) != 0)
		return name;
	names_grow();
	size_t j = name_hash(name) & (names_cap - 1);
	for (; names[j].mangled; j = (j + 1) & (names_cap - 1))
		if (strcmp(names[j].mangled, name) == 0)
			return names[j].plain ? names[j].plain : name;
	int status = -1;
	char *plain = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(plain);
		plain = NULL;
	}
	names[j] = (struct demangled){xstrdup(name), plain};
	nnames++;
	return plain ? plain : name;
}

/* At name[i], an operator's own angle brackets ("operator<<",
 * "operator->*", "operator<=>"): how many bytes they are, else 0. */
static size_t operator_angles(const char *name, size_t i)
{
	static const char op[] = "operator";
	size_t k = sizeof(op) - 1;
	if (i < k || strncmp(name + i - k, op, k) != 0)
		return 0;
	if (i > k && (isalnum((unsigned char)name[i - k - 1]) || name[i - k - 1] == '_'))
		return 0;
	return strspn(name + i, "<>=-*");
}

/* in with each outermost template argument list cut to "<...>"; false when
 * its brackets do not balance (out then unused). out has room for
 * 2 * strlen(in) + 8 bytes. */
static bool cut_templates(const char *in, char *out)
{
	size_t o = 0;
	int depth = 0;
	for (size_t i = 0; in[i];) {
		size_t op = operator_angles(in, i);
		if (op) {
			if (!depth)
				memcpy(out + o, in + i, op), o += op;
			i += op;
			continue;
		}
		char c = in[i++];
		if (c == '<' && depth++ == 0) {
			memcpy(out + o, "<...", 4);
			o += 4;
		} else if (c == '>' && depth > 0) {
			if (--depth == 0)
				out[o++] = '>';
		} else if (c == '>') {
			return false;
		} else if (!depth) {
			out[o++] = c;
		}
	}
	out[o] = '\0';
	return depth == 0;
}

/* s's last parameter list, the last "(...)" outside any other bracket, cut
 * to "(...)" in place; false when it has none. */
static bool cut_parameters(char *s)
{
	int depth = 0;
	char *open = NULL, *close = NULL, *cur = NULL;
	for (char *p = s; *p; p++) {
		if (strchr("([{", *p)) {
			if (depth++ == 0 && *p == '(')
				cur = p;
		} else if (strchr(")]}", *p) && depth > 0) {
			if (--depth == 0 && *p == ')' && cur) {
				open = cur, close = p;
				cur = NULL;
			}
		}
	}
	if (!open || close - open <= 4)
		return false;
	memmove(open + 4, close, strlen(close) + 1);
	memcpy(open + 1, "...", 3);
	return true;
}

void demangle_short(const char *name, char *out, size_t n, size_t *len)
{
	name = demangle_name(name);
	size_t nl = strlen(name);
	if (nl <= DEMANGLE_SHORT_MAX) {
		text_append(out, n, len, "%s", name);
		return;
	}
	char *s = xcalloc(1, 2 * nl + 8);
	if (!cut_templates(name, s))
		strcpy(s, name);
	if (strlen(s) > DEMANGLE_SHORT_LONGEST)
		cut_parameters(s);
	size_t sl = strlen(s);
	if (sl > DEMANGLE_SHORT_LONGEST) {
		/* On a character's start: the cut keeps UTF-8 whole. */
		sl = DEMANGLE_SHORT_LONGEST - 3;
		while (sl && ((unsigned char)s[sl] & 0xc0) == 0x80)
			sl--;
		strcpy(s + sl, "...");
	}
	text_append(out, n, len, "%s", s);
	free(s);
}

void demangle_symbol(const char *symbol, char *out, size_t n, size_t *len)
{
	/* "name+0x1c": a mangled name has no '+', a demangled one may
	 * (operator+), so the offset is the last "+0x". */
	const char *plus = NULL;
	for (const char *p = strstr(symbol, "+0x"); p; p = strstr(p + 1, "+0x"))
		plus = p;
	if (!plus || plus == symbol) {
		demangle_short(symbol, out, n, len);
		return;
	}
	char *name = xcalloc(1, (size_t)(plus - symbol) + 1);
	memcpy(name, symbol, (size_t)(plus - symbol));
	demangle_short(name, out, n, len);
	free(name);
	text_append(out, n, len, "%s", plus);
}

void demangle_free(void)
{
	for (size_t i = 0; i < names_cap; i++) {
		free(names[i].mangled);
		free(names[i].plain);
	}
	free(names);
	names = NULL;
	nnames = names_cap = 0;
}
