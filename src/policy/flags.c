/*
 * flags.c - gfp flags as names and bits, both ways.
 *
 * Names are the kernel's without the leading underscores, printed the way
 * %pGg prints them: the base context first, then the modifiers.
 */
#include "policy.h"

struct flag_name {
	const char *name;
	gfp_t bits;
};

/* Base contexts, most bits first so that printing picks KERNEL over NOFS. */
static const struct flag_name bases[] = {
    {"KERNEL", GFP_KERNEL}, {"NOFS", GFP_NOFS},     {"NOIO", GFP_NOIO},
    {"ATOMIC", GFP_ATOMIC}, {"NOWAIT", GFP_NOWAIT},
};

static const struct flag_name modifiers[] = {
    {"NORETRY", GFP_NORETRY},
    {"RETRY_MAYFAIL", GFP_RETRY_MAYFAIL},
    {"NOFAIL", GFP_NOFAIL},
    {"NOWARN", GFP_NOWARN},
    {"HIGH", GFP_HIGH},
    {"MEMALLOC", GFP_MEMALLOC},
    {"NOMEMALLOC", GFP_NOMEMALLOC},
    {"ZERO", GFP_ZERO},
};

#define BASE_MASK (GFP_KERNEL | GFP_ATOMIC)

/* Every bit a name stands for: hex may spell those, and no others. */
static gfp_t known_bits(void)
{
	gfp_t bits = BASE_MASK;
	for (size_t i = 0; i < sizeof(modifiers) / sizeof(modifiers[0]); i++)
		bits |= modifiers[i].bits;
	return bits;
}

size_t gfp_flags_name(gfp_t flags, char *buf, size_t n)
{
	struct gfp_buf b = {buf, n, 0};
	gfp_t base = flags & BASE_MASK, rest = flags & ~BASE_MASK;
	/* HIGH belongs to the base only in ATOMIC; elsewhere it is a modifier
	 * (KERNEL|HIGH, not a mix of reclaim bits). */
	if (base != GFP_ATOMIC && (base & GFP_HIGH)) {
		base &= ~GFP_HIGH;
		rest |= GFP_HIGH;
	}
	const char *sep = "";
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (base == bases[i].bits) {
			gfp_buf_printf(&b, "%s", bases[i].name);
			sep = "|";
			base = 0;
			break;
		}
	}
	if (base) /* an unusual mix of reclaim bits: keep them as hex */
		rest |= base;
	/* ATOMIC already carries HIGH; do not print it twice. */
	if ((flags & BASE_MASK) == GFP_ATOMIC)
		rest &= ~GFP_HIGH;
	for (size_t i = 0; i < sizeof(modifiers) / sizeof(modifiers[0]); i++) {
		if (rest & modifiers[i].bits) {
			gfp_buf_printf(&b, "%s%s", sep, modifiers[i].name);
			sep = "|";
			rest &= ~modifiers[i].bits;
		}
	}
	if (rest || !*sep)
		gfp_buf_printf(&b, "%s%#x", sep, rest);
	if (n)
		buf[b.len] = '\0';
	return b.len;
}

static int lookup(const struct flag_name *t, size_t count, const char *w, size_t len, gfp_t *bits)
{
	for (size_t i = 0; i < count; i++) {
		if (gfp_strcasecmp_n(w, t[i].name, len) == 0) {
			*bits = t[i].bits;
			return 0;
		}
	}
	return -1;
}

static bool parse_hex(const char *s, size_t len, gfp_t *out)
{
	if (len < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	uint64_t v = 0;
	for (size_t i = 2; i < len; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
		             : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
		             : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
		                                    : 16u;
		if (d > 15 || v > 0xffffffffu)
			return false;
		v = v * 16 + d;
	}
	if (v > 0xffffffffu)
		return false;
	*out = (gfp_t)v;
	return true;
}

int gfp_flags_parse(const char *s, size_t len, gfp_t *out, const char **bad, size_t *badlen)
{
	gfp_t flags = 0;
	int nbase = 0;
	size_t i = 0;
	while (i <= len) {
		size_t start = i;
		while (i < len && s[i] != '|')
			i++;
		const char *w = s + start;
		size_t wl = i - start;
		while (wl && (*w == ' ' || *w == '\t'))
			w++, wl--;
		while (wl && (w[wl - 1] == ' ' || w[wl - 1] == '\t'))
			wl--;
		/* Accept the C spelling too: GFP_NOFS. */
		if (wl > 4 && gfp_strcasecmp_n(w, "GFP_", 4) == 0)
			w += 4, wl -= 4;
		gfp_t bits;
		if (parse_hex(w, wl, &bits) && !(bits & ~known_bits())) {
			if (bits & BASE_MASK)
				nbase++;
			flags |= bits;
		} else if (lookup(bases, sizeof(bases) / sizeof(bases[0]), w, wl, &bits) == 0) {
			nbase++;
			flags |= bits;
		} else if (lookup(modifiers, sizeof(modifiers) / sizeof(modifiers[0]), w, wl,
		                  &bits) == 0) {
			flags |= bits;
		} else {
			*bad = w;
			*badlen = wl;
			return -1;
		}
		i++;
	}
	/* At most one base context; a bare modifier ("NORETRY") means KERNEL's. */
	if (nbase > 1) {
		*bad = s;
		*badlen = len;
		return -2;
	}
	if (nbase == 0)
		flags |= GFP_KERNEL;
	*out = flags;
	return 0;
}
