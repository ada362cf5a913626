/* Small pure parts of the destinations: the words messages give a file's
 * type (src/fd.c: gfp_fd_type), and the hash a parent names a value by in
 * GFP_INHERITED (src/dest_inherit.c: FNV-1a of VAR=value). */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "dest_inherit.h"
#include "fd.h"

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

int main(void)
{
	CHECK_STR(gfp_fd_type(S_IFDIR | 0755), "a directory");
	CHECK_STR(gfp_fd_type(S_IFIFO | 0600), "a FIFO");
	CHECK_STR(gfp_fd_type(S_IFSOCK), "a socket");
	CHECK_STR(gfp_fd_type(S_IFCHR), "a character device");
	CHECK_STR(gfp_fd_type(S_IFBLK), "a block device");
	CHECK_STR(gfp_fd_type(S_IFLNK | 0777), "a symbolic link");
	CHECK_STR(gfp_fd_type(S_IFREG), "not a file"); /* asked only of what is not one */

	CHECK(gfp_dest_inherit_hash("GFP_LOG", "/tmp/log") == fnv1a("GFP_LOG=/tmp/log"));
	CHECK(gfp_dest_inherit_hash("GFP_REPORT", "") == fnv1a("GFP_REPORT="));
	/* The variable is part of it: one value under two names differs. */
	CHECK(gfp_dest_inherit_hash("GFP_LOG", "x") != gfp_dest_inherit_hash("GFP_RECORD", "x"));
	CHECK(gfp_dest_inherit_hash("GFP_LOG", "a=b") == gfp_dest_inherit_hash("GFP_LOG=a", "b"));
	return CHECK_DONE();
}
