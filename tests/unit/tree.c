/*
 * The OOM victim's badness in a tree (tree_oom_badness), against
 * the kernel's oom_badness: points = rss + oom_score_adj * totalpages / 1000,
 * the tree's limit standing for totalpages; -1000 is never chosen, whatever
 * it holds; -999 may be, and its points may be negative. The process-level
 * choice is tests/tree/oom.sh (and oom_min.sh where -1000 can be set).
 */
#include "check.h"
#include "tree.h"

#define MiB (1024LL * 1024)

int main(void)
{
	int64_t p = 0, limit = 64 * MiB;
	CHECK(!tree_oom_badness(1024 * MiB, -1000, limit, &p));
	CHECK(!tree_oom_badness(0, -1000, limit, &p));
	CHECK(tree_oom_badness(32 * MiB, 0, limit, &p) && p == 32 * MiB);
	/* B of tests/tree/oom.sh: 20 MiB at 600 beats A's 32 MiB at 0. */
	int64_t a = 0, b = 0;
	CHECK(tree_oom_badness(32 * MiB, 0, limit, &a));
	CHECK(tree_oom_badness(20 * MiB, 600, limit, &b) && b == 20 * MiB + 600 * (limit / 1000));
	CHECK(b > a);
	/* -999 may still be chosen: the only candidate wins with negative points. */
	CHECK(tree_oom_badness(1 * MiB, -999, limit, &p) && p == 1 * MiB - 999 * (limit / 1000) &&
	      p < 0);
	/* +1000 outweighs the whole limit's worth of bytes elsewhere. */
	CHECK(tree_oom_badness(0, 1000, limit, &p) && p >= limit - 1000);
	return CHECK_DONE();
}
