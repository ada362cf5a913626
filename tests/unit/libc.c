/* The allocation-free formatter and the flag names, against expectations
 * (and against glibc's snprintf where both must agree). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy.h"

#define SAME(...)                                                                                  \
	do {                                                                                       \
		char a[128], b[128];                                                               \
		gfp_snprintf(a, sizeof(a), __VA_ARGS__);                                           \
		snprintf(b, sizeof(b), __VA_ARGS__);                                               \
		CHECK_STR(a, b);                                                                   \
	} while (0)

int main(void)
{
	SAME("%d %i %u", -42, 7, 42u);
	SAME("%ld %lu %lld %llu", -1L, 2UL, -3LL, 4ULL);
	SAME("%zu %zd", (size_t)123456789, (ssize_t)-5);
	SAME("%x %X %lx %#x", 255u, 255u, 0xdeadbeefUL, 0u);
	SAME("[%5d] [%-5d] [%05d] [%-8s] [%8s]", 42, 42, -42, "ab", "cd");
	SAME("%.3s|%.*s|%s", "abcdef", 2, "xyz", "");
	SAME("%p", (void *)0x1234);
	SAME("%c%%%c", 'a', 'b');
	SAME("%10zu|%-3u|", (size_t)5, 7u);

	char small[8];
	int n = gfp_snprintf(small, sizeof(small), "%s", "0123456789");
	CHECK(n == 10);
	CHECK_STR(small, "0123456");

	char buf[64];
	struct gfp_buf b = {buf, sizeof(buf), 0};
	gfp_buf_json_str(&b, "a\"b\\c\n");
	buf[b.len] = '\0';
	CHECK_STR(buf, "\"a\\\"b\\\\c\\u000a\"");

	gfp_flags_name(GFP_KERNEL, buf, sizeof(buf));
	CHECK_STR(buf, "KERNEL");
	gfp_flags_name(GFP_NOFS | GFP_NOFAIL | GFP_NOWARN, buf, sizeof(buf));
	CHECK_STR(buf, "NOFS|NOFAIL|NOWARN");
	gfp_flags_name(GFP_ATOMIC, buf, sizeof(buf));
	CHECK_STR(buf, "ATOMIC");
	gfp_flags_name(GFP_NOWAIT | GFP_HIGH, buf, sizeof(buf));
	CHECK_STR(buf, "ATOMIC"); /* the same bits */
	gfp_flags_name(GFP_NOIO | GFP_RETRY_MAYFAIL, buf, sizeof(buf));
	CHECK_STR(buf, "NOIO|RETRY_MAYFAIL");
	gfp_flags_name(GFP_KERNEL | 0x1000000u, buf, sizeof(buf));
	CHECK_STR(buf, "KERNEL|0x1000000");
	/* HIGH is part of ATOMIC only: elsewhere a modifier. */
	gfp_flags_name(GFP_KERNEL | GFP_HIGH, buf, sizeof(buf));
	CHECK_STR(buf, "KERNEL|HIGH");
	gfp_flags_name(GFP_NOIO | GFP_HIGH | GFP_NOFAIL, buf, sizeof(buf));
	CHECK_STR(buf, "NOIO|NOFAIL|HIGH");
	/* Hex spells known bits only; spaces around '|' are fine. */
	gfp_t f;
	const char *bad;
	size_t badlen;
	CHECK(gfp_flags_parse("0xffffffff", 10, &f, &bad, &badlen) == -1);
	CHECK(gfp_flags_parse("0x10cc0", 7, &f, &bad, &badlen) == 0 &&
	      f == (GFP_KERNEL | GFP_NORETRY));
	CHECK(gfp_flags_parse("NOFS | NOFAIL", 13, &f, &bad, &badlen) == 0 &&
	      f == (GFP_NOFS | GFP_NOFAIL));

	CHECK(gfp_edit_distance("stat", 4, "stats", 5) == 1);
	CHECK(gfp_edit_distance("sttas", 5, "stats", 5) == 1);
	CHECK(gfp_strcasecmp_n("NOFS", "nofs", 4) == 0);
	CHECK(gfp_strcasecmp_n("NOF", "nofs", 3) != 0);
	return CHECK_DONE();
}
