/*
 * comm.h - comm.c: the program's name as messages print it.
 */
#ifndef GFP_COMM_H
#define GFP_COMM_H

#pragma GCC visibility push(hidden)

/* The program's name as messages print it (control bytes quoted). */
const char *gfp_comm(void);

#pragma GCC visibility pop

#endif /* GFP_COMM_H */
