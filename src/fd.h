/*
 * fd.h - fd.c: where the shim's own descriptors go, and what a file is.
 */
#ifndef GFP_FD_H
#define GFP_FD_H

#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* fd moved to the shim's own numbers (see fd.c), the old one closed;
 * errno kept. -1 only for a standard descriptor (0-2) that cannot move. */
int gfp_fd_lift(int fd);
/* "a directory", "a FIFO", ...: what a path is, for messages. */
const char *gfp_fd_type(mode_t mode);

#pragma GCC visibility pop

#endif /* GFP_FD_H */
