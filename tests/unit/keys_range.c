/* Every row of src/keys.def refuses what lies outside it: a number one past
 * its bounds, a word that is none of its choices, a probability over 1, a
 * boolean that is neither, a flag name that does not exist, a string too
 * long for its slot. (keys.c checks that every default parses.) */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy.h"

static char v[sizeof(struct gfp_str)] __attribute__((aligned(8)));

static int parse(const struct gfp_key *k, const char *text)
{
	const char *expect;
	int r = config_parse_value(k, text, strlen(text), v, &expect);
	return r;
}

static void refuses(const struct gfp_key *k, const char *text)
{
	if (parse(k, text) == 0) {
		fprintf(stderr, "key %s: '%s' parsed, out of its range\n", k->name, text);
		CHECK(!"a value out of range parsed");
	}
}

static void takes(const struct gfp_key *k, const char *text)
{
	if (parse(k, text) != 0) {
		fprintf(stderr, "key %s: '%s' refused, within its range\n", k->name, text);
		CHECK(!"a value within range was refused");
	}
}

int main(void)
{
	unsigned numeric = 0, bounded = 0;
	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		const struct gfp_key *k = &gfp_keys[i];
		char num[32];
		switch (k->type) {
		case GFP_T_COUNT:
		case GFP_T_SIZE:
		case GFP_T_MS:
			numeric++;
			/* MS keys take up to 1e15 ms: beyond, the bound is the parser's. */
			if (k->max < INT64_MAX &&
			    (k->type != GFP_T_MS || k->max < 1000000000000000)) {
				snprintf(num, sizeof(num), "%" PRId64, k->max + 1);
				refuses(k, num);
				snprintf(num, sizeof(num), "%" PRId64, k->max);
				takes(k, num);
				bounded++;
			}
			if (k->min > 0) {
				snprintf(num, sizeof(num), "%" PRId64, k->min - 1);
				refuses(k, num);
				snprintf(num, sizeof(num), "%" PRId64, k->min);
				takes(k, num);
				bounded++;
			}
			refuses(k, "-");
			refuses(k, "12x");
			break;
		case GFP_T_PROB:
			refuses(k, "1.5");
			refuses(k, "101%");
			refuses(k, "-0.1");
			takes(k, "1");
			takes(k, "0");
			takes(k, "50%");
			break;
		case GFP_T_BOOL:
			refuses(k, "2");
			refuses(k, "maybe");
			takes(k, "yes");
			takes(k, "off");
			break;
		case GFP_T_ENUM: {
			refuses(k, "no-such-choice");
			/* every choice named in the table parses */
			const char *c = k->choices;
			while (c && *c) {
				const char *bar = strchr(c, '|');
				size_t len = bar ? (size_t)(bar - c) : strlen(c);
				char w[64];
				snprintf(w, sizeof(w), "%.*s", (int)len, c);
				takes(k, w);
				c = bar ? bar + 1 : NULL;
			}
			break;
		}
		case GFP_T_FLAGS:
			refuses(k, "NOSUCHFLAG");
			refuses(k, "NOFS|NOIO");
			takes(k, "NOFS|NOFAIL");
			break;
		case GFP_T_STR: {
			char long_value[sizeof(struct gfp_str) + 1];
			memset(long_value, 'a', sizeof(long_value) - 1);
			long_value[sizeof(long_value) - 1] = '\0';
			refuses(k, long_value);
			if (k->max == GFP_STR_HEX)
				refuses(k, "not-hex");
			break;
		}
		}
	}
	/* The loop saw the numeric keys and some bounds: an empty table, or
	 * one without bounds, would pass nothing here. */
	CHECK(numeric > 10);
	CHECK(bounded > 5);
	return CHECK_DONE();
}
