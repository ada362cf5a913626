/*
 * fork.c - the fork handlers: the locks a fork must not split are taken
 * before it (the unwinder's and kswapd's first) and released after, and
 * the child sets up its own counts, threads and helpers again. Installed
 * once the configuration is read (init.c).
 */
#include <pthread.h>

#include "internal.h"
#include "pool.h"
#include "cgroup.h"
#include "fork.h"
#include "kswapd.h"
#include "unwind_reserve.h"
#include "vmstat.h"
#include "mapped.h"
#include "ipcache.h"
#include "init_once.h"

static void fork_prepare(void)
{
	unwind_setup_atfork_prepare();
	unwind_atfork_prepare(); /* before any lock: an unwinder may take them */
	kswapd_atfork_prepare(); /* first: its round takes the locks below */
	init_atfork_prepare();
	thread_atfork_prepare();
	mapped_atfork_prepare();
}

static void fork_parent(void)
{
	mapped_atfork_parent();
	thread_atfork_parent();
	init_atfork_parent();
	kswapd_atfork_parent();
	unwind_atfork_parent();
}

static void fork_child(void)
{
	unwind_setup_atfork_child();
	unwind_atfork_child();
	unwind_reserve_atfork_child();
	kswapd_atfork_child();
	cgroup_atfork_child();
	vmstat_atfork_child();
	mapped_atfork_child(); /* before the budget's sums and the tree's slot */
	thread_life_atfork_child();
	/* Before the budget publishes to a slot. */
	tree_atfork_child(gfp_tree_on ? budget_process_live() : 0);
	budget_atfork_child();
	inject_atfork_child();
	reclaim_atfork_child();
	ipcache_atfork_child();
	profile_report_atfork_child();
	pool_atfork_child();
	init_atfork_child();
}

void fork_handlers_install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
