/*
 * comm.c - the program's name as messages print it, its control bytes
 * quoted: a file named with an escape sequence must not drive the terminal
 * that shows the log.
 */
#include <errno.h> /* program_invocation_short_name */
#include <pthread.h>
#include <string.h>

#include "policy.h"
#include "comm.h"

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
