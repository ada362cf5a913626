/*
 * infile.h - the files the tools read, each whole: records, reports,
 * results, a campaign and its state.
 */
#ifndef GFP_TOOLS_INFILE_H
#define GFP_TOOLS_INFILE_H

#include <stddef.h>

/* The whole file, NUL-terminated, its length in *len (if len is not NULL);
 * NULL with errno set when it cannot be read. Out of memory exits 2. */
char *infile_read(const char *path, size_t *len);
/* The same from fd's offset to its end (fd stays open). */
char *infile_read_fd(int fd, size_t *len);

#endif
