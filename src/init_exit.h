/*
 * init_exit.h - init_exit.c: the report at the program's own _exit.
 */
#ifndef GFP_INIT_EXIT_H
#define GFP_INIT_EXIT_H

#pragma GCC visibility push(hidden)

/* The program's own _exit: the process that read the configuration writes
 * its report as exit would (dash and daemons end so); a fork's or vfork's
 * child, which read none, writes nothing. */
void init_fini_exit(void);

#pragma GCC visibility pop

#endif /* GFP_INIT_EXIT_H */
