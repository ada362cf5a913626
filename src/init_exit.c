/*
 * init_exit.c - the report at the program's own _exit (preload/start.c) or
 * at ctl=1's fatal refusal (ctl.c), for the process that read the
 * configuration. Apart from init.c, which stops ctl.c at the end, so that
 * ctl.c does not call back into it; it must call nothing but the report.
 */
#include <unistd.h>

#include "init_exit.h"
#include "init_once.h"
#include "stats.h"
#include "thread.h"

void init_fini_exit(void)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != INIT_DONE || getpid() != init_pid)
		return;
	gfp_tls.guard++;
	stats_report_at_exit();
	gfp_tls.guard--;
}
