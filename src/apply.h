/*
 * apply.h - apply.c: a policy put in force.
 */
#ifndef GFP_APPLY_H
#define GFP_APPLY_H

#pragma GCC visibility push(hidden)

/* gfp_meaning from gfp_policy, and the modules set up to it: at start-up
 * and after each gfp-ctl set. */
void apply_policy(void);

#pragma GCC visibility pop

#endif /* GFP_APPLY_H */
