/*
 * keeper.h - a run and everything it starts end together (gfp-sweep).
 */
#ifndef GFP_TOOLS_KEEPER_H
#define GFP_TOOLS_KEEPER_H

#include <signal.h>
#include <sys/types.h>

/* In a child just forked by `parent`, with SIGINT, SIGTERM and SIGHUP
 * blocked: becomes the run's keeper, a child subreaper that forks the run
 * (which sets run_mask, leads a process group of its own and calls
 * start(arg), which execs or _exits), waits for it, kills and reaps every
 * process the run left behind, daemons included (they are reparented to
 * the keeper), and then ends as the run ended (its exit status, or its
 * signal, without a core). SIGTERM from `parent`, or its death, kills the
 * run and all it started at once: the keeper then dies by SIGKILL. */
void keeper_run(pid_t parent, const sigset_t *run_mask, void (*start)(void *), void *arg)
    __attribute__((noreturn));

#endif
