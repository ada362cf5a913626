/* Small pure parts of the slow path's reports and of background reclaim:
 * a request's page order (src/canary.c: canary_order, the kernel's
 * get_order), the canary's rounds in words (canary_rounds), and kswapd's
 * watermarks (src/kswapd.c: kswapd_marks, after the kernel's
 * __setup_per_zone_wmarks: min_free plus the larger of a quarter of it and
 * watermark_scale_factor's share of the limit). */
#include <stdint.h>

#include "check.h"
#include "canary.h"
#include "init.h"
#include "meaning.h"
#include "kswapd.h"

int main(void)
{
	CHECK(canary_order(0) == 0);
	CHECK(canary_order(1) == 0);
	CHECK(canary_order(4096) == 0);
	CHECK(canary_order(4097) == 1);
	CHECK(canary_order(8192) == 1);
	CHECK(canary_order(8193) == 2);
	CHECK(canary_order(32768) == 3); /* PAGE_ALLOC_COSTLY_ORDER */
	CHECK(canary_order(32769) == 4);
	CHECK(canary_order((size_t)1 << 30) == 18);
	CHECK(canary_order(SIZE_MAX) == 52); /* no wrap: 2^52 pages */

	char buf[32];
	CHECK_STR(canary_rounds(1, buf, sizeof(buf)), "1 round");
	CHECK_STR(canary_rounds(0, buf, sizeof(buf)), "0 rounds");
	CHECK_STR(canary_rounds(17, buf, sizeof(buf)), "17 rounds");

	config_defaults(&gfp_policy);
	int64_t wake, high, mib = 1 << 20;
	/* A quarter of min_free is the larger: low = min + min/4, high = min + min/2. */
	gfp_policy.kswapd_scale = 10; /* 0.1 % of the limit */
	kswapd_marks(1000 * mib, 100 * mib);
	kswapd_watermarks(&wake, &high);
	CHECK(wake == 1000 * mib - 125 * mib);
	CHECK(high == 1000 * mib - 150 * mib);
	/* The scale's share is the larger: 10 % of 1000 MiB. */
	gfp_policy.kswapd_scale = 1000;
	kswapd_marks(1000 * mib, 100 * mib);
	kswapd_watermarks(&wake, &high);
	int64_t scaled = 1000 * mib / 10000 * 1000; /* about 100 MiB */
	CHECK(scaled > 100 * mib / 4);
	CHECK(wake == 1000 * mib - (100 * mib + scaled));
	CHECK(high == 1000 * mib - (100 * mib + 2 * scaled));
	/* Never past the limit: high stops at it, and low at high. */
	kswapd_marks(100 * mib, 90 * mib);
	kswapd_watermarks(&wake, &high);
	CHECK(high == 0 && wake == 0);
	return CHECK_DONE();
}
