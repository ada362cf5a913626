/* Sizes as people read them (src/policy/libc.c: gfp_human_size): bytes below a
 * KiB, then tenths of the largest binary unit that keeps the figure under
 * 10240 tenths, rounded; negative figures keep their sign. */
#include <stdint.h>

#include "check.h"
#include "policy.h"

int main(void)
{
	static const struct {
		int64_t bytes;
		const char *text;
	} cases[] = {
	    {0, "0 B"},
	    {1, "1 B"},
	    {1023, "1023 B"},
	    {1024, "1.0 KiB"},
	    {1536, "1.5 KiB"},
	    {1024 * 1024 - 1, "1.0 MiB"}, /* 1023.999 KiB rounds up */
	    {1024 * 1024 - 52, "1023.9 KiB"},
	    {8 * 1024 * 1024, "8.0 MiB"},
	    {(int64_t)3 << 30, "3.0 GiB"},
	    {(int64_t)5 << 40, "5.0 TiB"},
	    {(int64_t)7 << 50, "7.0 PiB"},
	    {(int64_t)1 << 60, "1.0 EiB"},
	    {INT64_MAX, "8.0 EiB"}, /* past 1.6 EiB, bytes * 10 would wrap */
	    {(int64_t)15 << 58, "3.8 EiB"},
	    {INT64_MIN, "-8.0 EiB"},
	    {-1, "-1 B"},
	    {-2048, "-2.0 KiB"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[GFP_HUMAN_LEN];
		CHECK_STR(gfp_human_size(out, cases[i].bytes), cases[i].text);
	}
	return CHECK_DONE();
}
