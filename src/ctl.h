/*
 * ctl.h - ctl.c: a policy that changes while the program runs, through the
 * control socket (ctl=1).
 */
#ifndef GFP_CTL_H
#define GFP_CTL_H

#pragma GCC visibility push(hidden)

void ctl_start(void);
void ctl_stop(void);

#pragma GCC visibility pop

#endif /* GFP_CTL_H */
