/*
 * log.c - the shim's messages and where they go (GFP_LOG).
 *
 * Every message is formatted into a stack buffer and leaves with one
 * write(2) through dest.c, so it is never interleaved with another thread's,
 * never allocates and keeps errno.
 */
#include <errno.h> /* program_invocation_short_name */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "log.h"
#include "dest.h"

#define LOG_LINE_MAX 4096

static struct gfp_dest out = {.var = "GFP_LOG", .fd = STDERR_FILENO, .log = true};

int log_set_dest(const char *dest, bool secure, char *err, size_t errlen)
{
	if (!dest || !*dest)
		return 0;
	return gfp_dest_set(&out, "GFP_LOG", GFP_DEST_APPEND, dest, secure, err, errlen);
}

void gfp_log_raw(const char *p, size_t n)
{
	(void)gfp_dest_write(&out, p, n);
}

bool gfp_log_private(void)
{
	return gfp_dest_private(&out);
}

/* The program's name, its control bytes quoted: a file named with an
 * escape sequence must not drive the terminal that shows the log. */
static char comm[64];

static void comm_quote(void)
{
	gfp_quote(comm, sizeof(comm), program_invocation_short_name,
	          strlen(program_invocation_short_name));
}

const char *gfp_comm(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, comm_quote);
	return comm;
}

void gfp_log(enum gfp_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
	    "gfpshim: error: ", "gfpshim: warning: ", "gfpshim: info: "};
	char line[LOG_LINE_MAX];
	struct gfp_buf b = {line, sizeof(line) - 1, 0};
	gfp_buf_printf(&b, "%s", prefix[level]);
	va_list ap;
	va_start(ap, fmt);
	b.len += (size_t)gfp_vsnprintf(line + b.len, b.cap - b.len, fmt, ap);
	va_end(ap);
	if (b.len > b.cap - 1)
		b.len = b.cap - 1;
	line[b.len++] = '\n';
	gfp_log_raw(line, b.len);
}
