/*
 * libc.c - the few libc services the shim needs, written so that they never
 * allocate, take no locks and are async-signal-safe.
 *
 * The shim runs inside malloc, inside ld.so and inside signal handlers, where
 * stdio may be locked or may call malloc itself. Must never: call malloc,
 * stdio, locale functions, or anything that can block on a lock.
 */
#include <errno.h>
#include <unistd.h>

#include "policy.h"

/* ------------------------------------------------------------------------
 * A small vsnprintf: %d %i %u %x %X %p %s %c %% with the l, ll, z, j
 * length modifiers, '-' and '0' flags, width and precision (number or '*').
 * ---------------------------------------------------------------------- */
struct out {
	char *buf;
	size_t n, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->n)
		o->buf[o->len] = c;
	o->len++;
}

static void put_padded(struct out *o, const char *s, size_t len, int width, bool left, char pad)
{
	int fill = width > (int)len ? width - (int)len : 0;
	if (!left)
		for (; fill > 0; fill--)
			put(o, pad);
	for (size_t i = 0; i < len; i++)
		put(o, s[i]);
	for (; fill > 0; fill--)
		put(o, ' ');
}

static size_t utoa(char *end, unsigned long long v, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	size_t n = 0;
	do {
		*--end = digits[v % base];
		v /= base;
		n++;
	} while (v);
	return n;
}

int gfp_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
	struct out o = {buf, n, 0};
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f++;
		bool left = false, alt = false;
		char pad = ' ';
		for (;; f++) {
			if (*f == '-')
				left = true;
			else if (*f == '#')
				alt = true;
			else if (*f == '0')
				pad = '0';
			else
				break;
		}
		int width = 0, prec = -1;
		if (*f == '*') {
			width = va_arg(ap, int);
			f++;
		} else {
			while (*f >= '0' && *f <= '9')
				width = width * 10 + (*f++ - '0');
		}
		if (*f == '.') {
			f++;
			prec = 0;
			if (*f == '*') {
				prec = va_arg(ap, int);
				f++;
			} else {
				while (*f >= '0' && *f <= '9')
					prec = prec * 10 + (*f++ - '0');
			}
		}
		int lng = 0; /* 0 int, 1 long, 2 long long, 3 size_t/intmax */
		for (;; f++) {
			if (*f == 'l')
				lng++;
			else if (*f == 'z' || *f == 'j' || *f == 't')
				lng = 3;
			else
				break;
		}
		char tmp[32], *end = tmp + sizeof(tmp);
		size_t len;
		switch (*f) {
		case 'd':
		case 'i': {
			long long v = lng == 0   ? va_arg(ap, int)
			              : lng == 1 ? va_arg(ap, long)
			              : lng == 2 ? va_arg(ap, long long)
			                         : (long long)va_arg(ap, ssize_t);
			unsigned long long u =
			    v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
			len = utoa(end, u, 10, false);
			if (v < 0) {
				if (pad == '0') {
					put(&o, '-');
					width = width > 0 ? width - 1 : 0;
				} else {
					*(end - len - 1) = '-';
					len++;
				}
			}
			put_padded(&o, end - len, len, width, left, pad);
			break;
		}
		case 'u':
		case 'x':
		case 'X': {
			unsigned long long v = lng == 0   ? va_arg(ap, unsigned)
			                       : lng == 1 ? va_arg(ap, unsigned long)
			                       : lng == 2 ? va_arg(ap, unsigned long long)
			                                  : (unsigned long long)va_arg(ap, size_t);
			len = utoa(end, v, *f == 'u' ? 10 : 16, *f == 'X');
			if (alt && *f != 'u' && v) {
				*(end - len - 1) = *f;
				*(end - len - 2) = '0';
				len += 2;
			}
			put_padded(&o, end - len, len, width, left, pad);
			break;
		}
		case 'p': {
			len = utoa(end, (uintptr_t)va_arg(ap, void *), 16, false);
			*(end - len - 1) = 'x';
			*(end - len - 2) = '0';
			put_padded(&o, end - len - 2, len + 2, width, left, ' ');
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			size_t sl = 0;
			while (s[sl] && (prec < 0 || sl < (size_t)prec))
				sl++;
			put_padded(&o, s, sl, width, left, ' ');
			break;
		}
		case 'c':
			tmp[0] = (char)va_arg(ap, int);
			put_padded(&o, tmp, 1, width, left, ' ');
			break;
		case '%':
			put(&o, '%');
			break;
		default: /* unknown conversion: print it, never guess at varargs */
			put(&o, '%');
			if (*f)
				put(&o, *f);
			else
				f--;
			break;
		}
	}
	if (n)
		buf[o.len < n ? o.len : n - 1] = '\0';
	return (int)o.len;
}

int gfp_snprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = gfp_vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

void gfp_buf_printf(struct gfp_buf *b, const char *fmt, ...)
{
	if (b->len + 1 >= b->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int r = gfp_vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)r;
	if (b->len > b->cap - 1)
		b->len = b->cap - 1;
}

void gfp_buf_json_str(struct gfp_buf *b, const char *s)
{
	gfp_buf_printf(b, "\"");
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			gfp_buf_printf(b, "\\%c", c);
		else if (c < 0x20)
			gfp_buf_printf(b, "\\u%04x", c);
		else
			gfp_buf_printf(b, "%c", c);
	}
	gfp_buf_printf(b, "\"");
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Compares the n bytes of `a` with the NUL-terminated `b`, ignoring case. */
int gfp_strcasecmp_n(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	for (; i < n && b[i]; i++)
		if (lower(a[i]) != lower(b[i]))
			return lower(a[i]) - lower(b[i]);
	if (i < n)
		return 1;
	return b[i] ? -1 : 0;
}

/* Optimal string alignment distance (Levenshtein plus adjacent swaps), for
 * did-you-mean. Key names are short; longer inputs are not worth a guess. */
unsigned gfp_edit_distance(const char *a, size_t alen, const char *b, size_t blen)
{
	enum { MAX = 48 };
	if (alen >= MAX || blen >= MAX)
		return ~0u;
	unsigned d[MAX][MAX];
	for (size_t i = 0; i <= alen; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= blen; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= alen; i++) {
		for (size_t j = 1; j <= blen; j++) {
			unsigned cost = lower(a[i - 1]) != lower(b[j - 1]);
			unsigned v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[alen][blen];
}

bool gfp_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* ------------------------------------------------------------------------
 * Quoting what users wrote, and naming errors
 * ---------------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at s (at most n bytes) that
 * encodes a printable character, or 0: overlong forms, surrogates, code
 * points past U+10FFFF and the C1 controls (U+0080..U+009F, which act on
 * terminals as ESC does) are not. */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	if (s[0] < 0xc2 || s[0] > 0xf4 || n < len)
		return 0;
	unsigned cp = s[0] & (0x3f >> (len - 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < 0xa0 || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void gfp_buf_quote(struct gfp_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n && b->len + 1 < b->cap;) {
		size_t len = u[i] >= 0x80 ? utf8_printable(u + i, n - i) : 1;
		size_t room = b->cap - 1 - b->len;
		if (u[i] < 0x20 || u[i] == 0x7f || len == 0) {
			if (room < 4)
				break; /* never half an escape */
			gfp_buf_printf(b, "\\x%02x", u[i]);
			i++;
			continue;
		}
		if (room < len)
			break; /* nor half a character */
		for (size_t k = 0; k < len; k++)
			b->p[b->len++] = (char)u[i + k];
		i += len;
	}
	if (b->cap)
		b->p[b->len < b->cap ? b->len : b->cap - 1] = '\0';
}

const char *gfp_quote(char *out, size_t cap, const char *s, size_t n)
{
	struct gfp_buf b = {out, cap, 0};
	if (cap)
		out[0] = '\0';
	gfp_buf_quote(&b, s, n);
	return out;
}

const char *gfp_human_size(char out[GFP_HUMAN_LEN], int64_t bytes)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	uint64_t v = bytes < 0 ? -(uint64_t)bytes : (uint64_t)bytes;
	const char *sign = bytes < 0 ? "-" : "";
	if (v < 1024) {
		gfp_snprintf(out, GFP_HUMAN_LEN, "%s%llu B", sign, (unsigned long long)v);
		return out;
	}
	unsigned u = 0;
	/* tenths of the unit, rounded: 1023.96 KiB reads "1.0 MiB"; v * 10
	 * would wrap from 1.6 EiB up, so the whole KiB and the rest apart */
	uint64_t tenths = v / 1024 * 10 + (v % 1024 * 10 + 512) / 1024;
	while (tenths >= 10240 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		tenths = (tenths + 512) / 1024;
		u++;
	}
	gfp_snprintf(out, GFP_HUMAN_LEN, "%s%llu.%llu %s", sign, (unsigned long long)(tenths / 10),
	             (unsigned long long)(tenths % 10), unit[u]);
	return out;
}

const char *gfp_strerror(int err)
{
	/* glibc's texts: strerror itself may translate them, which allocates. */
	static const struct {
		int err;
		const char *text;
	} texts[] = {
	    {EPERM, "Operation not permitted"},
	    {ENOENT, "No such file or directory"},
	    {EINTR, "Interrupted system call"},
	    {EIO, "Input/output error"},
	    {ENXIO, "No such device or address"},
	    {EBADF, "Bad file descriptor"},
	    {EAGAIN, "Resource temporarily unavailable"},
	    {ENOMEM, "Cannot allocate memory"},
	    {EACCES, "Permission denied"},
	    {EEXIST, "File exists"},
	    {ENOTDIR, "Not a directory"},
	    {EISDIR, "Is a directory"},
	    {EINVAL, "Invalid argument"},
	    {ENFILE, "Too many open files in system"},
	    {EMFILE, "Too many open files"},
	    {ETXTBSY, "Text file busy"},
	    {EFBIG, "File too large"},
	    {ENOSPC, "No space left on device"},
	    {EROFS, "Read-only file system"},
	    {EPIPE, "Broken pipe"},
	    {ENAMETOOLONG, "File name too long"},
	    {ELOOP, "Too many levels of symbolic links"},
	    {ESTALE, "Stale file handle"},
	    {EDQUOT, "Disk quota exceeded"},
	    {ECONNRESET, "Connection reset by peer"},
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (texts[i].err == err)
			return texts[i].text;
	return "Unknown error";
}
