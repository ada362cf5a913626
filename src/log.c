/*
 * log.c - the shim's messages and where they go (GFP_LOG).
 *
 * Every message is formatted into a stack buffer and leaves with one
 * write(2) through dest.c, so it is never interleaved with another thread's,
 * never allocates and keeps errno.
 */
#include "dest.h"
#include "dest_set.h"
#include "log.h"

int log_set_dest(const char *dest, bool secure, char *err, size_t errlen)
{
	if (!dest || !*dest)
		return 0;
	return gfp_dest_set(&gfp_dest_log, "GFP_LOG", GFP_DEST_APPEND, dest, secure, err, errlen);
}

void gfp_log_raw(const char *p, size_t n)
{
	(void)gfp_dest_write(&gfp_dest_log, p, n);
}

bool gfp_log_private(void)
{
	return gfp_dest_private(&gfp_dest_log);
}

void gfp_log(enum gfp_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
	    "gfpshim: error: ", "gfpshim: warning: ", "gfpshim: info: "};
	va_list ap;
	va_start(ap, fmt);
	gfp_dest_vsay(prefix[level], fmt, ap);
	va_end(ap);
}
